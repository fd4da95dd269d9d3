"""The raw SSE wire format, captured with the page's own curl commands, with arrival times.

The four ways of running curl run in interleaved rounds of up to TRIALS. A way of writing the output
(terminal or pipe) stops being run once the runs still to come could not move either median
spread across BURST_S, whatever they measure (two runs at the earliest: one leaves the median of
three unbounded). That is checked before every run, and each round runs the command without -N
first: once its median is settled above BURST_S the verdict is "no burst" whatever the runs with
-N would measure, and they are not run. The chat transcript is the page's command into a pipe, so
it is also the first run with -N into a pipe. The record keeps why the rounds stopped, and a rule
given fewer runs than settle it is inconclusive.
"""

from __future__ import annotations

import copy
import json
import os

from verify.job import Claim, Job, verdict_if
from verify.measure.transcript import arrival_spread, chunks, payloads

SNIPPETS = ("streaming/curl_chat_stream.sh", "streaming/curl_completions_stream.sh")
TRIALS = 3
# "One burst": the lines of a stream arrive within this many seconds of each other.
BURST_S = 0.02


def _run(ctx, script: str, terminal: bool, drop_n: bool = False) -> dict:
    from verify.measure.commands import timed_output
    source = ctx.snippet_path(script).read_text()
    if drop_n:
        # The page's "change one thing": the same command without -N.
        source = source.replace("curl -N ", "curl ", 1)
    env = {**os.environ, "BASE_URL": ctx.base_url}
    return timed_output(["bash", "-c", source], env, terminal=terminal)


# Without -N first in each mode: its runs alone can settle "no burst" (see _side).
VARIANTS = (("without_n_pipe", False, True), ("with_n_pipe", False, False),
            ("without_n_terminal", True, True), ("with_n_terminal", True, False))


MODES = ("pipe", "terminal")


def collect(ctx) -> dict:
    data = {"chat": _run(ctx, SNIPPETS[0], terminal=False),
            "completions": _run(ctx, SNIPPETS[1], terminal=False),
            "runs": {key: [] for key, _, _ in VARIANTS}}
    # The transcript is the same command into a pipe: the first round's run with -N into a pipe.
    data["runs"]["with_n_pipe"].append(copy.deepcopy(data["chat"]))
    for round_ in range(TRIALS):  # interleaved, so drift in server speed hits every variant alike
        for key, terminal, drop in VARIANTS:
            # A run is skipped once the runs so far fix its mode's verdict, whatever the rest measure.
            if len(data["runs"][key]) > round_ or _side(data, key.rsplit("_", 1)[1]) is not None:
                continue
            data["runs"][key].append(_run(ctx, SNIPPETS[0], terminal=terminal, drop_n=drop))
    data["stopped"] = {"rounds": max(len(runs) for runs in data["runs"].values()), "max_rounds": TRIALS,
                       "why": "; ".join(f"{m}: {_side(data, m) or 'open'}" for m in MODES)}
    return data


def _median_bounds(xs: list[float]) -> tuple[float, float]:
    """The least and greatest _median that TRIALS runs could have, these among them."""
    rest = max(0, TRIALS - len(xs))
    return upper_median(list(xs) + [float("-inf")] * rest), upper_median(list(xs) + [float("inf")] * rest)


def _side(d, mode) -> str | None:
    """Whether the runs still to come could change the mode's verdict: "burst" or "no burst" once, whatever
    they measure, the medians of TRIALS runs stay where they are; None while the runs so far leave it open."""
    sp = spreads(d)
    without, with_n = sp[f"without_n_{mode}"], sp[f"with_n_{mode}"]
    if not without or not with_n or None in without or None in with_n:
        return None
    (w_lo, w_hi), (n_lo, n_hi) = _median_bounds(without), _median_bounds(with_n)
    if w_hi <= BURST_S and n_lo > BURST_S:
        return "burst"
    if w_lo > BURST_S or n_hi <= BURST_S:
        return "no burst"
    return None


def spreads(d) -> dict[str, list[float | None]]:
    """Per way of running curl, the spread of line arrivals of every run (recomputed from the raw lines)."""
    return {key: [arrival_spread(run["lines"]) for run in runs] for key, runs in d["runs"].items()}


def upper_median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def decide_framing(d):
    problems = []
    for name in ("chat", "completions"):
        lines = [item["line"] for item in d[name]["lines"]]
        data = payloads(d[name]["lines"])
        if not data or data[-1] != "[DONE]":
            problems.append(f"{name}: last event is not data: [DONE]")
        for p in data[:-1]:
            json.loads(p)  # raises (and so decides inconclusive) if a payload is not JSON
        events = [line for line in lines if line]
        if any(not e.startswith("data: ") for e in events):
            problems.append(f"{name}: a non-data line appeared")
        # Every data line is followed by an empty line.
        for i, line in enumerate(lines):
            if line.startswith("data: ") and (i + 1 >= len(lines) or lines[i + 1] != ""):
                problems.append(f"{name}: event {i} is not followed by a blank line")
                break
    n = len(payloads(d["chat"]["lines"]))
    return verdict_if(not problems, "; ".join(problems) or
                      f"every event of both streams is one 'data: ' line of JSON and a blank line; "
                      f"both end with the literal data: [DONE] ({n} chat events)")


def decide_text_fields(d):
    chat = chunks(d["chat"]["lines"])
    comp = chunks(d["completions"]["lines"])
    chat_ok = all("delta" in c["choices"][0] and "text" not in c["choices"][0] for c in chat if c["choices"])
    comp_ok = all("text" in c["choices"][0] and "delta" not in c["choices"][0] for c in comp if c["choices"])
    return verdict_if(chat_ok and comp_ok, f"chat chunks carry choices[0].delta ({'yes' if chat_ok else 'no'}); "
                      f"completions chunks carry choices[0].text ({'yes' if comp_ok else 'no'})")


def _burst(d, mode):
    sp = spreads(d)
    runs = min(len(sp[f"without_n_{mode}"]), len(sp[f"with_n_{mode}"]))
    if runs < TRIALS and _side(d, mode) is None:
        return verdict_if(None, f"{mode}: {runs} of up to {TRIALS} interleaved runs each, which do not settle the "
                                f"median spreads against {BURST_S * 1000:.0f} ms")
    without = upper_median(sp[f"without_n_{mode}"])
    with_n = upper_median(sp[f"with_n_{mode}"])
    n_without, n_with = len(sp[f"without_n_{mode}"]), len(sp[f"with_n_{mode}"])
    each = f"{TRIALS} interleaved runs each" if runs >= TRIALS else (
        f"{runs} interleaved runs each, of up to {TRIALS}: the rest could not have changed the verdict"
        if n_without == n_with else
        f"{n_without} interleaved runs without -N and {n_with} with -N, of up to {TRIALS} each: the rest could "
        f"not have changed the verdict")
    return verdict_if(without <= BURST_S and with_n > BURST_S,
                      f"{mode}: median spread of line arrivals {without * 1000:.0f} ms without -N, "
                      f"{with_n * 1000:.0f} ms with -N ({each}; burst means <= {BURST_S * 1000:.0f} ms)")


JOB = Job(
    id="wire-format",
    title="The raw SSE wire format, with and without curl -N",
    question="What exactly does vLLM send on a stream, and does dropping curl's -N make the lines arrive in one burst?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("wire-format.sse-framing", "Each event is a 'data: ' line of JSON followed by a blank line; "
              "the stream ends with the literal line data: [DONE], which is not JSON.", decide_framing),
        Claim("wire-format.text-fields", "Chat chunks carry text in choices[0].delta.content, "
              "completions chunks in choices[0].text.", decide_text_fields),
        Claim("wire-format.no-n-terminal-burst", "In a terminal, curl without -N shows the stream in one burst.",
              lambda d: _burst(d, "terminal"), timing=True),
        Claim("wire-format.no-n-pipe-burst", "Into a pipe, curl without -N delivers the stream in one burst.",
              lambda d: _burst(d, "pipe"), timing=True),
    ),
)
