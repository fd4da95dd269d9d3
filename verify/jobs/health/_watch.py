"""What the health article's jobs share: watching a server they launched, stopped or signalled.

Times are seconds on one monotonic clock, counted from the moment the job's server process was
spawned (start-up) or from the signal the job sent (stall, death, drain).
"""

from __future__ import annotations

SNIPPET = "health/look.py"
MODEL = "chat"  # the profile's --served-model-name: known before /v1/models answers
POLL_S = 0.25
START_LIMIT_S = 300.0
READY = ("health", "models", "completion")


def wait_ready(ctx, srv, look) -> tuple[list[dict], float | None]:
    """Poll what a probe sees from spawn until /health, /v1/models and a completion all answer 200.

    Returns every poll ({"t": seconds since spawn, "port": ..., "health": ..., ...}) and the time of
    the first poll where all three answered 200 (None: the process exited or the limit passed)."""
    import time
    t0 = time.monotonic()
    polls: list[dict] = []
    while True:
        t = time.monotonic() - t0
        seen = look.look(srv.url, MODEL)
        polls.append({"t": round(t, 3), **seen})
        if all(seen.get(k) == 200 for k in READY):
            ctx.ready(srv, t)
            return polls, round(t, 3)
        if srv.process.poll() is not None or t > START_LIMIT_S:
            return polls, None
        time.sleep(POLL_S)


def engine_core(server_pid: int):
    """The engine core process under the API server (vLLM names it VLLM::EngineCore)."""
    import psutil
    for child in psutil.Process(server_pid).children(recursive=True):
        try:
            if "EngineCore" in child.name() or "EngineCore" in " ".join(child.cmdline()):
                return child
        except psutil.Error:
            continue
    return None


def stream_in_background(url: str, body: dict, timeout: float):
    """Start sse.capture in a thread; the returned function joins it and gives the capture and the
    time.monotonic() at which the capture began (its arrival times count from there)."""
    import threading
    import time

    from verify.measure import sse
    out: dict = {}

    def run():
        out["began"] = time.monotonic()
        out["stream"] = sse.capture(url, body, timeout=timeout)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def result() -> tuple[dict, float]:
        thread.join(timeout + 5)
        return out.get("stream", {}), out.get("began", 0.0)
    return result


def status_of(client, method: str, path: str, body: dict | None = None) -> int | str:
    """The HTTP status, or the name of the error when there was no HTTP answer."""
    import httpx
    try:
        return client.request(method, path, json=body).status_code
    except httpx.HTTPError as e:
        return type(e).__name__


def answer_of(client, body: dict) -> dict:
    """A completion's status, finish reason and error message (what a client sees), or the error's name."""
    import httpx

    from verify.measure import capture
    try:
        r = client.post("/v1/completions", json=body)
    except httpx.HTTPError as e:
        return {"status": type(e).__name__}
    parsed = capture.body(r) or {}
    choice = (parsed.get("choices") or [{}])[0] if isinstance(parsed, dict) else {}
    error = parsed.get("error") if isinstance(parsed, dict) else None
    return {"status": r.status_code, "finish_reason": choice.get("finish_reason"),
            "tokens": (parsed.get("usage") or {}).get("completion_tokens") if isinstance(parsed, dict) else None,
            "error": (error or {}).get("message") if isinstance(error, dict) else error}


def gauges(client) -> dict[str, float] | str:
    """vLLM's request gauges and counters from /metrics, or the error that stopped the scrape."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families
    try:
        r = client.get("/metrics")
    except httpx.HTTPError as e:
        return type(e).__name__
    if r.status_code != 200:
        return f"HTTP {r.status_code}"
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            if s.name in ("vllm:num_requests_running", "vllm:num_requests_waiting") or \
                    s.name == "vllm:request_success_total":
                key = s.name + (f"{{finished_reason=\"{s.labels['finished_reason']}\"}}"
                                if "finished_reason" in s.labels else "")
                out[key] = out.get(key, 0.0) + s.value
    return out


def wait_exit(proc, limit_s: float) -> tuple[float | None, int | None]:
    """Seconds until proc exited (None: still running after limit_s) and its exit code."""
    import time
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if proc.poll() is not None:
            return round(time.monotonic() - t0, 3), proc.returncode
        time.sleep(0.05)
    return None, None


def tokens_and_end(stream: dict) -> dict:
    """What a stream delivered: text chunks, the time of the last one (s after sending), the tokens its
    usage counted, its finish reason, any error event, whether [DONE] came, how the client's read ended."""
    import json
    chunks, last_text_s, tokens, finish, errors, done = 0, None, None, None, [], False
    for item in stream.get("lines", []):
        line = str(item.get("line", ""))
        if not line.startswith("data: "):
            continue
        payload = line[6:]
        if payload == "[DONE]":
            done = True
            continue
        try:
            event = json.loads(payload)
        except ValueError:
            continue
        if "error" in event:
            errors.append(event["error"])
            continue
        if event.get("usage"):
            tokens = event["usage"].get("completion_tokens")
        for choice in event.get("choices") or []:
            if choice.get("text"):
                chunks += 1
                last_text_s = item.get("t")
            finish = choice.get("finish_reason") or finish
    return {"chunks": chunks, "last_text_s": last_text_s, "tokens": tokens, "finish_reason": finish,
            "errors": errors, "done": done, "client_error": stream.get("error"), "status": stream.get("status"),
            "ended_s": stream.get("ended_s")}
