"""The programs that are not Python packages (verify/config/programs.py): declared once, installed by
every mode that runs the jobs needing them, checked before any engine starts, and a job that runs one
it was not given fails."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT
from verify.runner.one_job import run_one
from verify.runner.record import programs_ran
from verify.runner.run_log import RunLog
from verify.config import programs
from verify.config.profiles import get_profile
from verify.errors import VerifyError
from verify.evidence import store
from verify.live.proxy import SETUPS
from verify.registry import all_jobs

CPU = get_profile("cpu")


def _recorded_programs(record: dict) -> set[str]:
    """The programs a committed record shows its job ran: the proxies it used (and openssl for a TLS
    set-up), Prometheus where the metrics article's configuration is among its inputs, curl where a
    curl snippet is."""
    used = set()
    for setup in record["provenance"].get("proxies") or {}:
        # A set-up a job names itself (front-limit's) is not in the table; its name starts with its kind.
        used.add(SETUPS[setup].kind if setup in SETUPS else setup.split("-")[0])
        if setup in SETUPS and SETUPS[setup].tls:
            used.add("openssl")
    if "snippets/metrics/prometheus.yml" in record["inputs"]:
        used |= {"prometheus", "promtool"}
    if any(label.startswith("snippets/streaming/curl_") for label in record["inputs"]):
        used.add("curl")
    return used


@pytest.mark.parametrize("profile", ["cpu", "cpu-oldest"])
def test_every_program_a_committed_record_shows_is_declared_for_its_job(profile):
    for job_id in all_jobs():
        record = store.load(job_id, profile)
        if not record:
            continue
        declared = {p.name for p in programs.needed("site", [job_id])}
        assert _recorded_programs(record) <= declared, f"{job_id} ({profile}) ran {_recorded_programs(record) - declared}"


@pytest.mark.parametrize("mode", ["install", "site", "test"])
def test_every_mode_that_runs_jobs_installs_every_program_they_run(mode):
    installed = {p.name for p in programs.needed(mode)}
    for job_id in all_jobs():
        assert {p.name for p in programs.needed(mode, [job_id])} <= installed, job_id
    assert ("chromium" in installed) == (mode == "test"), "the browser is the tests' own"


def test_every_declared_job_exists():
    for p in programs.PROGRAMS.values():
        assert set(p.jobs) <= set(all_jobs()), f"{p.name}: {set(p.jobs) - set(all_jobs())}"


def test_the_bootstrap_reads_the_packages_to_install_with_the_standard_library_only():
    out = subprocess.run([sys.executable, "-S", "-m", "verify", "programs", "test", "--missing"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert set(out.stdout.split()) <= {p.package for p in programs.PROGRAMS.values()}
    script = (ROOT / "verify" / "bootstrap.sh").read_text()
    assert '-S -m verify programs "$mode" --missing' in script
    assert "command -v nginx" not in script, "the packages are read from the declaration, not listed again"
    ci = (ROOT / ".ci" / "run").read_text()
    assert "apt-get" not in ci, "CI installs nothing the README's commands should install themselves"


def test_a_missing_program_stops_the_run_in_seconds_naming_its_package():
    """VERIFY_NGINX names a binary that is not there: the run stops before starting any engine."""
    env = {**os.environ, "VERIFY_NGINX": "/nonexistent/nginx"}
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "verify", "run", "finish-reasons", "--all"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert "nginx not found at /nonexistent/nginx (set by $VERIFY_NGINX) (for finish-reasons)" in out.stderr
    assert "apt-get install -y nginx" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "starting vLLM" not in out.stdout + out.stderr
    assert time.monotonic() - t0 < 30


def test_a_job_that_runs_a_program_it_was_not_given_fails(tmp_path, monkeypatch):
    """kv-sizing runs no proxy: a collect that looks one up is refused, and its record is not written."""
    job = all_jobs()["kv-sizing"]
    data = store.load("kv-sizing", "cpu")["data"]

    def collect():
        programs.find("caddy")
        return data, {}
    log = RunLog()
    run_one(job, CPU, collect, lambda: {}, {}, tmp_path, log, lambda m: None)
    assert log.failures and "caddy" in log.failures[0] and "verify/config/programs.py" in log.failures[0]
    assert not store.record_path("kv-sizing", "cpu", tmp_path).exists()
    # The same data without the lookup is written.
    run_one(job, CPU, lambda: (data, {}), lambda: {}, {}, tmp_path, RunLog(), lambda m: None)
    assert store.record_path("kv-sizing", "cpu", tmp_path).exists()


def test_a_tool_is_installed_before_the_first_engine_starts(monkeypatch, tmp_path):
    """GuideLLM's install is counted as an install, never as part of bench-definitions' time."""
    from verify.config import tools
    calls = []
    monkeypatch.setattr(tools, "bin_dir", lambda tool, progress=print: calls.append(tool))
    assert tools.prepare_for(["kv-sizing"]) >= 0 and calls == []
    tools.prepare_for(["bench-definitions", "kv-sizing"])
    assert calls == [tools.GUIDELLM]


def test_a_record_names_each_program_its_job_ran_with_version_and_origin():
    from verify.evidence.record import Record
    ran = programs_ran(all_jobs()["other-proxies"])["programs"]
    assert {"caddy", "haproxy", "openssl"} <= set(ran)
    for name in ("caddy", "haproxy"):
        assert ran[name]["installed_by"].startswith(f"Debian package {name} ") and ran[name]["version"]
    assert programs_ran(all_jobs()["kv-sizing"]) == {}, "a job that runs no program records none"
    tool = programs_ran(all_jobs()["bench-definitions"])["programs"]["guidellm"]
    assert tool["installed_by"].startswith("PyPI guidellm==") and not tool["path"].startswith("/")
    # The claim box's origin line names them.
    record = store.load("other-proxies", "cpu")
    record["provenance"]["programs"] = ran
    line = " · ".join(Record(record, store.record_path("other-proxies", "cpu")).origin_parts())
    assert f"caddy {ran['caddy']['installed_by'].split()[-1]} (Debian)" in line
