"""The README's site command: the live sample it measures on every run, the agreement it requires with
the committed records, the claims it says rest on records, and where a run's wall time went.

Recorded data here is the committed evidence, captured from a real vLLM server; disagreements are
made by editing those real records, never by inventing server output.
"""

from __future__ import annotations

import contextlib
import copy
import json

import pytest

from verify.runner.grouping import group_key
from verify.runner.run import run
from verify.runner.run_log import RunLog
from verify.config.profiles import DEFAULT_VARIANT, get_profile
from verify.config.sample import SAMPLE
from verify.errors import VerifyError
from verify.evidence import store
from verify.job import OFFLINE
from verify.registry import all_jobs
from verify.config.timing import timing_claims

CPU = get_profile("cpu")


def test_the_sample_needs_one_server_start_and_the_offline_engine():
    jobs = [all_jobs()[j] for j in SAMPLE]
    assert {group_key(j) for j in jobs} == {"offline engine", f"server variant {DEFAULT_VARIANT}"}


def test_the_sample_covers_a_stream_a_cancellation_a_proxy_the_kv_cache_and_offline_generation():
    records = {j: store.load(j, "cpu") for j in SAMPLE}
    text = {j: json.dumps(r["data"]) for j, r in records.items()}
    assert any('"capture": "sse"' in t for t in text.values()), "a stream"
    assert any(r["provenance"].get("proxies") for r in records.values()), "a proxy"
    assert any("cancel" in j for j in SAMPLE), "a cancellation"
    assert any(all_jobs()[j].article == "kv_cache" for j in SAMPLE), "the KV cache"
    assert any(all_jobs()[j].engine == OFFLINE for j in SAMPLE), "offline generation"


def _sample_run(tmp_path, monkeypatch, edit=lambda record: None, hardware=None):
    """verify run --sample where nothing is stale, with the sample's 'measurement' being the committed
    record (edited by `edit`): what a run that measured exactly that would conclude."""
    committed, sample_root = tmp_path / "evidence", tmp_path / "sample"
    for job_id in all_jobs():
        for profile in ("cpu",):
            record = store.load(job_id, profile)
            if record:
                store.save(record, committed)
    monkeypatch.setattr("verify.runner.run.is_fresh", lambda job, profile, root=None: True)

    def fake_run_one(job, profile, collect, engine_facts, mfacts, evidence_root, log, progress, eta=None, **kw):
        record = copy.deepcopy(store.load(job.id, "cpu"))
        edit(record)
        if hardware:
            record["provenance"]["hardware"] = hardware
        store.save(record, log.root_for(job.id, evidence_root))
        log.jobs.append((job.id, group_key(job), 1.0, "sampled", 0.0))

    @contextlib.contextmanager
    def no_server(*a, **k):
        class S:
            start_seconds, port, url = 1.0, 9, "http://127.0.0.1:9"

            def alive(self):
                return True
        yield S()
    # Patched where it is looked up: the server groups call run_one; the offline group is replaced whole below.
    monkeypatch.setattr("verify.runner.server_groups.run_one", fake_run_one)
    monkeypatch.setattr("verify.live.server.server_for", no_server)
    monkeypatch.setattr("verify.runner.server_groups.server_facts", lambda s: {})
    monkeypatch.setattr("verify.runner.run.run_offline_group",
                        lambda jobs, profile, mfacts, root, log, progress, eta, parts: [
                            fake_run_one(j, profile, None, None, None, root, log, progress) for j in jobs])
    monkeypatch.setattr("verify.runner.run.machine_facts", lambda python=None: {})
    printed = []
    try:
        return run(None, CPU, evidence_root=committed, progress=printed.append, sample=SAMPLE,
                          sample_root=sample_root), printed
    except VerifyError as e:
        return e, printed


def test_a_sample_that_agrees_passes_and_says_what_rests_on_records(tmp_path, monkeypatch):
    result, printed = _sample_run(tmp_path, monkeypatch)
    assert result == 0, result
    text = "\n".join(printed)
    sampled_claims = sum(len(all_jobs()[j].claims) for j in SAMPLE)
    total = sum(len(j.claims) for j in all_jobs().values())
    assert f"claims on the site (cpu): {total}" in text
    assert f"{sampled_claims} in the {len(SAMPLE)} job(s) of the live sample" in text
    assert f"resting on committed records: {total - sampled_claims}" in text
    assert "measured 2026-" in text and " cores" in text  # the records' dates and hardware
    # The committed evidence was not touched: the sample's records went to their own folder.
    assert (tmp_path / "sample" / SAMPLE[0] / "cpu.json").is_file()


def test_a_sampled_verdict_that_differs_from_its_committed_record_fails_the_run(tmp_path, monkeypatch):
    def flip(record):
        if record["job"] == "kv-sizing":
            record["claims"]["kv-sizing.cpu-block-size"]["verdict"] = "refuted"
    result, printed = _sample_run(tmp_path, monkeypatch, flip)
    assert isinstance(result, VerifyError)
    assert "kv-sizing.cpu-block-size: committed confirmed, measured now refuted" in result.message


def test_a_timing_verdict_that_differs_on_other_hardware_is_a_note(tmp_path, monkeypatch):
    job = next(j for j in SAMPLE if timing_claims(all_jobs()[j]))
    claim = sorted(timing_claims(all_jobs()[job]))[0]

    def flip(record):
        if record["job"] == job:
            record["claims"][claim]["verdict"] = "refuted"
    other = {"cpu": "Some Other CPU", "cores": 4, "fingerprint": "Some Other CPU / 4 cores / avx2"}
    result, printed = _sample_run(tmp_path, monkeypatch, flip, hardware=other)
    assert result == 0
    assert any(claim in line and "other hardware" in line for line in printed)
    # The same difference on the committed record's hardware fails.
    result, _ = _sample_run(tmp_path, monkeypatch, flip)
    assert isinstance(result, VerifyError) and claim in result.message


def test_the_split_of_a_runs_wall_time_adds_up():
    log = RunLog()
    log.start("server variant default", "server", 30.0, "launch to healthy")
    log.engines_up.append(("server variant default", 100.0, 200.0))
    default = "server variant default"
    log.spans += [("a", 100.0, 140.0, False, default), ("b", 150.0, 160.0, True, default),
                  ("c", 155.0, 170.0, True, default)]
    split = log.split(wall_s=150.0)
    assert split["jobs alone"] == 40.0 and split["jobs sharing the engine"] == 20.0
    assert split["engine idle"] == 40.0  # 100 s up, 60 s of it with a job in flight
    assert split["engine busy fraction"] == pytest.approx(0.6)
    assert split["other"] == pytest.approx(150.0 - 30.0 - 40.0 - 20.0 - 40.0)
    lines = "\n".join(log.summary(150.0))
    assert "engine idle 40.0 s" in lines and "60 %" in lines and "floor" not in lines


def test_time_with_two_engines_up_counts_once_in_the_split():
    # The default server up 100-200 s; a second engine launched at 110 s, up 120-170 s (its start 10 s, beside);
    # jobs: one alone on the default server 100-110, one on each engine inside the window, one alone 175-195.
    log = RunLog()
    log.start("server variant default", "server", 30.0, "launch to healthy")
    log.start("server variant lora-max-2", "server", 10.0, "launch to healthy", beside=True)
    log.engines_up += [("server variant default", 100.0, 200.0), ("server variant lora-max-2", 120.0, 170.0)]
    log.spans += [("a", 100.0, 110.0, False, "server variant default"),
                  ("b", 110.0, 160.0, False, "server variant default"),
                  ("c", 125.0, 165.0, False, "server variant lora-max-2"),
                  ("d", 175.0, 195.0, False, "server variant default")]
    log.beside.append((110.0, 170.0))  # from the second engine's launch to its stop
    split = log.split(wall_s=150.0)
    assert split["two engines at once"] == 60.0
    assert split["engine starts"] == 30.0  # the second engine's start is inside the window
    assert split["jobs alone"] == 10.0 + 20.0  # a's and d's parts outside the window
    assert split["engine idle"] == 5.0 + 5.0  # 170-175 and 195-200 on the default server
    # Busy: default 10 + 50 + 20 of its 100 s, the second engine 40 of its 50 s.
    assert split["engine busy fraction"] == pytest.approx(120.0 / 150.0)
    assert split["other"] == pytest.approx(150.0 - 30.0 - 60.0 - 30.0 - 10.0)
    assert [s["name"] for s in log.quiet_starts()] == ["server variant default"]


def test_the_offline_childs_jobs_are_counted_once_in_the_split():
    # The offline child up 100 s: an engine start (20 s) and a server an offline job started (25 s, inside its
    # 60 s); a job with a server phase: 10 s offline, then 30 s on the default server (its span, alone).
    log = RunLog(offline_up_s=100.0)
    log.start("offline engine", "offline", 20.0, "launch to constructed", offline_child=True)
    log.start("server on the job's copy of the model (x)", "server", 25.0, "launch to healthy", offline_child=True)
    log.start("server variant default", "server", 30.0, "launch to healthy")
    log.engines_up.append(("server variant default", 200.0, 240.0))
    log.jobs += [("x", "offline engine", 60.0, "ok", 25.0), ("y", "offline engine", 40.0, "ok", 0.0)]
    log.spans.append(("y", 205.0, 235.0, False, "server variant default"))
    split = log.split(wall_s=180.0)
    assert split["engine starts"] == 75.0
    assert split["jobs alone"] == 35.0 + 10.0 + 30.0  # x less its server's start, y's offline part, y's phase
    assert split["engine idle"] == 10.0 + 10.0  # the child: 100 - 45 - 45; the server: 40 - 30
    assert split["other"] == pytest.approx(180.0 - 75.0 - 75.0 - 20.0)
    # Durations that add up to more than the child was up (a start inside a job's seconds) are capped.
    log.jobs[0] = ("x", "offline engine", 90.0, "ok", 0.0)
    assert log.split(wall_s=180.0)["jobs alone"] == 55.0 + 30.0
