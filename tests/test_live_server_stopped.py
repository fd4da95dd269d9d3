"""A live server that dies mid-run fails the live tier with one line that names it.

Runs last among the tests that share the live server (tests/conftest.py orders it), because it kills
that server: a sub-run of three live tests against it, the server stopped once the first has passed.
"""

from __future__ import annotations

import os
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
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if " PASSED" in line and live_server.process.poll() is None:
            os.killpg(live_server.pgid, signal.SIGKILL)
            live_server.process.wait(timeout=60)
    out = "".join(lines)
    assert proc.wait(timeout=300) == 2, out  # pytest: interrupted
    assert out.count(" PASSED") == 1 and out.count(" FAILED") == 1, out  # the third was never run
    stopped = [line for line in lines if f"the live vLLM server at {live_server.url} stopped mid-run" in line]
    assert stopped and "/health does not answer" in stopped[0], out
    assert "Interrupted: the live vLLM server" in out, "the run stopped there"
    assert not [line for line in lines if line.startswith("E ")], "no traceback buries the line:\n" + out
