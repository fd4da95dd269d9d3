"""Requests beyond --max-num-seqs: the timings and the queue as tables."""

from __future__ import annotations

from verify.jobs.lifecycle import max_num_seqs_queue as job
from verify.site import html


def fragment_table(record):
    d = record["data"]
    rows = [[i + 1, f"{x['ttft']:.2f} s", f"{x['e2e']:.2f} s", x["tokens"]] for i, x in enumerate(job.request_timings(d))]
    return html.table(["request (by first text)", "first text after", "last event after", "text chunks"], rows)


def fragment_queue(record):
    samples = record["data"]["samples"]
    shown = [s for i, s in enumerate(samples) if i == 0 or
             (s["num_requests_running"], s["num_requests_waiting"]) !=
             (samples[i - 1]["num_requests_running"], samples[i - 1]["num_requests_waiting"])]
    return html.table(["time", "running", "waiting"],
                      [[f"{s['t']:.2f} s", f"{s['num_requests_running']:.0f}", f"{s['num_requests_waiting']:.0f}"]
                       for s in shown])


FRAGMENTS = {"timings": fragment_table, "queue": fragment_queue}
