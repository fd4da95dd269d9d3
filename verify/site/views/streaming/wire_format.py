"""Views of wire-format."""

from __future__ import annotations

from verify.jobs.streaming import wire_format as job
from verify.site import html


def fragment_transcript(name):
    def render_it(record):
        lines = record["data"][name]["lines"]
        return html.timed_transcript(lines, f"curl -N, /v1/{'chat/completions' if name == 'chat' else 'completions'}: "
                                            "each line with its arrival time")
    return render_it


def fragment_spread(record):
    d = job.spreads(record["data"])
    rows = []
    for key, label in (("with_n_terminal", "-N, in a terminal"), ("without_n_terminal", "no -N, in a terminal"),
                       ("with_n_pipe", "-N, into a pipe"), ("without_n_pipe", "no -N, into a pipe")):
        rows.append([label, html.ms(job.upper_median(d[key])), ", ".join(html.ms(x) for x in d[key])])
    return html.table(["curl output goes", "median spread (first to last data: line)", "every run"], rows)


FRAGMENTS = {"chat-transcript": fragment_transcript("chat"),
             "completions-transcript": fragment_transcript("completions"),
             "buffering-table": fragment_spread}
