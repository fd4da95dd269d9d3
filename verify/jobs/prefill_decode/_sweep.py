"""The concurrency sweep two pages read: batching (Prefill vs Decode) and throughput (Cost per Token).

At each of CONCURRENCY, that many identical streaming requests of MAX_TOKENS tokens start together
(the snippet lifecycle/send_together.py, as Lifecycle of a Request shows it); the levels run in up to
ROUNDS interleaved rounds. One sweep serves both jobs in a run: the first of them to run on the
server measures it, and the rounds stop once no verdict of either job could change whatever the
remaining rounds measured; the other job is given the same data, and each record holds all of it
(`measured_by` names the job that ran the requests).
"""

from __future__ import annotations

import copy

SNIPPET = "lifecycle/send_together.py"
CONCURRENCY = (1, 2, 4, 8)
ROUNDS = 3
MAX_TOKENS = 64
# The jobs that read the sweep; its rounds stop once every one of their stopping rules is settled.
READERS = ("batching", "throughput")
_SHARED_KEY = "concurrency sweep"


def measure(ctx, job_id: str) -> dict:
    """The sweep's data: measured now, or as the other reader measured it on this server in this run."""
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


def settled(d) -> dict:
    """Every reader's stopping rule on the same rounds: settled once all of them are."""
    from verify.jobs.cost import throughput
    from verify.jobs.prefill_decode import batching
    reports = {"batching": batching.settled(d), "throughput": throughput.settled(d)}
    return {"rounds": rounds(d), "max_rounds": ROUNDS, "settled": all(r["settled"] for r in reports.values()),
            "why": "; ".join(f"{job}: {r['why']}" for job, r in reports.items())}


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
    import json
    for i, r in enumerate(run["requests"]):
        ends = [json.loads(x["line"][6:])["choices"][0].get("finish_reason") for x in r["lines"]
                if x["line"].startswith("data: {") and '"finish_reason":"' in x["line"].replace(" ", "")]
        if ends[-1:] != ["length"]:
            raise ValueError(f"at {run['concurrency']} at once, request {i + 1} did not run to max_tokens "
                             f"(finish_reason {ends[-1] if ends else None!r})")
    return run["concurrency"] * MAX_TOKENS / max(request_figures(r)["last"] for r in run["requests"])


def throughputs(d, n: int) -> list[float]:
    """At concurrency n, each round's tokens per second, in round order."""
    return [run_throughput(run) for run in d["runs"] if run["concurrency"] == n]
