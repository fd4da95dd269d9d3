"""The floor of the tiers that need a vLLM engine (live and engine): the least time they could take on this
machine, measured while they run, set beside the time they took.

With --floor-report FILE, every server the suite starts and waits for (the shared one, the engine tier's own)
is watched from its start: how long the start took, and, read from its /metrics every WATCH_S, the time the
engine had a request running or waiting (busy: the union, so requests at once count once) and the server's
own time for each request added up (vllm:e2e_request_latency_seconds_sum). Engine-tier tests without a
server fixture start an engine of their own (to see it fail, interrupt it, or run a job on it) and count
whole, as engine time. The floor is the starts plus the busy time plus those tests; everything else the two tiers spend is
the suite's own (Python processes, proxies, Prometheus, waits). The report is written as JSON and summed up
at the end of the run; nothing here fails a test.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx

from tests import tiers

WATCH_S = 0.1
E2E = "vllm:e2e_request_latency_seconds_sum"
_watches: dict[str, "_Watch"] = {}
_stopped: dict[str, dict] = {}  # the figures of watches already stopped, by label
_starts: dict[str, float] = {}
_start_spans: list[tuple[float, float]] = []  # wall-clock spans of the starts, which the floor counts apart
_stopped_busy: list[tuple[float, float]] = []  # the busy spans of watches already stopped
_tests: dict[str, dict] = {}


class _Watch(threading.Thread):
    """Reads one server's /metrics until stopped or the server is gone; keeps the busy time and e2e sum."""

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url, self.busy_s, self.e2e_first, self.e2e_last, self.reads, self.failed = url, 0.0, None, None, 0, 0
        self.busy: list[tuple[float, float]] = []  # wall-clock spans counted busy, to set beside each test
        self._halt = threading.Event()

    def run(self):
        last, last_wall = time.monotonic(), time.time()
        with httpx.Client(timeout=10.0) as client:
            while not self._halt.wait(WATCH_S):
                try:
                    text = client.get(self.url + "/metrics").text
                except httpx.HTTPError:
                    # A slow answer under load, or a server a test stopped or killed: the time until the next
                    # read that answers is not counted as busy, so the floor errs low, never high.
                    self.failed += 1
                    last, last_wall = time.monotonic(), time.time()
                    continue
                now, now_wall = time.monotonic(), time.time()
                values = _values(text)
                if values.get("vllm:num_requests_running", 0) + values.get("vllm:num_requests_waiting", 0) > 0:
                    self.busy_s += now - last
                    self.busy.append((last_wall, now_wall))
                last, last_wall = now, now_wall
                if E2E in values:
                    self.e2e_first = values[E2E] if self.e2e_first is None else self.e2e_first
                    self.e2e_last = values[E2E]
                self.reads += 1

    def stop(self) -> dict:
        self._halt.set()
        self.join(timeout=5)
        return {"busy_s": round(self.busy_s, 1), "reads": self.reads, "failed_reads": self.failed,
                "e2e_sum_s": round((self.e2e_last or 0) - (self.e2e_first or 0), 1)}


def _values(text: str) -> dict[str, float]:
    """The vllm: samples of a /metrics text, each name summed over its labels (prometheus_client's parser)."""
    from prometheus_client.parser import text_string_to_metric_families
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith("vllm:"):
                out[sample.name] = out.get(sample.name, 0.0) + sample.value
    return out


def enabled(config) -> bool:
    return bool(config.getoption("--floor-report", default=None))


def server_started(config, label: str, url: str, start_s: float) -> None:
    """A fixture's server is up: keep its start time and watch it from now on."""
    if not enabled(config):
        return
    _starts[label] = round(start_s, 1)
    _start_spans.append((time.time() - start_s, time.time()))
    _watches[label] = _Watch(url)
    _watches[label].start()


def server_stopped(label: str) -> None:
    """A fixture's server is done with: stop watching it (its figures are kept for the report)."""
    if label in _watches:
        watch = _watches.pop(label)
        _stopped[label] = watch.stop()
        _stopped_busy.extend(watch.busy)


def pytest_addoption(parser):
    parser.addoption("--floor-report", default=None, metavar="FILE",
                     help="measure the live and engine tiers' floor (server starts, engine busy time) into FILE")


def pytest_runtest_logreport(report):
    if report.nodeid in _tests:
        entry = _tests[report.nodeid]
        entry["s"] += report.duration
        entry.setdefault("spans", []).append((report.start, report.stop))


def _floor_within(spans: list[tuple[float, float]]) -> float:
    """The floor's seconds inside a test's setup, call and teardown: a server start, engine-busy time (any
    watched server, stopped or not)."""
    counted = _start_spans + _stopped_busy + [b for w in _watches.values() for b in w.busy]
    return sum(max(0.0, min(b1, t1) - max(b0, t0)) for b0, b1 in counted for t0, t1 in spans)


def pytest_runtest_setup(item):
    """Only the tests that run are counted; whether one brings an engine of its own is known here."""
    if enabled(item.config) and item.nodeid not in _tests:
        server_fixture = {"live_server", "server"} & set(getattr(item, "fixturenames", ()))
        _tests[item.nodeid] = {"s": 0.0, "own_engine": "engine" in tiers.markers_of(item) and not server_fixture}


def pytest_sessionfinish(session):
    config = session.config
    if not enabled(config):
        return
    for label in list(_watches):
        server_stopped(label)
    servers = dict(_stopped)
    own_engine = {k: round(v["s"], 1) for k, v in _tests.items() if v.get("own_engine")}
    took = round(sum(v["s"] for v in _tests.values()), 1)
    floor = round(sum(_starts.values()) + sum(s["busy_s"] for s in servers.values()) + sum(own_engine.values()), 1)
    # Where the rest went: each test's time beyond the floor's time within it (a server start, the engine
    # busy): its own overhead, largest first.
    beyond = sorted(((round(v["s"] - _floor_within(v.get("spans", [])), 1), k) for k, v in _tests.items()
                     if not v.get("own_engine")), reverse=True)
    report = {"took_s": took, "floor_s": floor, "ratio": round(took / floor, 2) if floor else None,
              "server_starts_s": _starts, "servers": servers, "own_engine_tests_s": own_engine,
              "tests": len(_tests), "overhead_s": round(took - floor, 1), "beyond_floor_s": {k: v for v, k in beyond[:30]}}
    Path(config.getoption("--floor-report")).write_text(json.dumps(report, indent=2) + "\n")
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_line(f"floor of these tiers: {floor:.0f} s = server starts {sum(_starts.values()):.0f} s "
                      f"({', '.join(f'{k} {v:.0f}' for k, v in _starts.items())}) + engine busy "
                      f"{sum(s['busy_s'] for s in servers.values()):.0f} s (requests' own time added up: "
                      f"{sum(s['e2e_sum_s'] for s in servers.values()):.0f} s) + tests with an engine of their own "
                      f"{sum(own_engine.values()):.0f} s; they took {took:.0f} s "
                      f"({report['ratio']}x the floor); report: {config.getoption('--floor-report')}")
