"""lora-max-loras: one failed capture, of any part, leaves every claim inconclusive.

Replays the committed cpu record (captured from a live vLLM server by `verify run`) with one stream
damaged: the answer alone that a comparison needs, or one stream of a trial. Before this rule, a failed
answer alone made the base model's answers "differ" from it and the claim came out as the page expects.
"""

from __future__ import annotations

import copy

import pytest

from verify.evidence import store
from verify.job import INCONCLUSIVE
from verify.jobs.lora import lora_max_loras as job


@pytest.fixture(scope="module")
def data() -> dict:
    return store.load("lora-max-loras", "cpu")["data"]


def _fail(stream_holder: dict) -> None:
    stream_holder["stream"] = {**stream_holder["stream"], "status": 500, "lines": []}


DAMAGE = {
    "base answer alone": lambda d: _fail(d["alone"]["base:x"]),
    "attn-b answer alone": lambda d: _fail(d["alone"]["attn-b:x"]),
    "a stream of the three": lambda d: _fail(d["trials"][1]["three_adapters"][2]),
    "the base stream of a mixed group": lambda d: _fail(d["trials"][0]["mixed"][0]),
    "a missing trial": lambda d: d["trials"].pop(),
    "a group one stream short": lambda d: d["trials"][2]["three_adapters"].pop(),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_one_failed_capture_makes_every_claim_inconclusive(data, damage):
    d = copy.deepcopy(data)
    DAMAGE[damage](d)
    for claim in job.JOB.claims:
        assert claim.decide(d).verdict == INCONCLUSIVE, claim.id


def test_the_undamaged_record_decides(data):
    assert all(claim.decide(data).verdict != INCONCLUSIVE for claim in job.JOB.claims)
