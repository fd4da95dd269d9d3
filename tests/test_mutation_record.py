"""The rules' mutation score reaches the status page from the record tests/mutation.sh writes, never typed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from verify.paths import EVIDENCE, ROOT
from verify.site import render
from verify.site.render import MUTATION_RECORD

SCORE = ROOT / "tests" / "mutation_score.py"


def _status_page(warnings: list) -> str:
    return render.render_page("status.md", (ROOT / "docs" / "status.md").read_text(), warnings.append)


def test_the_score_script_writes_a_record_of_what_it_counted(tmp_path):
    # mutmut's `results --all true` lines, in its own format (module.x_function__mutmut_N: status).
    results = tmp_path / "results.txt"
    results.write_text("\n".join([
        "    verify.jobs.a.x_decide_one__mutmut_1: killed",
        "    verify.jobs.a.x_decide_one__mutmut_2: survived",
        "    verify.jobs.a.x_decide_one__mutmut_3: timeout",
        "    verify.jobs.a.x_collect__mutmut_1: survived",  # not a rule: left out of the score
    ]) + "\n")
    record = tmp_path / "score.json"
    out = subprocess.run([sys.executable, str(SCORE), str(results), "--record", str(record), "--commit", "abc123",
                          "--seconds", "60"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    saved = json.loads(record.read_text())
    assert (saved["killed"], saved["tried"], saved["score_percent"]) == (2, 3, 66.7)
    assert saved["commit"] == "abc123" and saved["survivors"] == {"verify.jobs.a.decide_one": 1}
    assert saved["generated"].startswith("written by tests/mutation.sh")


def test_the_status_page_shows_the_committed_runs_score():
    path = EVIDENCE / MUTATION_RECORD
    if not path.is_file():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: run bash tests/mutation.sh and commit its record")
    record = json.loads(path.read_text())
    warnings: list = []
    page = _status_page(warnings)
    assert warnings == []
    assert f"<strong>{record['score_percent']} %</strong>" in page
    assert f"{record['killed']} of {record['tried']}" in page and record["commit"][:12] in page
    assert f'href="evidence/{MUTATION_RECORD}"' in page or f'href="../evidence/{MUTATION_RECORD}"' in page


def test_without_a_record_the_status_page_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(render, "EVIDENCE", tmp_path)
    warnings: list = []
    assert "No mutation run is on record." in _status_page(warnings)
