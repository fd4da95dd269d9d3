"""Each article's jobs stay within their share of a full re-measure (verify/config/budgets.py),
read from the committed records of the embedded profile."""

from __future__ import annotations

import json
import shutil

import pytest

from verify.config import budgets
from verify.config.profiles import get_profile
from verify.paths import EVIDENCE
from verify.registry import all_jobs
from verify.runner.floor import floor


def test_every_article_keeps_to_its_budget():
    f = floor(get_profile("cpu"))
    assert not f.missing, f"jobs without a committed record are not counted: {f.missing}"
    assert f.over_budget() == []


def test_every_article_with_jobs_has_a_budget_and_every_budget_an_article():
    pages = {job.pages[0] for job in all_jobs().values() if job.pages}
    assert pages == set(budgets.ARTICLES_S)


@pytest.fixture()
def evidence(tmp_path):
    root = tmp_path / "evidence"
    for path in EVIDENCE.glob("*/cpu.json"):
        (root / path.parent.name).mkdir(parents=True)
        shutil.copy(path, root / path.parent.name / "cpu.json")
    return root


def _slower(root, job_id: str, seconds: float) -> None:
    path = root / job_id / "cpu.json"
    record = json.loads(path.read_text())
    record["provenance"]["duration_s"] += seconds
    path.write_text(json.dumps(record))


def test_a_job_that_grows_past_its_articles_budget_is_named(evidence):
    """stream-timing is a timing job: it counts in full, so a whole budget more puts streaming.md over."""
    _slower(evidence, "stream-timing", budgets.ARTICLES_S["streaming.md"])
    over = floor(get_profile("cpu"), evidence).over_budget()
    assert len(over) == 1 and over[0].startswith("streaming.md: ")
    assert "stream-timing" in over[0].split("(", 1)[1].split(",")[0]  # the largest job first


def test_a_slower_engine_start_is_over_the_starts_budget(evidence):
    """Every record served by the lora variant names a start as long as the whole starts budget."""
    for path in evidence.glob("*/cpu.json"):
        record = json.loads(path.read_text())
        if (record["provenance"].get("server") or {}).get("variant") == "lora":
            record["provenance"]["server"]["start_seconds"] = budgets.STARTS_S
            path.write_text(json.dumps(record))
    over = floor(get_profile("cpu"), evidence).over_budget()
    assert [line.split(":")[0] for line in over] == ["engine starts"]
    assert "server variant lora" in over[0].split("(", 1)[1].split(",")[0]  # the longest start first
