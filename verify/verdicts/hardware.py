"""Whether a record was measured on the machine its page was checked against.

A timing claim (one whose verdict rests on how fast the machine is; verify/config/timing.py lists
them) can flip on a CPU with fewer cores or without AVX-512 although
no sentence is wrong. The page was checked against the committed record (the one at git HEAD);
when a record now read came from other hardware than that one and decides a timing claim
otherwise, `verify check` and the build report a hardware difference instead of failing. Every
other verdict that differs still fails.

Hardware is compared by `fingerprint` (CPU model, cores, vector extensions, GPUs;
verify/evidence/provenance.py) where both records have one, else by CPU model and core count.
Without a committed record to compare with (no git, a new job) a record counts as the reference:
nothing is excused.
"""

from __future__ import annotations

import json
import subprocess
from functools import lru_cache

from verify.evidence import store
from verify.paths import EVIDENCE, ROOT


def describe(hw: dict) -> str:
    """The hardware in one line: its fingerprint, or model and cores where it has none."""
    return hw.get("fingerprint") or f"{hw.get('cpu', '?')} / {hw.get('cores')} cores"


def same(a: dict, b: dict) -> bool:
    if a.get("fingerprint") and b.get("fingerprint"):
        return a["fingerprint"] == b["fingerprint"]
    return (a.get("cpu"), a.get("cores"), a.get("gpus")) == (b.get("cpu"), b.get("cores"), b.get("gpus"))


@lru_cache(maxsize=None)
def _committed(job_id: str, profile: str) -> str | None:
    # The repository's record, whichever evidence folder this run reads.
    label = store.record_path(job_id, profile, EVIDENCE).resolve().relative_to(ROOT).as_posix()
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:{label}"], capture_output=True, text=True)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def committed(job_id: str, profile: str) -> dict | None:
    """The hardware of the record committed at HEAD for this job and profile, if there is one."""
    text = _committed(job_id, profile)
    try:
        return json.loads(text)["provenance"]["hardware"] if text else None
    except (ValueError, KeyError, TypeError):
        return None


def other_than_committed(hw: dict, job_id: str, profile: str) -> dict | None:
    """The committed record's hardware when `hw` differs from it; None when they match or nothing is committed."""
    reference = committed(job_id, profile)
    return reference if reference is not None and not same(hw, reference) else None
