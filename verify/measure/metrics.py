"""Read vLLM's Prometheus /metrics and watch them change over time."""

from __future__ import annotations

import threading
import time

import httpx
from prometheus_client.parser import text_string_to_metric_families

from verify.errors import VerifyError

WATCHED = ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
           "vllm:generation_tokens_total", "vllm:prompt_tokens_total", "vllm:request_success_total",
           "vllm:request_queue_time_seconds_sum", "vllm:request_queue_time_seconds_count")


class MetricsError(VerifyError):
    """A scrape that cannot be trusted: an error status, or a watched metric missing."""


def _scrape(server_url: str, client: httpx.Client | None) -> str:
    r = (client or httpx).get(server_url + "/metrics", timeout=5.0)
    if r.status_code != 200:
        raise MetricsError(f"GET {server_url}/metrics answered HTTP {r.status_code}")
    return r.text


def read(server_url: str, client: httpx.Client | None = None) -> dict[str, float]:
    """The watched metrics summed over their label sets (one engine, one model here).

    A watched metric missing from the scrape is an error, never a zero: a zero would
    read as "nothing happened" where nothing was measured.
    """
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(_scrape(server_url, client)):
        for sample in family.samples:
            if sample.name in WATCHED:
                out[sample.name] = out.get(sample.name, 0.0) + sample.value
    missing = [name for name in WATCHED if name not in out]
    if missing:
        raise MetricsError(f"{server_url}/metrics has no {', '.join(missing)}")
    return {name: out[name] for name in WATCHED}


def read_all(server_url: str, client: httpx.Client | None = None) -> dict[str, float]:
    """Every sample of /metrics, keyed 'name{label="value",...}' without the model and engine labels."""
    text = _scrape(server_url, client)
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()) if k not in ("model_name", "engine"))
            key = sample.name + (f"{{{labels}}}" if labels else "")
            out[key] = out.get(key, 0.0) + sample.value
    return out


def delta(before: dict[str, float], after: dict[str, float], prefix: str = "") -> dict[str, float]:
    """What changed between two read_all() snapshots (only the keys starting with prefix)."""
    return {k: round(v - before.get(k, 0.0), 6) for k, v in after.items()
            if k.startswith(prefix) and v != before.get(k, 0.0)}


def watch_until(server_url: str, done, timeout_s: float, interval_s: float = 0.05) -> dict:
    """Poll metrics until done(sample) is true or timeout_s passes; keep every sample with its time."""
    samples = []
    t0 = time.perf_counter()
    with httpx.Client() as client:
        while True:
            m = read(server_url, client)
            t = round(time.perf_counter() - t0, 3)
            samples.append({"t": t, **{k.removeprefix("vllm:"): v for k, v in m.items()}})
            if done(m):
                return {"reached": True, "after_s": t, "samples": samples}
            if t > timeout_s:
                return {"reached": False, "after_s": t, "samples": samples}
            time.sleep(interval_s)


def wait_idle(server_url: str, timeout_s: float = 120.0) -> None:
    """Block until the engine has no running or waiting request (so trials do not overlap).

    A wait that times out raises: the next trial would overlap the requests still running.
    """
    seen = watch_until(server_url, lambda m: m["vllm:num_requests_running"] == 0
                       and m["vllm:num_requests_waiting"] == 0, timeout_s)
    if not seen["reached"]:
        last = seen["samples"][-1]
        raise MetricsError(f"the server was not idle after {timeout_s:.0f} s ({last['num_requests_running']:.0f} "
                           f"running, {last['num_requests_waiting']:.0f} waiting)")


class Sampler(threading.Thread):
    """Read the watched metrics every interval_s in the background; each sample keeps its time."""

    def __init__(self, server_url: str, interval_s: float = 0.05):
        super().__init__(daemon=True)
        self.server_url, self.interval_s = server_url, interval_s
        self.samples: list[dict] = []
        self.t0 = time.perf_counter()
        self._halt = threading.Event()
        self.error: str | None = None  # why sampling stopped early, if it did

    def run(self):
        # A scrape that fails ends the sampling and is kept: the trial reports it, rather than
        # deciding on samples that silently stopped.
        with httpx.Client() as c:
            while not self._halt.is_set():
                sent = time.perf_counter() - self.t0
                try:
                    m = read(self.server_url, c)
                except (httpx.HTTPError, MetricsError) as e:
                    self.error = f"{type(e).__name__}: {e}"
                    return
                # "sent" and "t" bracket the moment the server counted: a slow scrape is visible.
                self.samples.append({"sent": round(sent, 3), "t": round(time.perf_counter() - self.t0, 3),
                                     **{k.removeprefix("vllm:"): v for k, v in m.items()}})
                time.sleep(self.interval_s)

    def stop(self):
        self._halt.set()
        self.join(timeout=5)
