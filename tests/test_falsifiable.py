"""Every claim in the registry can be shown wrong by data, and made blind by damage.

Replays the committed cpu records (captured from a live vLLM server by `verify run`). For each
claim, tests/flips.py searches one edit of its real record that turns its verdict to the opposite
one: a rule no single change can turn would read the same whatever the server did. The damage half
(a failed capture makes every claim inconclusive) is test_run_machinery's, per job, for every job.
A new claim cannot land without a flip: it is searched like the rest. Only two kinds are not
searched: the claims in HAND_FLIPS, whose rule reads a trend over many values or a pair of values
that must move together, so each has a hand-made edit of its record that shows the server behaving
the other way (kept with its article's rule tests, in tests/rules/flips_<article>.py, and collected
here); and the few in UNFLIPPABLE, each with its reason.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import json
from pathlib import Path
from typing import Callable

import pytest

from tests.flips import OPPOSITE, each_text_parsed_once, find_flip
from verify.evidence import store
from verify.job import INCONCLUSIVE
from verify.registry import all_claims, all_jobs

BUDGET = 5000  # edits tried per claim before giving up


# Hand-made edits live with their article's rule tests: tests/rules/flips_<article>.py, each a HAND_FLIPS
# mapping of claim to a named, described function. Each changes a deep copy of the committed record's data,
# in place, into what a server that behaves the other way would have recorded, and no more than the claim's
# rule needs. They are written against the records' structure, not their values, so they keep working on
# re-recorded data.
RULES = Path(__file__).resolve().parent / "rules"


def _flip_modules() -> dict[str, dict[str, Callable[[dict], None]]]:
    """Each tests/rules/flips_<article>.py's HAND_FLIPS, by article."""
    return {path.stem.removeprefix("flips_"): importlib.import_module(f"tests.rules.{path.stem}").HAND_FLIPS
            for path in sorted(RULES.glob("flips_*.py"))}


def _hand_flips() -> dict[str, Callable[[dict], None]]:
    """Every article's hand-made edits in one mapping; a claim given two is an error."""
    found: dict[str, Callable[[dict], None]] = {}
    for article, flips in _flip_modules().items():
        for claim_id, edit in flips.items():
            if claim_id in found:
                raise ValueError(f"{claim_id}: a hand-made edit in two modules (the second in flips_{article}.py)")
            found[claim_id] = edit
    return found


HAND_FLIPS = _hand_flips()

# Claims no honest edit can turn to the opposite verdict, each with why. The set may only shrink.
UNFLIPPABLE = {
    "chunk-shapes.empty-mid-stream": "'can appear' is existential: one sighting confirms it, and streams without "
                                     "one are inconclusive, never refuted, so there is no opposite verdict to reach",
}


def _decider(job, claim):
    """The claim's verdict as the job gives it (Job.decide: a failed capture or unreadable data is
    inconclusive), deciding only this claim."""
    alone = dataclasses.replace(job, claims=(claim,))
    return alone.decide


def _rule_could_give(claim):
    """Whether the claim's rule alone gives `want` on the data: Job.decide gives `want` (confirmed or
    refuted) only when every capture held and the rule gave it, so an edit where the rule does not is
    no flip, and the walk over every capture is spared (find_flip's could_flip)."""
    def could(data, want):
        try:
            return claim.decide(data).verdict == want
        except Exception:  # Job.decide makes what a rule cannot read inconclusive: no flip either way
            return False
    return could


def _searched(job) -> list:
    """The job's claims the automatic search must flip: all but the hand-flipped and the unflippable."""
    return [c for c in job.claims if c.id not in HAND_FLIPS and c.id not in UNFLIPPABLE]


def test_every_claim_is_flipped_one_way_exactly():
    claims = set(all_claims())
    assert set(HAND_FLIPS) <= claims, f"hand edits for unknown claims: {sorted(set(HAND_FLIPS) - claims)}"
    assert set(UNFLIPPABLE) <= claims, f"unknown claims excused: {sorted(set(UNFLIPPABLE) - claims)}"
    assert not set(HAND_FLIPS) & set(UNFLIPPABLE), "a claim both hand-flipped and excused"
    skipped = {c.id for job in all_jobs().values() for c in job.claims} - \
        {c.id for job in all_jobs().values() for c in _searched(job)}
    assert skipped == set(HAND_FLIPS) | set(UNFLIPPABLE), "the search skips exactly the hand-flipped and excused claims"
    assert all(f.__name__ != "<lambda>" and f.__doc__ for f in HAND_FLIPS.values()), "each edit a named, described function"


def test_each_hand_edit_sits_with_its_claims_article():
    claims = all_claims()
    misplaced = {claim_id: article for article, flips in _flip_modules().items() for claim_id in flips
                 if claim_id in claims and Path(claims[claim_id][0].module_file).parent.name != article}
    assert not misplaced, f"hand edits outside tests/rules/flips_<article>.py of their claim's article: {misplaced}"


def test_a_rule_that_changes_what_it_parsed_is_caught_by_the_parse_cache():
    """The search parses each text once (tests/flips.py); a rule that edits what it got back would see
    its own edit on the next call, so the cache fails the search."""
    with pytest.raises(AssertionError, match="changed the JSON it parsed"):
        with each_text_parsed_once():
            json.loads('{"finish_reason": null}')["finish_reason"] = "stop"
    with each_text_parsed_once():
        assert json.loads('{"a": 1}') is json.loads('{"a": 1}'), "parsed once"


@pytest.mark.parametrize("job_id", sorted(all_jobs()))
def test_every_claim_of_the_job_flips_on_one_edit_of_its_record(job_id):
    job = all_jobs()[job_id]
    record = store.load(job_id, "cpu")
    data = copy.deepcopy(record["data"])
    unflipped = []
    for claim in _searched(job):
        assert record["claims"][claim.id]["verdict"] != INCONCLUSIVE, f"{claim.id}: the committed record decides nothing"
        with each_text_parsed_once():
            if find_flip(_decider(job, claim), data, claim.id, BUDGET, could_flip=_rule_could_give(claim)) is None:
                unflipped.append(claim.id)
    assert data == record["data"], "an edit was not undone"
    assert not unflipped, f"no single edit of the record flips: {unflipped}"


@pytest.mark.parametrize("claim_id", sorted(HAND_FLIPS))
def test_each_hand_edit_flips_its_claim(claim_id):
    job, claim = all_claims()[claim_id]
    record = store.load(job.id, "cpu")
    committed = record["claims"][claim_id]["verdict"]
    assert committed != INCONCLUSIVE, f"{claim_id}: the committed record decides nothing"
    decide = _decider(job, claim)
    data = copy.deepcopy(record["data"])
    assert decide(data)[claim_id]["verdict"] == committed, "the unedited data no longer gives the committed verdict"
    HAND_FLIPS[claim_id](data)
    assert data != record["data"], f"{HAND_FLIPS[claim_id].__name__} changed nothing"
    got = decide(data)[claim_id]
    assert got["verdict"] == OPPOSITE[committed], \
        f"{HAND_FLIPS[claim_id].__name__}: {committed} became {got['verdict']} ({got['because'][:200]})"
