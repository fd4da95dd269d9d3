"""Where one request's time went, by the server's own histograms: read /metrics before and after."""

import os
import time

import httpx
from prometheus_client.parser import text_string_to_metric_families

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
PHASES = ("request_queue_time_seconds", "request_prefill_time_seconds", "request_decode_time_seconds",
          "request_inference_time_seconds", "e2e_request_latency_seconds", "time_to_first_token_seconds")


def histogram_totals(root: str) -> dict:
    """count and sum of each phase histogram, over all label sets."""
    totals = {}
    for family in text_string_to_metric_families(httpx.get(f"{root}/metrics").text):
        for s in family.samples:
            for phase in PHASES:
                if s.name in (f"vllm:{phase}_count", f"vllm:{phase}_sum"):
                    key = (phase, s.name.rsplit("_", 1)[1])
                    totals[key] = totals.get(key, 0.0) + s.value
    return totals


def request_phases(base_url: str, body: dict) -> dict:
    """Send one request alone and return, per phase, how many observations it added and their seconds."""
    root = base_url.removesuffix("/v1")
    before = histogram_totals(root)
    t0 = time.perf_counter()
    response = httpx.post(f"{base_url}/chat/completions", json=body, timeout=120)
    client_e2e = time.perf_counter() - t0
    time.sleep(0.5)  # the metrics are updated just after the response is sent
    after = histogram_totals(root)
    phases = {p: {"observations": after[(p, "count")] - before[(p, "count")],
                  "seconds": round(after[(p, "sum")] - before[(p, "sum")], 6)} for p in PHASES}
    return {"status": response.status_code, "client_e2e_s": round(client_e2e, 6), "phases": phases}


if __name__ == "__main__":
    r = request_phases(BASE_URL, {"model": "chat", "messages": [{"role": "user", "content": "Say hi."}],
                                  "max_tokens": 30})
    print(f"client saw {r['client_e2e_s'] * 1000:.0f} ms")
    for phase, v in r["phases"].items():
        print(f"{phase:<34} {v['observations']:.0f} observation(s), {v['seconds'] * 1000:8.1f} ms")
