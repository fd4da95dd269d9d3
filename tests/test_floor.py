"""`verify floor`: the least time a full re-measure could take, read from the committed records."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from verify.config.profiles import get_profile
from verify.paths import ROOT
from verify.runner.floor import floor

EVIDENCE = ROOT / "docs" / "evidence"


@pytest.fixture()
def evidence(tmp_path):
    """A copy of the committed cpu records, to edit."""
    root = tmp_path / "evidence"
    for path in EVIDENCE.glob("*/cpu.json"):
        (root / path.parent.name).mkdir(parents=True)
        shutil.copy(path, root / path.parent.name / "cpu.json")
    return root


def _add_seconds(root, job_id: str, seconds: float) -> None:
    path = root / job_id / "cpu.json"
    record = json.loads(path.read_text())
    record["provenance"]["duration_s"] += seconds
    path.write_text(json.dumps(record))


def test_the_floor_is_the_starts_the_timing_jobs_and_half_the_others(evidence):
    f = floor(get_profile("cpu"), evidence)
    assert not f.missing
    assert f.seconds == pytest.approx(sum(f.starts.values()) + sum(f.alone.values()) + sum(f.other.values()) / 2)
    # A timing job is counted alone, in full; a job without timing claims at half (two cores).
    assert "stream-timing" in f.alone and "constraint-kinds" in f.other
    _add_seconds(evidence, "stream-timing", 100.0)
    _add_seconds(evidence, "constraint-kinds", 100.0)
    assert floor(get_profile("cpu"), evidence).seconds == pytest.approx(f.seconds + 150.0)


def test_engine_starts_inside_a_job_are_counted_as_starts_not_as_its_work(evidence):
    f = floor(get_profile("cpu"), evidence)
    record = json.loads((evidence / "offline-generation-defaults" / "cpu.json").read_text())
    inside = record["provenance"]["offline_engine"]["servers"][0]["start_seconds"]
    assert inside > 0
    assert f.other["offline-generation-defaults"] < record["provenance"]["duration_s"] - inside + 1e-6
    assert f.starts["offline engine (offline-generation-defaults)"] >= inside
    # One start per server configuration the runner groups jobs into, at the time its records name.
    assert f.starts["server variant default"] > 0 and "server variant lora" in f.starts


def test_a_job_without_a_record_is_named_not_counted(evidence):
    shutil.rmtree(evidence / "api-server-cpu")
    f = floor(get_profile("cpu"), evidence)
    assert f.missing == ["api-server-cpu"] and "api-server-cpu" not in f.alone
    assert "no committed record (not counted): api-server-cpu" in f.lines()


def test_the_command_prints_the_floor_and_each_article():
    out = subprocess.run([sys.executable, "-m", "verify", "floor"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("floor of a full re-measure: ")
    assert "  streaming.md" in out.stdout


def test_a_start_made_as_the_second_engine_counts_at_half(evidence):
    """A server started beside another engine shared the two cores: its slower start counts at half."""
    f = floor(get_profile("cpu"), evidence)
    group = "server variant max-num-seqs-1"
    alone = f.starts[group]
    for path in evidence.glob("*/cpu.json"):
        record = json.loads(path.read_text())
        if record["provenance"].get("server", {}).get("variant") == "max-num-seqs-1":
            record["provenance"]["server"]["start_seconds"] = 2 * alone + 20
            record["provenance"]["two_engines"] = {"this_engine_bound_to_cpus": "1",
                                                   "other_engine": "server variant default"}
            path.write_text(json.dumps(record))
    assert floor(get_profile("cpu"), evidence).starts[group] == pytest.approx(alone + 10)
