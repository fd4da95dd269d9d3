"""Which processes a request crosses on the running server, observed with the page's snippet."""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

SNIPPET = "lifecycle/server_processes.py"
# The rules read CPU time over the generation's wall time; 100 tokens are some 7 s here, against ticks of 10 ms.
MAX_TOKENS = 100
# "Keeps a core busy": CPU time of at least this share of the generation's wall time.
BUSY_SHARE = 0.7
# "A small fraction of one core".
API_SHARE = 0.2


def collect(ctx) -> dict:
    import time

    import httpx

    from verify.measure import capture
    from verify.measure.metrics import wait_idle
    snippet = ctx.snippet(SNIPPET)
    wait_idle(ctx.server.url)
    before = snippet.server_processes(ctx.server.port)
    body = {"model": "chat", "messages": [{"role": "user", "content": "Tell a long story."}],
            "max_tokens": MAX_TOKENS, "ignore_eos": True, "stream": True}
    t0 = time.perf_counter()
    with httpx.Client(timeout=120) as client:
        with client.stream("POST", ctx.base_url + "/chat/completions", json=body) as r:
            status = r.status_code
            events = [line for line in r.iter_lines() if line.startswith("data: ")]
    seconds = time.perf_counter() - t0
    wait_idle(ctx.server.url)
    after = snippet.server_processes(ctx.server.port)
    return {"generation": capture.results("stream", events, statuses=[status], seconds=round(seconds, 3),
                                          max_tokens=MAX_TOKENS),
            "before": before, "after": after}


def process_roles(processes: list[dict]) -> dict[str, dict]:
    """The API server (the listener), the engine core and the worker, by what they call themselves."""
    api = processes[0]
    out = {"api server": api}
    for p in processes[1:]:
        if p["name"].startswith("VLLM::EngineCor") or "EngineCore" in p["cmdline"]:
            out["engine core"] = p
        elif p["name"].startswith("VLLM::Worker") or "Worker" in p["cmdline"]:
            out["worker"] = p
    return out


def _cpu(d) -> dict[str, float]:
    before = {p["pid"]: p["cpu_s"] for p in d["before"]}
    return {role: round(p["cpu_s"] - before.get(p["pid"], 0.0), 3) for role, p in process_roles(d["after"]).items()}


def decide_three(d):
    roles = process_roles(d["after"])
    engine, worker = roles.get("engine core"), roles.get("worker")
    helpers = [p for p in d["after"] if p["pid"] not in {r["pid"] for r in roles.values()}]
    ok = (engine is not None and worker is not None and engine["ppid"] == roles["api server"]["pid"]
          and worker["ppid"] == engine["pid"] and all("multiprocessing" in p["cmdline"] for p in helpers))
    names = ", ".join(f"{p['name']} (pid {p['pid']}, parent {p['ppid']})" for p in d["after"])
    return verdict_if(ok, f"{len(d['after'])} processes: {names}; the engine core is a child of the API server and "
                          f"the worker a child of the engine core")


def decide_busy(d):
    cpu = _cpu(d)
    gen = d["generation"]["seconds"]
    ok = set(cpu) == {"api server", "engine core", "worker"} and \
        cpu["engine core"] >= BUSY_SHARE * gen and cpu["worker"] >= BUSY_SHARE * gen and cpu["api server"] < API_SHARE * gen
    return verdict_if(ok, f"a {gen:.1f} s generation ({d['generation']['events']} events): CPU time " +
                      ", ".join(f"{k} {v:.2f} s" for k, v in cpu.items()) +
                      f" (busy: at least {BUSY_SHARE:.0%} of the generation; a small fraction: under {API_SHARE:.0%})")


def decide_memory(d):
    roles = process_roles(d["after"])
    biggest = max(d["after"], key=lambda p: p["rss_mib"])
    ok = "worker" in roles and biggest["pid"] == roles["worker"]["pid"]
    return verdict_if(ok, "resident memory: " + ", ".join(f"{p['name']} {p['rss_mib']} MiB" for p in d["after"]))


JOB = Job(
    id="server-processes",
    title="The processes of a running server",
    question="Which processes does a request cross on a running vLLM server, and which of them does the work?",
    pages=("lifecycle.md",),
    collect=collect,
    claims=(
        Claim("server-processes.three-processes", "On CPU, a running server is three working processes: the API "
              "server, the engine core it starts, and the worker the engine core starts (plus Python's multiprocessing "
              "helper).", decide_three),
        Claim("server-processes.busy-cores", "During a generation the engine core and the worker each keep a CPU core "
              "busy for the whole time; the API server uses a small fraction of one.", decide_busy, timing=True),
        Claim("server-processes.worker-holds-model", "The worker holds the model: it is the largest process in memory.",
              decide_memory),
    ),
)
