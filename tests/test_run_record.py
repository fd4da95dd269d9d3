"""The last full re-measure reaches the status page from the record `verify run --all` writes, never typed."""

from __future__ import annotations

import json

from verify.evidence.run_record import load_run_record, write_run_record
from verify.paths import ROOT
from verify.runner.run_log import RunLog
from verify.site import render


def _status_page(warnings: list) -> str:
    return render.render_page("status.md", (ROOT / "docs" / "status.md").read_text(), warnings.append)


def _log() -> RunLog:
    # A run of 100 s: a 30 s start, one engine up 60 s with jobs running for 45 s of it (one 10 s span alone,
    # two overlapping shared spans covering 35 s), installs 5 s.
    log = RunLog(installs_s=5.0)
    log.start("server default", "server", 30.0, "spawn to healthy")
    log.engines_up.append(("default", 30.0, 90.0))
    log.spans += [("a", 30.0, 40.0, False, "default"), ("b", 40.0, 70.0, True, "default"),
                  ("c", 45.0, 75.0, True, "default")]
    log.changes.append(("a.claim", "confirmed", "refuted"))
    return log


def test_the_record_keeps_the_split_the_summary_printed(tmp_path):
    log = _log()
    path = write_run_record("cpu", "0.32.0", 3, len(log.starts), log.split(100.0), log.changes, tmp_path)
    assert path == tmp_path / "full-run-cpu.json" and [p.name for p in tmp_path.iterdir()] == [path.name]
    saved = load_run_record("cpu", tmp_path)
    assert saved["generated"].startswith("written by verify run --all")
    assert (saved["wall_s"], saved["jobs"], saved["engine_starts"]) == (100.0, 3, 1)
    assert saved["split_s"]["engine starts"] == 30.0 and saved["split_s"]["jobs alone"] == 10.0
    assert saved["split_s"]["jobs sharing the engine"] == 35.0 and saved["split_s"]["engine idle"] == 15.0
    assert saved["engine_busy_fraction"] == 0.75
    assert saved["verdicts_changed"] == [{"claim": "a.claim", "before": "confirmed", "now": "refuted"}]
    assert load_run_record("t4", tmp_path) is None


def test_the_status_page_shows_the_recorded_run(monkeypatch, tmp_path):
    log = _log()
    write_run_record("cpu", "0.32.0", 3, 1, log.split(100.0), log.changes, tmp_path)
    record = json.loads((tmp_path / "full-run-cpu.json").read_text())
    monkeypatch.setattr(render, "EVIDENCE", tmp_path)
    warnings: list = []
    page = _status_page(warnings)
    assert warnings == []
    assert "<strong>1 min 40 s</strong> against a goal of 25 min 00 s" in page
    assert "3 jobs in 1 engine starts" in page and "A job was running 75 % of the time" in page
    assert "<code>a.claim</code> confirmed to refuted" in page and record["git"]["commit"][:12] in page
    assert 'href="../evidence/full-run-cpu.json"' in page or 'href="evidence/full-run-cpu.json"' in page


def test_without_a_record_the_status_page_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(render, "EVIDENCE", tmp_path)
    assert "No full re-measure is on record." in _status_page([])

