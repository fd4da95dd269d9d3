"""The record of the last full re-measure on a profile: where its wall time went, never typed.

`verify run --all` (every job, into the site's own evidence, none failed) writes
docs/evidence/full-run-<profile>.json; the status page shows it beside the floor and the goal.
A run that failed keeps the last good record, as job records do.
"""

from __future__ import annotations

import json
from pathlib import Path

from verify.evidence.store import write_atomic
from verify.paths import EVIDENCE

GENERATED_NOTE = "written by verify run --all (verify/evidence/run_record.py); do not edit by hand"


def run_record_name(profile: str) -> str:
    return f"full-run-{profile}.json"


def write_run_record(profile: str, engine_version: str | None, jobs: int, engine_starts: int,
                     split: dict[str, float], changes: list[tuple[str, str, str]],
                     root: Path | None = None) -> Path:
    """Write the run's record atomically and return its path."""
    # Imported here: the site reads this record with only the docs extra installed (no httpx).
    from verify.evidence.provenance import git_commit, hardware, utc_now
    record = {
        "generated": GENERATED_NOTE,
        "profile": profile,
        "engine_version": engine_version,
        "finished": utc_now(),
        "git": git_commit(),
        "hardware": hardware(),
        "jobs": jobs,
        "engine_starts": engine_starts,
        "wall_s": round(split["wall"], 1),
        "split_s": {k: round(v, 1) for k, v in split.items() if k not in ("wall", "engine busy fraction")},
        "engine_busy_fraction": round(split["engine busy fraction"], 3),
        "verdicts_changed": [{"claim": c, "before": b, "now": n} for c, b, n in changes],
    }
    path = (root or EVIDENCE) / run_record_name(profile)
    write_atomic(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return path


def load_run_record(profile: str, root: Path | None = None) -> dict | None:
    path = (root or EVIDENCE) / run_record_name(profile)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
