"""Presentation is site code: how evidence looks can change without making any record stale.

Each test works on a copy of the checkout (its verify/, docs/ and snippets/), edits the
copy, and asks the copy's own `verify status` and `verify render` what changed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from verify.registry import all_jobs
from verify.site import charts, views


def _verify(root: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "verify", *args], cwd=root, capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def _stale(root: Path) -> list[str]:
    r = _verify(root, "status")
    assert r.returncode == 0, r.stderr[-2000:]
    return [line.split()[0] for line in r.stdout.splitlines() if " STALE " in line]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_a_chart_and_table_edit_changes_the_page_and_leaves_every_record_fresh(checkout):
    assert _stale(checkout) == []
    # How every chart is drawn (its text size) and how one table is headed.
    _edit(checkout / "verify/site/charts.py", "FONT = 13\n", "FONT = 17\n")
    _edit(checkout / "verify/site/views/kv_cache.py", '"tokens generated", "started"', '"tokens made (edited)", "started"')
    assert _stale(checkout) == []
    r = _verify(checkout, "render", "--out", str(checkout / "rendered"))
    assert r.returncode == 0, r.stderr[-2000:]
    page = (checkout / "rendered" / "docs" / "kv-cache.md").read_text()
    assert "tokens made (edited)" in page
    assert 'font-size="17"' in page and 'font-size="13"' not in page


def test_the_same_edit_in_a_job_module_makes_its_records_stale(checkout):
    """The counter-test: the job module is an input of its records, so a change of what it does there is seen
    (a comment would not be: code is compared by meaning, tests/test_code_hash.py)."""
    _edit(checkout / "verify/jobs/kv_cache/kv_timeline.py", "STAGGER_S = 1.0\n", "STAGGER_S = 1.5\n")
    assert set(_stale(checkout)) == {c.id for c in all_jobs()["kv-timeline"].claims}


def test_every_view_belongs_to_a_job_of_its_article_and_every_views_module_imports():
    """A view keyed by a job that was renamed or removed, or filed under another article, would never be shown."""
    folder = ROOT / "verify/site/views"
    assert [p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"] == [], \
        "one module per article, verify/site/views/<article>.py, not a folder"
    assert set(views.by_article()) == {p.stem for p in folder.glob("*.py") if not p.name.startswith("_")}
    jobs = all_jobs()
    for article, by_id in views.by_article().items():
        for job_id, view in by_id.items():
            assert job_id in jobs, f"verify/site/views/{article}.py has a view of {job_id!r}, which is no job"
            assert views.article_of(jobs[job_id]) == article, \
                f"the view of {job_id!r} is in {article}.py; its job is in verify/jobs/{views.article_of(jobs[job_id])}/"
            assert isinstance(view, views.View) and (view.fragments or view.charts or view.pages), job_id
    for job in jobs.values():
        assert isinstance(views.of(job), views.View), job.id


def test_every_evidence_block_on_a_page_has_its_view():
    """Each {{ evidence(...) }} and {{ chart(...) }} names a fragment or chart its job's view defines."""
    from verify.paths import DOCS
    from verify.verdicts.directives import parse_directives
    jobs, shown = all_jobs(), 0
    for path in sorted(DOCS.rglob("*.md")):
        page = path.relative_to(DOCS).as_posix()
        for d in parse_directives(path.read_text(encoding="utf-8"), page):
            if d.name not in ("evidence", "chart"):
                continue
            job_id, name = d.args[:2]
            assert job_id in jobs, f"{page}:{d.line}: no job {job_id!r}"
            view = views.of(jobs[job_id])
            assert name in (view.fragments if d.name == "evidence" else view.charts), \
                f"{page}:{d.line}: {views.where(jobs[job_id])} has no {d.name} {name!r}"
            shown += 1
    assert shown >= 80
    for job in jobs.values():  # a generated page is where its view writes it
        assert all((DOCS / rel).is_file() for rel in views.of(job).pages), job.id


def _private_reads(tree) -> list[str]:
    """`module._name` and `from module import _name` where module is under verify/jobs/."""
    import ast
    modules, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("verify.jobs"):
            for a in node.names:
                if (ROOT / node.module.replace(".", "/") / f"{a.name}.py").is_file():
                    modules.add(a.asname or a.name)  # a job module bound to a name
                elif a.name.startswith("_"):
                    found.append(f"from {node.module} import {a.name}")
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name.startswith("verify.jobs") and a.asname}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules \
                and node.attr.startswith("_") and not node.attr.startswith("__"):
            found.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
    return found


def test_views_read_a_job_through_its_public_names_only():
    """A job's private helpers are its own to rename; what a view reads is named without an underscore."""
    import ast
    reads = {p.relative_to(ROOT).as_posix(): r for p in (ROOT / "verify/site/views").rglob("*.py")
             if (r := _private_reads(ast.parse(p.read_text())))}
    assert reads == {}


def test_a_private_read_is_caught():
    import ast
    assert _private_reads(ast.parse("from verify.jobs.kv_cache import kv_timeline as job\njob._x(1)\n")) \
        == ["job._x (line 2)"]
    assert _private_reads(ast.parse("from verify.jobs.lora._together import _span\n")) \
        == ["from verify.jobs.lora._together import _span"]


def test_no_job_module_draws_or_formats_a_page():
    for path in (ROOT / "verify/jobs").rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"<(svg|table|div|pre)\b", text), path


@pytest.mark.parametrize("job", [j for j in all_jobs().values() if views.of(j).charts], ids=lambda j: j.id)
@pytest.mark.parametrize("profile", ["cpu", "cpu-oldest"])
def test_every_chart_is_drawn_from_its_committed_records(job, profile):
    from verify.evidence.record import Record
    if profile not in job.profiles:
        pytest.skip(f"{job.id} does not run on {profile}")
    record = Record.load(job.id, profile)
    assert record is not None
    for name, chart in views.of(job).charts.items():
        spec = chart(record.raw)
        assert not isinstance(spec, str), f"{job.id} {name}: a chart is a spec for verify/site/charts.py"
        svg = charts.svg(spec)
        assert svg.startswith("<svg") and svg.endswith("</svg>") and "\n\n" not in svg
        assert "<title>" in svg and "<desc>" in svg and "#" not in re.sub(r"&#x?[0-9a-fA-F]+;", "", svg), (job.id, name)


def test_a_chart_label_is_escaped_like_any_model_output():
    spec = charts.Bars("a {{ claim('x') }} title", "x <b>", "y", (charts.Bar("--8<-- /etc/passwd\n\nnext", 1.0),))
    svg = charts.svg(spec)
    assert "{{" not in svg and "<b>" not in svg and "--8<--" not in svg and "\n\n" not in svg


def test_a_reading_that_cannot_be_drawn_names_the_chart():
    spec = charts.XY("TTFT by length", "tokens", "ms", (charts.Line("ttft", ((1.0, float("nan")),)),))
    with pytest.raises(ValueError, match="'TTFT by length' holds nan"):
        charts.svg(spec)


def test_negative_values_stay_inside_the_frame():
    svg = charts.svg(charts.XY("t", "x", "y", (charts.Line("a", ((0.0, -3.0), (1.0, 2.0))),)))
    height = float(re.search(r'viewBox="0 0 \d+ (\d+)"', svg).group(1))
    ys = [float(y) for y in re.findall(r'points="[^"]*?,([\d.-]+)', svg)]
    assert all(0 <= y <= height for y in ys)
    bars = charts.svg(charts.Bars("t", "x", "y", (charts.Bar("a", -1.0), charts.Bar("b", 2.0))))
    assert all(float(h) >= 0 for h in re.findall(r'height="([\d.-]+)" class="bar', bars))
