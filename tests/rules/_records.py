"""Every article's rule tests share these: load a real record captured from a live vLLM server, edit it, decide a claim."""

# The records are the committed ones, written by `verify run`. No server output is invented here or in the
# tests: every edit is a change of a real capture, made on a deep copy.

from __future__ import annotations

import copy
import json
import math
from typing import Callable

import pytest

from verify.evidence import store
from verify.registry import all_jobs

PROFILES = ("cpu", "cpu-oldest")

Edit = Callable[[dict], None]


def record(job_id: str, profile: str = "cpu") -> dict:
    """A deep copy of the committed record's data, free to edit."""
    return copy.deepcopy(store.load(job_id, profile)["data"])


def decide(job_id: str, claim: str, data: dict) -> dict:
    """The verdict of job_id.claim over data, as the job's rule gives it."""
    return all_jobs()[job_id].decide(data)[f"{job_id}.{claim}"]


def every_verdict(job_id: str, data: dict) -> set[str]:
    """The verdicts of all the job's claims over data."""
    return {v["verdict"] for v in all_jobs()[job_id].decide(data).values()}


def compact(chunk: dict) -> str:
    """A chunk written back as the server writes it: 'data: ' and compact JSON."""
    return "data: " + json.dumps(chunk, separators=(",", ":"))


def json_lines(stream: dict) -> list[tuple[dict, dict]]:
    """A recorded stream's JSON events, each with the line (and its arrival time) it came in."""
    return [(x, json.loads(x["line"][6:])) for x in stream["lines"] if x["line"].startswith("data: {")]


def data_times(lines: list[dict]) -> list[float]:
    """The arrival times of a recorded stream's data lines."""
    return [x["t"] for x in lines if x["line"].startswith("data: ")]


def edit_chunks(stream: dict, edit: Callable[[dict], None]) -> None:
    """Apply edit(chunk) to every JSON chunk of a recorded stream, keeping each line's arrival time."""
    for item in stream["lines"]:
        if item["line"].startswith("data: {"):
            chunk = json.loads(item["line"][6:])
            edit(chunk)
            item["line"] = "data: " + json.dumps(chunk)


# The table shape of the rule tests: a claim, one named edit of its real record (None: the record as
# committed) and the verdict the rule must give, with what its reason must say.

def row(claim_id: str, edit: Edit | None, expected: str, **reason) -> tuple:
    """One case: after edit, claim_id's verdict is expected, and its reason passes check(**reason)."""
    return claim_id, edit, expected, reason


def _name(edit: Edit | None) -> str:
    return "as-recorded" if edit is None else edit.__name__


def cases(rows: list[tuple], profiles: tuple[str, ...] = ("cpu",)) -> list:
    """The rows as pytest params, one per profile, with ids naming the claim, the edit and the profile."""
    return [pytest.param(profile, claim_id, edit, expected, reason, id=f"{claim_id}:{_name(edit)}:{profile}")
            for claim_id, edit, expected, reason in rows for profile in profiles]


def check(v: dict, expected: str, because: str | None = None, starts: str = "", ends: str = "",
          contains: str | tuple[str, ...] = ()) -> None:
    """The verdict is expected; its reason is `because` exactly, or starts, ends and contains as given."""
    assert v["verdict"] == expected, v
    if because is not None:
        assert v["because"] == because, v
    assert v["because"].startswith(starts), v
    assert v["because"].endswith(ends), v
    for part in (contains,) if isinstance(contains, str) else contains:
        assert part in v["because"], (part, v)


def decide_edited(claim_id: str, edit: Edit | None, profile: str = "cpu") -> dict:
    """claim_id's verdict over its job's committed record (of profile) after edit."""
    job_id, claim = claim_id.split(".", 1)
    data = record(job_id, profile)
    if edit is not None:
        edit(data)
    return decide(job_id, claim, data)


def exactly(f, target: float, x: float) -> float:
    """The float nearest x at which f gives target to the last bit (f monotone, a few ulps from x): an edit that
    lands exactly on a rule's threshold, where the rule's own arithmetic is equality."""
    up = down = x
    for _ in range(256):
        for c in (up, down):
            if f(c) == target:
                return c
        up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
    raise AssertionError(f"no float near {x} gives exactly {target}")
