"""The concurrency sweep two pages read: batching (Prefill vs Decode) and throughput (Cost per Token).

At each of CONCURRENCY, that many identical streaming requests of MAX_TOKENS tokens start together
(the snippet lifecycle/send_together.py, as Lifecycle of a Request shows it); the levels run in up to
ROUNDS interleaved rounds. One sweep serves both jobs in a run: the first of them to run on the
server measures it, and the rounds stop once the stopping rule its reader passes in is settled (both
pass _sweep_settled.settled, which waits until no verdict of either job could change); the other job is
given the same data, and each record holds all of it (`measured_by` names the job that ran the requests).
The sweep imports none of its readers.
"""

from __future__ import annotations

import copy

SNIPPET = "lifecycle/send_together.py"
CONCURRENCY = (1, 2, 4, 8)
ROUNDS = 3
MAX_TOKENS = 64
_SHARED_KEY = "concurrency sweep"


def measure(ctx, job_id: str, settled) -> dict:
    """The sweep's data: measured now, or as the other reader measured it on this server in this run.

    settled(d): the stopping rule read after each round, a dict whose "settled" ends the rounds."""
    from verify.measure import capture
    from verify.measure.metrics import wait_idle
    snippet = ctx.snippet(SNIPPET)  # declared by every reader: its data came from this snippet
    shared = getattr(ctx, "shared", None)  # one dict per server start (verify/runner/context.py)
    if shared is not None and _SHARED_KEY in shared:
        return copy.deepcopy(shared[_SHARED_KEY])
    d: dict = {"measured_by": job_id, "max_tokens": MAX_TOKENS, "runs": []}
    for _ in range(ROUNDS):
        for n in CONCURRENCY:
            wait_idle(ctx.server.url)
            results = snippet.send_together(ctx.base_url, n, MAX_TOKENS)
            # Each request: the status and timed lines the snippet read (an empty dict if its thread failed).
            d["runs"].append({"concurrency": n, "requests": [
                capture.results("sse", [x for x in r.get("lines", []) if x["line"].startswith("data: ")],
                                statuses=[r.get("status")], **r) for r in results]})
        d["stopped"] = settled(d)
        if d["stopped"]["settled"]:
            break
    if shared is not None:
        shared[_SHARED_KEY] = copy.deepcopy(d)
    return d


def rounds(d) -> int:
    """The rounds every level ran."""
    return min(sum(1 for r in d["runs"] if r["concurrency"] == n) for n in CONCURRENCY)


def request_figures(r) -> dict:
    """One request's first and last data line (s after the requests were sent) and mean gap between them."""
    times = [x["t"] for x in r["lines"] if x["line"].startswith("data: {")]
    return {"first": times[0], "last": times[-1], "itl": (times[-1] - times[0]) / (len(times) - 1)}


def run_throughput(run: dict) -> float:
    """Tokens per second of one run: every request's MAX_TOKENS over the time the last request's last line came.

    ignore_eos makes every answer MAX_TOKENS long; a request whose stream did not end for that reason
    (finish_reason "length") makes the count wrong, and the figure is refused."""
    from verify.measure import sse_line
    for i, r in enumerate(run["requests"]):
        ends = [c["choices"][0].get("finish_reason") for x in r["lines"] if '"finish_reason":"' in
                x["line"].replace(" ", "") and (c := sse_line.chunk(x["line"])) is not None]
        if ends[-1:] != ["length"]:
            raise ValueError(f"at {run['concurrency']} at once, request {i + 1} did not run to max_tokens "
                             f"(finish_reason {ends[-1] if ends else None!r})")
    return run["concurrency"] * MAX_TOKENS / max(request_figures(r)["last"] for r in run["requests"])


def per_run(d, n: int) -> tuple[list[float], list[float]]:
    """At concurrency n: each round's throughput, and every request's ITL."""
    itls = [request_figures(r)["itl"] for run in d["runs"] if run["concurrency"] == n for r in run["requests"]]
    return throughputs(d, n), itls


def throughputs(d, n: int) -> list[float]:
    """At concurrency n, each round's tokens per second, in round order."""
    return [run_throughput(run) for run in d["runs"] if run["concurrency"] == n]
