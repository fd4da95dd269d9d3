"""Every claim is blind by damage: whatever one of its job's captures loses, the claim is inconclusive.

Each job's committed cpu record (captured from a live server) is damaged one capture at a time, the way a
real failure looks (an empty answer, an error status, a connection error), and decided through
Job.decide: every claim of the job must then be inconclusive, never the verdict the page expects. A job
that records no capture at all could not be damaged, so it fails here too.
"""

from __future__ import annotations


import pytest

from tests.flips import copy_of
from verify.captures import TAG, iter_captures
from verify.evidence import store
from verify.job import INCONCLUSIVE
from verify.registry import all_jobs


def _empty(capture: dict) -> None:
    """Nothing came back: no lines, no events, no results."""
    if "lines" in capture:
        capture["lines"] = []
    capture["events"] = 0


def _server_error(capture: dict) -> None:
    # An error status the capture does not expect: a burst that sets out to see 503s is damaged by a 500.
    capture["status"] = 503 if 503 not in (capture.get("expect_status") or ()) else 500


def _no_answer(capture: dict) -> None:
    capture["error"] = "ConnectError: [Errno 111] Connection refused"
    capture.pop("expect_error", None)


def _damages(capture: dict):
    yield "empty", _empty
    if "status" in capture:
        yield "HTTP 503", _server_error
    yield "no answer", _no_answer


def _places(node, path=()):
    """The path (keys and indexes) of every tagged capture, as verify/captures.py finds them."""
    if isinstance(node, dict):
        if TAG in node:
            yield path
        for key, item in node.items():
            yield from _places(item, path + (key,))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _places(item, path + (i,))


def _at(data, path) -> dict:
    for step in path:
        data = data[step]
    return data


@pytest.mark.parametrize("job_id", sorted(all_jobs()))
def test_any_damaged_capture_makes_every_claim_of_the_job_inconclusive(job_id):
    job = all_jobs()[job_id]
    data = store.load(job_id, "cpu")["data"]
    places = list(_places(data))
    assert len(places) == sum(1 for _ in iter_captures(data))
    assert places, f"{job_id} records no capture, so nothing could show a failed measurement"
    not_blind = []
    for where in places:
        for name, damage in _damages(_at(data, where)):
            damaged = copy_of(data)
            damage(_at(damaged, where))
            decided = job.decide(damaged)
            verdicts = {cid: v["verdict"] for cid, v in decided.items()}
            if set(verdicts.values()) != {INCONCLUSIVE} or not all("a capture failed" in v["because"]
                                                                      for v in decided.values()):
                not_blind.append(f"{'.'.join(map(str, where))} ({name}): {verdicts}")
    assert not not_blind, f"{job_id}: damage that still decides: {not_blind[:5]}"
