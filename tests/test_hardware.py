"""Timing verdicts on other hardware: reported as a hardware difference, never as a contradicted sentence.

The records are the committed ones; a run on another machine is stood for by editing a copy of
one: its hardware line, and its stored verdict for one claim (what that machine decided).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from verify.verdicts import hardware
from verify.evidence import store
from verify.paths import ROOT
from verify.registry import all_jobs
from verify.config.timing import timing_claims
from verify.verdicts.agreement import Contradiction, HardwareDifference, claim_state, forget

OTHER = {"machine": "x86_64", "cores": 4, "cpu": "Intel(R) Xeon(R) Platinum 8370C", "cpu_flags": ["avx", "avx2"],
         "fingerprint": "Intel(R) Xeon(R) Platinum 8370C / 4 cores / avx+avx2"}
TIMING = "throughput.rises-with-concurrency"
NOT_TIMING = "billing.n-bills-prompt-once"


def test_every_timing_claim_a_view_declares_is_a_claim_of_that_job():
    declared = 0
    for job in all_jobs().values():
        own = {c.id for c in job.claims}
        assert timing_claims(job) <= own, job.id
        declared += len(timing_claims(job))
    assert declared >= 70


def test_hardware_is_compared_by_fingerprint_where_both_have_one_else_by_model_and_cores():
    epyc = {"cpu": "AMD EPYC", "cores": 2}
    assert hardware.same(epyc, {**epyc, "cpu_flags": ["avx2"], "fingerprint": "AMD EPYC / 2 cores / avx2"})
    assert not hardware.same(epyc, {"cpu": "AMD EPYC", "cores": 4})
    assert not hardware.same({**epyc, "fingerprint": "AMD EPYC / 2 cores / avx2"},
                             {**epyc, "fingerprint": "AMD EPYC / 2 cores / avx2+avx512f"})


def test_the_committed_record_is_the_reference_and_a_fresh_copy_of_it_is_not_other_hardware():
    committed = hardware.committed("throughput", "cpu")
    assert committed and committed.get("cpu")
    assert hardware.other_than_committed(committed, "throughput", "cpu") is None
    assert hardware.other_than_committed(OTHER, "throughput", "cpu") == committed
    assert hardware.committed("no-such-job", "cpu") is None


def _evidence_copy(tmp_path, claim_id: str, hw: dict | None) -> tuple:
    """A copy of the evidence where one claim's record says the opposite, measured on `hw`."""
    from verify.registry import find_claim
    job, _ = find_claim(claim_id)
    root = tmp_path / "evidence"
    shutil.copytree(store.record_path(job.id, "cpu").parent.parent, root)
    path = store.record_path(job.id, "cpu", root)
    raw = json.loads(path.read_text())
    was = raw["claims"][claim_id]["verdict"]
    raw["claims"][claim_id]["verdict"] = "refuted" if was == "confirmed" else "confirmed"
    if hw is not None:
        raw["provenance"]["hardware"] = hw
    path.write_text(json.dumps(raw))
    forget()
    return root, was


@pytest.mark.parametrize("claim_id, hw, kind", [
    (TIMING, OTHER, HardwareDifference),       # timing claim, other machine: a hardware difference
    (TIMING, None, Contradiction),             # timing claim, the reference machine: the prose is wrong
    (NOT_TIMING, OTHER, Contradiction),        # not a timing claim: wrong on any machine
])
def test_a_differing_verdict_is_read_by_claim_kind_and_hardware(tmp_path, claim_id, hw, kind):
    root, page_says = _evidence_copy(tmp_path, claim_id, hw)
    problem = claim_state(claim_id, "cpu", root).problem(page_says)
    forget()
    assert type(problem) is kind
    if kind is HardwareDifference:
        assert OTHER["fingerprint"] in problem and hardware.describe(hardware.committed("throughput", "cpu")) in problem


def test_verify_check_reports_a_hardware_difference_in_the_job_summary_and_passes(tmp_path):
    root, _ = _evidence_copy(tmp_path, TIMING, OTHER)
    summary = tmp_path / "summary.md"
    env = {"PATH": "/usr/bin:/bin", "GITHUB_STEP_SUMMARY": str(summary)}
    done = subprocess.run([sys.executable, "-m", "verify", "check", "--evidence-dir", str(root)], cwd=ROOT,
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "verify check: note: " in done.stderr and f"claim {TIMING!r} is a timing claim" in done.stderr
    assert TIMING in summary.read_text() and "Reported, not failed" in summary.read_text()


def test_verify_check_still_fails_a_non_timing_claim_on_other_hardware(tmp_path):
    root, _ = _evidence_copy(tmp_path, NOT_TIMING, OTHER)
    done = subprocess.run([sys.executable, "-m", "verify", "check", "--evidence-dir", str(root)], cwd=ROOT,
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and f"page says claim {NOT_TIMING!r}" in done.stderr


def test_a_claim_box_on_other_hardware_says_so_instead_of_calling_the_prose_out_of_date(tmp_path):
    from verify.site import html
    from verify.verdicts.standing import standing
    root, page_says = _evidence_copy(tmp_path, TIMING, OTHER)
    st = standing(TIMING, page_says, "cpu", root)
    forget()
    assert st.other_hardware and st.on_page.verdict != page_says
    box = html.claim_box(st, "")
    assert "on other hardware" in box and "The prose is out of date" not in box


def test_verify_render_reports_a_hardware_difference_and_passes(tmp_path, monkeypatch, capsys):
    """The tree Zensical builds is rendered like the MkDocs build: a timing verdict on other hardware is
    a note, not a failure (seen in a fresh-clone site command on another machine)."""
    from verify.cli import main
    root, _ = _evidence_copy(tmp_path, TIMING, OTHER)
    monkeypatch.setattr(store, "EVIDENCE", root)
    forget()
    code = main(["render", "--out", str(tmp_path / "rendered")])
    forget()
    err = capsys.readouterr().err
    assert code == 0, err
    assert "verify render: note: " in err and f"claim {TIMING!r} is a timing claim" in err
