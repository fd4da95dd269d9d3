"""Prefill and decode article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable

from tests.rules._records import data_times


def _reverse_over_lengths(runs: list[dict], *path: str) -> None:
    """The value at path in each run, given to the runs of the mirror-image prompt length: the shortest
    prompt gets the longest prompt's values and so on, so a rising trend falls."""
    by_length: dict[int, list[dict]] = {}
    for run in runs:
        by_length.setdefault(run["prompt_tokens"] if "prompt_tokens" in run else run["sentences"], []).append(run)
    groups = [by_length[k] for k in sorted(by_length)]

    def get(run):
        for key in path[:-1]:
            run = run[key]
        return run, path[-1]
    values = [[get(r)[0][get(r)[1]] for r in g] for g in groups]
    for group, mirrored in zip(groups, reversed(values)):
        for run, value in zip(group, mirrored):
            holder, key = get(run)
            holder[key] = value


def requests_served_one_after_another(d: dict) -> None:
    """batching.throughput-rises: no batching. The requests sent together are served one at a time, each
    taking as long as it did: each request's lines arrive after the requests before it have finished."""
    for run in d["runs"]:
        wait = 0.0
        for request in sorted(run["requests"], key=lambda r: data_times(r["lines"])[-1]):
            for line in request["lines"]:
                line["t"] = round(line["t"] + wait, 4)
            wait = data_times(request["lines"])[-1]


def batch_steps_as_fast_as_one(d: dict) -> None:
    """batching.itl-rises: a batch costs each request nothing: in the largest batch, every request's tokens
    come as far apart as in the fastest round of one request alone (so no further round could make it rise)."""
    from verify.jobs.prefill_decode import _sweep
    one, top = min(run["concurrency"] for run in d["runs"]), max(run["concurrency"] for run in d["runs"])
    alone = min(_sweep.request_figures(r)["itl"] for run in d["runs"] if run["concurrency"] == one
                for r in run["requests"])
    for run in d["runs"]:
        if run["concurrency"] != top:
            continue
        for request in run["requests"]:
            factor = alone / _sweep.request_figures(request)["itl"]
            start = data_times(request["lines"])[0]
            for line in request["lines"]:
                if line["t"] > start:
                    line["t"] = round(start + (line["t"] - start) * factor, 4)


def decode_slows_with_context(d: dict) -> None:
    """prompt-length-sweep.itl-flat: each generated token costs more as the context grows: the longest
    prompt's inter-token latency is half as long again as the shortest's."""
    shortest = min(r["sentences"] for r in d["runs"])
    longest = max(r["sentences"] for r in d["runs"])
    base = sorted(r["itl"] for r in d["runs"] if r["sentences"] == shortest)
    for run in d["runs"]:
        if run["sentences"] == longest:
            run["itl"] = base[len(base) // 2] * 1.5


def ttft_falls_with_length(d: dict) -> None:
    """prompt-length-sweep.ttft-grows: TTFT falls as prompts grow (the lengths' TTFTs in mirror order)."""
    _reverse_over_lengths(d["runs"], "ttft")


def prefill_falls_with_length(d: dict) -> None:
    """prompt-length-sweep.prefill-grows: the engine's own prefill time falls as prompts grow."""
    _reverse_over_lengths(d["runs"], "server", "request_prefill_time_seconds_sum")


def prefill_one_token_per_step(d: dict) -> None:
    """prompt-length-sweep.prompt-token-cheaper: prefill works one token per step, as decode does: each
    request's TTFT is its prompt length times its own inter-token latency."""
    for run in d["runs"]:
        run["ttft"] = run["prompt_tokens"] * run["itl"]


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "batching.throughput-rises": requests_served_one_after_another,
    "batching.itl-rises": batch_steps_as_fast_as_one,
    "prompt-length-sweep.itl-flat": decode_slows_with_context,
    "prompt-length-sweep.ttft-grows": ttft_falls_with_length,
    "prompt-length-sweep.prefill-grows": prefill_falls_with_length,
    "prompt-length-sweep.prompt-token-cheaper": prefill_one_token_per_step,
}
