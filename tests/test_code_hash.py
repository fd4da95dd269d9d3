"""Code inputs are compared by meaning, not bytes (verify/evidence/inputs.py): a comment, a docstring,
formatting, a renamed helper or a module that moved leaves a record fresh; a changed constant,
condition or call makes exactly its job's records stale.

Each case edits a real job module: in memory for the hash, and in a copy of the checkout for
`verify status`, which reads the committed records."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from verify.evidence.inputs import code_hash

JOB_FILE = ROOT / "verify" / "jobs" / "kv_cache" / "kv_reservation.py"
JOB_ID = "kv-reservation"
SOURCE = JOB_FILE.read_text()


def _private_helper(source: str) -> str:
    found = re.search(r"^def (_\w+)\(", source, re.M)
    assert found, "the job module has a private helper to rename"
    return found.group(1)


def _renamed(source: str) -> str:
    old = _private_helper(source)
    return re.sub(rf"\b{old}\b", "_renamed_helper", source)


def _reformatted(source: str) -> str:
    """Comments and blank lines before every top-level definition, a docstring added to each one-line
    signature, and trailing spaces removed."""
    lines = []
    source_lines = source.splitlines()
    for i, line in enumerate(source_lines):
        if line.startswith(("def ", "class ")):
            lines += ["", "# a comment added", ""]
        lines.append(line.rstrip())
        has_docstring = i + 1 < len(source_lines) and source_lines[i + 1].strip().startswith('"""')
        if line.startswith("def ") and line.endswith(":") and not has_docstring:
            lines.append('    """A docstring that was not there."""')
    return "\n".join(lines) + "\n"


def _import_moved(source: str) -> str:
    assert "from verify.job import" in source
    return source.replace("from verify.job import", "from verify.core.job import")


@pytest.mark.parametrize("edit", [_renamed, _reformatted, _import_moved], ids=lambda f: f.__name__)
def test_an_edit_that_changes_no_meaning_keeps_the_hash(edit):
    edited = edit(SOURCE)
    assert edited != SOURCE
    assert code_hash(edited) == code_hash(SOURCE)


def _threshold_changed(source: str) -> str:
    found = re.search(r"^([A-Z_]+) = (\d+(\.\d+)?)\b", source, re.M)
    assert found, "the job module has a numeric constant"
    return source.replace(found.group(0), f"{found.group(1)} = {found.group(2)}1", 1)


def _condition_changed(source: str) -> str:
    for a, b in ((" >= ", " > "), (" <= ", " < "), (" == ", " != "), (" and ", " or ")):
        if a in source:
            return source.replace(a, b, 1)
    pytest.fail("no condition to change")


def _call_changed(source: str) -> str:
    found = re.search(r"\b(len|round|sum|min|max)\(", source)
    assert found
    other = {"len": "sum", "round": "int", "sum": "len", "min": "max", "max": "min"}[found.group(1)]
    return source[:found.start()] + other + "(" + source[found.end():]


@pytest.mark.parametrize("edit", [_threshold_changed, _condition_changed, _call_changed], ids=lambda f: f.__name__)
def test_an_edit_that_changes_what_runs_changes_the_hash(edit):
    assert code_hash(edit(SOURCE)) != code_hash(SOURCE)


def _marked_timing(source: str) -> str:
    """Every `Claim(...)` call of the module given `timing=True`, as a timing claim is marked."""
    import ast
    calls = [n for n in ast.walk(ast.parse(source))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Claim"]
    assert calls, "the job module makes its claims with Claim(...)"
    lines = source.splitlines(keepends=True)
    for call in sorted(calls, key=lambda c: (c.end_lineno, c.end_col_offset), reverse=True):
        line, col = lines[call.end_lineno - 1], call.end_col_offset - 1  # the call's closing parenthesis
        lines[call.end_lineno - 1] = line[:col] + ", timing=True" + line[col:]
    return "".join(lines)


def test_marking_a_claim_timing_keeps_the_hash_and_a_changed_threshold_still_changes_it():
    """The timing kind says how a differing verdict is read, never how it is decided (verify/job.py)."""
    marked = _marked_timing(SOURCE)
    assert marked != SOURCE and "timing=True" in marked
    assert code_hash(marked) == code_hash(SOURCE)
    assert code_hash(_threshold_changed(marked)) != code_hash(marked)
    # Nor does the field itself: a record may hash verify/job.py (the probe's does, for the process it starts).
    claim_module = (ROOT / "verify" / "job.py").read_text()
    without_field = re.sub(r"^    timing: bool = False\n", "", claim_module, flags=re.M)
    assert without_field != claim_module
    assert code_hash(without_field) == code_hash(claim_module)


# --- in a copy of the checkout, through verify status -----------------------------------------------

def _stale_jobs(root: Path) -> set[str]:
    out = subprocess.run([sys.executable, "-m", "verify", "status", "--json"], cwd=root, capture_output=True,
                         text=True, timeout=300, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return {row["claim"].split(".")[0] for row in json.loads(out.stdout)
            for state in row["profiles"].values() if state["stale"]}


def test_a_rename_a_reformat_and_a_moved_module_leave_every_record_as_fresh_as_before(checkout):
    before = _stale_jobs(checkout)
    job_file = checkout / JOB_FILE.relative_to(ROOT)
    job_file.write_text(_reformatted(_renamed(job_file.read_text())))
    # verify/job.py moves into a package, and every module that imports it follows.
    (checkout / "verify" / "core").mkdir()
    (checkout / "verify" / "core" / "__init__.py").write_text("")
    shutil.move(checkout / "verify" / "job.py", checkout / "verify" / "core" / "job.py")
    for path in (checkout / "verify").rglob("*.py"):
        text = path.read_text()
        moved = re.sub(r"\bverify\.job\b", "verify.core.job", text)
        if moved != text:
            path.write_text(moved)
    assert _stale_jobs(checkout) == before


def test_a_changed_threshold_makes_exactly_that_jobs_records_stale(checkout):
    before = _stale_jobs(checkout)
    job_file = checkout / JOB_FILE.relative_to(ROOT)
    job_file.write_text(_threshold_changed(job_file.read_text()))
    assert _stale_jobs(checkout) == before | {JOB_ID}


def test_a_moved_job_module_that_defines_the_same_thing_stays_fresh(checkout):
    """A shared measurement module moves to another file name: the jobs that import it follow, and
    the set of code they run is the same, so their records stay fresh."""
    before = _stale_jobs(checkout)
    measure = checkout / "verify" / "measure"
    shutil.move(measure / "units.py", measure / "numbers.py")
    for path in (checkout / "verify").rglob("*.py"):
        text = path.read_text()
        moved = text.replace("from verify.measure import units", "from verify.measure import numbers as units") \
                    .replace("verify.measure.units", "verify.measure.numbers")
        if moved != text:
            path.write_text(moved)
    assert _stale_jobs(checkout) == before
