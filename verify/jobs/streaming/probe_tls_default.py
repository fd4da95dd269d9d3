"""The page's probe command, run against nginx with default settings and TLS termination.

The command (snippets/streaming/probe.sh) runs `verify probe` as a reader would
against their own ingress. On this path the site measured tokens arriving in
blocks (proxy-buffering); the probe must find the same from the outside, and
see the engine notice a client that leaves.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

SNIPPET = "streaming/probe.sh"
SETUP = "nginx-tls"
DIFFERS_EXIT = 3  # verify probe's exit status when a check differs from the site


def collect(ctx) -> dict:
    import json
    import os
    import subprocess
    import tempfile
    from pathlib import Path

    from verify.measure import capture
    from verify.paths import ROOT
    # The probe runs in a child process: every project module it loads (its own, and the rules and
    # helpers it borrows from other jobs) is declared here, on its behalf, so editing any of them
    # makes this record stale.
    for module in _probe_modules(ROOT):
        ctx.inputs.declare(module)
    script = ctx.snippet_path(SNIPPET)
    proxy = ctx.proxy(SETUP)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "probe-report.json"
        env = {**os.environ, "BASE_URL": proxy.url + "/v1", "METRICS_URL": ctx.server.url + "/metrics",
               "CA_FILE": str(proxy.ca_file), "REPORT": str(report)}
        done = subprocess.run(["bash", str(script)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        record = json.loads(report.read_text()) if report.exists() else None
    lines = done.stdout.splitlines()
    return {"run": capture.results("command", lines, exit_code=done.returncode,
                                   expect_error=done.returncode == DIFFERS_EXIT,
                                   error=None if record else (done.stderr.strip().splitlines() or ["no report"])[-1],
                                   lines=lines),
            "stderr": done.stderr.splitlines(), "report": record}


def _probe_modules(root) -> list:
    import subprocess
    import sys
    from pathlib import Path
    listing = ("import sys, verify.probe.run; print('\\n'.join(sorted(m.__file__ for n, m in sys.modules.items() "
               "if n.split('.')[0] == 'verify' and getattr(m, '__file__', None))))")
    done = subprocess.run([sys.executable, "-c", listing], cwd=root, capture_output=True, text=True, timeout=60,
                          check=True)
    return [Path(line) for line in done.stdout.splitlines() if line]


def _checks(d) -> dict:
    return {c["id"]: c for c in d["report"]["checks"]}


def decide_blocks(d):
    c = _checks(d)["delivery"]
    return verdict_if(c["verdict"] == "differs" and d["run"]["exit_code"] == DIFFERS_EXIT,
                      f"probe through {SETUP}: delivery {c['verdict']} ({c['measured']}); exit status "
                      f"{d['run']['exit_code']}")


def decide_cancel(d):
    c = _checks(d)["cancellation"]
    return verdict_if(c["verdict"] == "ok", f"probe through {SETUP}: cancellation {c['verdict']} ({c['measured']})")


JOB = Job(
    id="probe-tls-default",
    title="The probe command against the TLS ingress",
    question="Run from outside, does `verify probe` find on the TLS default path what the site's jobs measured "
             "there: tokens in blocks, and a hang-up that reaches the engine?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("probe-tls-default.finds-blocks", "Through nginx with default settings and TLS termination, the probe "
              "reports tokens arriving in blocks and exits with status 3.", decide_blocks, timing=True),
        Claim("probe-tls-default.cancel-reaches-engine", "Through the same path, with the engine's metrics, the probe "
              "sees the engine stop when its client leaves.", decide_cancel, timing=True),
    ),
)
