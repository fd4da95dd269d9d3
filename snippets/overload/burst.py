"""Send n completions at the same moment and report what each got: its status, how long the answer
took, the error message of a refusal, the Retry-After header if the server sent one, and the
tokens its prompt and answer counted."""

import threading
import time

import httpx


def burst(base_url: str, model: str, n: int, max_tokens: int) -> list[dict]:
    results: list[dict] = [{} for _ in range(n)]
    start = threading.Barrier(n)

    def one(i: int) -> None:
        body = {"model": model, "prompt": f"Request {i}: write a long story.", "max_tokens": max_tokens,
                "ignore_eos": True}
        start.wait()  # every thread sends at the same moment
        t0 = time.perf_counter()
        try:
            r = httpx.post(f"{base_url}/completions", json=body, timeout=120)
        except httpx.HTTPError as e:
            results[i] = {"status": None, "error": type(e).__name__, "seconds": time.perf_counter() - t0}
            return
        answer = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
        error = answer.get("error") or {}
        results[i] = {"status": r.status_code, "seconds": round(time.perf_counter() - t0, 3),
                      "message": error.get("message") if isinstance(error, dict) else error,
                      "retry_after": r.headers.get("retry-after"),
                      "prompt_tokens": (answer.get("usage") or {}).get("prompt_tokens"),
                      "tokens": (answer.get("usage") or {}).get("completion_tokens"),
                      "finish_reason": (answer.get("choices") or [{}])[0].get("finish_reason")}

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
