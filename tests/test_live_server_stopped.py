"""A live server that dies mid-run fails the live tier with one line that names it.

Runs last among the tests that share the live server (tests/conftest.py orders it), because it kills
that server: a sub-run of three live tests against it, the server stopped once the first has passed. It is
stopped as an engine crash stops it (the engine core killed; the API server then exits by itself), and the
symptom index's health.sh, run back to back meanwhile, shows it: never 200 again, then no status once the
process has gone (the 503 between lasts a few hundredths of a second, health-probes.dead-health-503, and is
printed when a run of health.sh falls in it).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUB_RUN = ["tests/test_snippets_live.py", "-k", "curl_snippets_stream_sse or usage_snippet"]


@pytest.mark.live
def test_a_run_whose_server_stops_the_live_server_mid_run_fails_with_one_line(live_server):
    if not live_server.managed:
        pytest.skip("the server was started elsewhere (--server-url): this test does not stop it")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:xdist", *SUB_RUN,
         "--server-url", live_server.url], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env={**os.environ, "VERIFY_SERVER_URL": ""})
    lines, seen = [], []
    for line in proc.stdout:
        lines.append(line)
        if " PASSED" in line and live_server.process.poll() is None:
            seen = _kill_engine_watching_health(live_server)
    out = "".join(lines)
    assert seen and seen[0] == "200" and set(seen[1:]) <= {"200", "503", "000"}, seen
    after = seen[seen.index(next(s for s in seen if s != "200")):]
    assert "200" not in after and after[-1] == "000", seen  # never ready again, and gone
    assert proc.wait(timeout=300) == 2, out  # pytest: interrupted
    assert out.count(" PASSED") == 1 and out.count(" FAILED") == 1, out  # the third was never run
    stopped = [line for line in lines if f"the live vLLM server at {live_server.url} stopped mid-run" in line]
    assert stopped and "/health does not answer" in stopped[0], out
    assert "Interrupted: the live vLLM server" in out, "the run stopped there"
    assert not [line for line in lines if line.startswith("E ")], "no traceback buries the line:\n" + out


def _kill_engine_watching_health(live_server) -> list[str]:
    """SIGKILL to the engine core; health.sh (snippets/symptoms/) run back to back from just before it until it
    prints no status twice (the port closed): the statuses it printed, in order."""
    from verify.jobs.health import _watch
    core = _watch.engine_core(live_server.process.pid)
    assert core is not None, "no engine core process under the live server"

    def health() -> str:
        out = subprocess.run(["bash", str(ROOT / "snippets" / "symptoms" / "health.sh")], capture_output=True,
                             text=True, env={**os.environ, "BASE_URL": live_server.api}, timeout=30).stdout
        return re.fullmatch(r"/health: (\d{3})\n", out).group(1)

    seen = [health()]
    core.send_signal(signal.SIGKILL)
    while seen[-2:] != ["000", "000"] and len(seen) < 2000:
        seen.append(health())
    live_server.process.wait(timeout=60)  # the API server exits by itself
    return seen
