"""`verify probe --watch-drain`: against a real vLLM server sent SIGTERM while the probe watches, the
requests that failed during the drain are reported, with their statuses, and the exit status says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading

import httpx
import pytest

from tests.conftest import ROOT, VERIFY
from verify.config.profiles import SERVED_MODEL_NAME, get_profile
from verify.live.server import managed_server

pytestmark = pytest.mark.engine  # starts servers of its own (not the shared one)


def test_a_drain_the_probe_watches_is_reported_with_its_failed_requests(tmp_path):
    report = tmp_path / "r.json"
    with managed_server(get_profile("cpu"), extra_flags=("--shutdown-timeout", "30")) as srv:
        probe = subprocess.Popen([*VERIFY, "probe", srv.api, "--watch-drain", "6", "--report", str(report)],
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=os.environ.copy())
        for line in probe.stderr:
            if "start the drain now" in line:
                break
        # A stream in flight keeps the server draining (not gone) while the probe's requests arrive.
        body = {"model": SERVED_MODEL_NAME, "prompt": "Tell a long story.", "max_tokens": 300,
                "ignore_eos": True, "stream": True}
        stream = threading.Thread(target=lambda: httpx.post(srv.api + "/completions", json=body, timeout=60),
                                  daemon=True)
        stream.start()
        threading.Event().wait(1.0)
        os.kill(srv.process.pid, signal.SIGTERM)
        out, rest = probe.communicate(timeout=180)
    record = json.loads(report.read_text())
    checks = {c["id"]: c for c in record["checks"]}
    assert probe.returncode == 3, rest
    assert checks["drain"]["verdict"] == "differs" and "500" in checks["drain"]["measured"], checks["drain"]
    assert checks["health"]["verdict"] == "ok"
    # The reader is sent to the symptom: printed, and in the report.
    assert "symptoms/#symptom-errors-during-rollout" in out, out
    assert any("symptom-errors-during-rollout" in line for line in record["symptoms"])
