"""A real Prometheus (Debian's package) scraping the run's vLLM server, started and stopped by the run.

The configuration and the rule files are the metrics article's snippets
(snippets/metrics/): the scrape target in the snippet is rewritten to the run's
server, the scrape and evaluation intervals to the job's, and `promtool check config`
must accept the result before Prometheus starts. Prometheus listens on a free
loopback port with its own data folder in a temporary directory, which goes with
it; its process group is stopped whatever happens (verify/live/processes.py).
Queries go through its HTTP API (/api/v1/query, /api/v1/query_range, /api/v1/alerts).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx

from verify.config import programs
from verify.errors import VerifyError
from verify.live import processes
from verify.paths import ROOT

SNIPPETS = ROOT / "snippets" / "metrics"
CONFIG = SNIPPETS / "prometheus.yml"
# The rule files the configuration names, in the order it names them.
RULE_FILES = (SNIPPETS / "recording-rules.yml", SNIPPETS / "alert-rules.yml")
START_TIMEOUT_S = 30.0


def binary(name: str = "prometheus") -> str:
    """prometheus or promtool (verify/config/programs.py says where each comes from and which jobs run it)."""
    found = programs.find(name)
    if not found:
        raise VerifyError(f"{name} is not installed (Debian package {programs.PROGRAMS[name].package}: "
                          f"apt-get install -y {programs.PROGRAMS[name].package})")
    return found


def render_config(text: str, target: str, scrape_interval_s: float, evaluation_interval_s: float) -> str:
    """The snippet's configuration pointed at the run's server, with the job's intervals.

    The snippet scrapes `localhost:8000` as a reader's server would be; exactly one such target,
    and both intervals, must be there to be rewritten, so a snippet edit cannot silently leave the
    run scraping nothing."""
    out, n = re.subn(r"(['\"]?)localhost:8000\1", f"'{target}'", text)
    if n != 1:
        raise VerifyError(f"{CONFIG.relative_to(ROOT)} must scrape exactly one target localhost:8000 (found {n})")
    for key, seconds in (("scrape_interval", scrape_interval_s), ("evaluation_interval", evaluation_interval_s)):
        out, n = re.subn(rf"^(\s*{key}:\s*)\S+", rf"\g<1>{_duration(seconds)}", out, count=1, flags=re.M)
        if n != 1:
            raise VerifyError(f"{CONFIG.relative_to(ROOT)} sets no global {key}")
    return out


def _duration(seconds: float) -> str:
    ms = int(round(seconds * 1000))
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


@dataclass
class Prometheus:
    url: str
    workdir: Path
    proc: subprocess.Popen
    config_text: str

    def query(self, expr: str, at: float | None = None) -> list[dict]:
        """An instant query's result vector: [{"metric": {...}, "value": [t, "v"]}, ...]."""
        params = {"query": expr} | ({"time": f"{at:.3f}"} if at is not None else {})
        return self._get("/api/v1/query", params)["result"]

    def query_range(self, expr: str, start: float, end: float, step_s: float) -> list[dict]:
        return self._get("/api/v1/query_range", {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                                 "step": f"{step_s}"})["result"]

    def alerts(self) -> list[dict]:
        """Alerts pending or firing now, as Prometheus itself reports them."""
        return self._get("/api/v1/alerts", {})["alerts"]

    def targets_up(self) -> bool:
        active = self._get("/api/v1/targets", {})["activeTargets"]
        return bool(active) and all(t.get("health") == "up" for t in active)

    def log(self) -> list[str]:
        return processes.log_tail(self.workdir / "prometheus.log", 200).splitlines()

    def _get(self, path: str, params: dict) -> dict:
        try:
            r = httpx.get(self.url + path, params=params, timeout=10)
        except httpx.HTTPError as e:
            raise VerifyError(f"Prometheus at {self.url} did not answer {path}: {e}") from None
        body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
        if r.status_code != 200 or body.get("status") != "success":
            raise VerifyError(f"Prometheus {path} failed (HTTP {r.status_code}): {body.get('error', r.text[:200])}")
        return body["data"]


def check_config(config: Path) -> subprocess.CompletedProcess:
    """`promtool check config` on a configuration (it checks the rule files it names, too)."""
    return subprocess.run([binary("promtool"), "check", "config", str(config)], capture_output=True, text=True,
                          cwd=config.parent)


@contextlib.contextmanager
def managed_prometheus(target: str, scrape_interval_s: float = 1.0, evaluation_interval_s: float = 1.0,
                       port: int | None = None, config_path: Path = CONFIG,
                       rule_paths: tuple[Path, ...] = RULE_FILES) -> Iterator[Prometheus]:
    """Prometheus scraping `target` (host:port of the vLLM server) with the snippet's configuration and rules.

    A job passes the paths it declared (ctx.snippet_path), so the files become inputs of its record."""
    exe = binary()
    if port is not None and processes.port_in_use(port):
        raise VerifyError(f"port {port} on 127.0.0.1 is already in use")
    port = port or processes.free_port()
    workdir = Path(tempfile.mkdtemp(prefix="prometheus-"))
    proc = None
    try:
        text = render_config(config_path.read_text(), target, scrape_interval_s, evaluation_interval_s)
        for rules in rule_paths:
            shutil.copy(rules, workdir / rules.name)
        config = workdir / "prometheus.yml"
        config.write_text(text)
        checked = check_config(config)
        if checked.returncode != 0:
            raise VerifyError("promtool rejected the metrics article's Prometheus configuration",
                              detail=(checked.stdout + checked.stderr)[-2000:])
        proc = processes.spawn([exe, f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}",
                                f"--web.listen-address=127.0.0.1:{port}", "--web.enable-lifecycle"],
                               workdir / "prometheus.log", cwd=workdir)
        prom = Prometheus(f"http://127.0.0.1:{port}", workdir, proc, text)

        def ready() -> bool:
            try:
                return httpx.get(prom.url + "/-/ready", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False
        try:
            processes.wait_until(proc, ready, START_TIMEOUT_S)
        except processes.Exited as e:
            raise VerifyError(f"prometheus exited with code {e} on start",
                              detail=processes.log_tail(workdir / "prometheus.log")) from None
        except processes.TimedOut:
            raise VerifyError(f"prometheus was not ready on 127.0.0.1:{port} within {START_TIMEOUT_S:.0f} s",
                              detail=processes.log_tail(workdir / "prometheus.log")) from None
        yield prom
    finally:
        if proc is not None:
            processes.stop_group(proc, grace_s=5)
        shutil.rmtree(workdir, ignore_errors=True)


def wait_for(check, timeout_s: float, poll_s: float = 0.5) -> bool:
    """Poll check() until true or timeout: for a scrape or a rule evaluation to catch up."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(poll_s)
    return False
