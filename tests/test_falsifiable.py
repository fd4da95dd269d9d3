"""Every claim in the registry can be shown wrong by data, and made blind by damage.

Replays the committed cpu records (captured from a live vLLM server by `verify run`). For each
claim, tests/flips.py searches one edit of its real record that turns its verdict to the opposite
one: a rule no single change can turn would read the same whatever the server did. The damage half
(a failed capture makes every claim inconclusive) is test_run_machinery's, per job, for every job.
A new claim cannot land without a flip: it is searched like the rest, and only the claims named in
NOT_YET_FLIPPED are excused, each of which needs a trend or a paired change that one edit cannot make.
"""

from __future__ import annotations

import copy
import dataclasses

import pytest

from tests.flips import find_flip
from verify.evidence import store
from verify.job import INCONCLUSIVE
from verify.registry import all_claims, all_jobs

# Claims whose rule reads a trend over many values or a pair of values that must move together:
# one edit of one value cannot turn them. Shown wrong by hand-made edits in test_rules.py where
# noted there; the rest are open work. The list may only shrink.
NOT_YET_FLIPPED = {
    "batching.throughput-rises", "billing.n-computes-prompt-once", "cancel-direct.log-line",
    "chunk-shapes.finish-on-last-text", "chunk-shapes.empty-mid-stream", "kv-sizing.max-concurrency",
    "kv-sizing.cpu-block-size", "launch-path.deprecated", "offline-chat.answers-differ",
    "parameter-validation.error-names-parameter", "prefix-hits.hit-skips-prefill",
    "prompt-length-sweep.ttft-grows", "prompt-length-sweep.prefill-grows",
    "prompt-length-sweep.prompt-token-cheaper", "proxy-buffering.nginx-tls",
    "proxy-read-timeout.slow-first-token-cut", "reproducibility.unseeded-varies",
    "request-endings.abort-counted", "request-endings-quiet.abort-counted",
    "request-endings-quiet.silent-log", "request-handling.error-types-differ",
    "stream-timing.ttft-fraction", "throughput.rises-with-concurrency",
    "wire-format.no-n-terminal-burst", "wire-format.no-n-pipe-burst",
}
BUDGET = 5000  # edits tried per claim before giving up


def _decider(job, claim):
    """The claim's verdict as the job gives it (Job.decide: a failed capture or unreadable data is
    inconclusive), deciding only this claim."""
    alone = dataclasses.replace(job, claims=(claim,))
    return alone.decide


def test_the_excused_claims_exist():
    assert NOT_YET_FLIPPED <= set(all_claims())


@pytest.mark.parametrize("job_id", sorted(all_jobs()))
def test_every_claim_of_the_job_flips_on_one_edit_of_its_record(job_id):
    job = all_jobs()[job_id]
    record = store.load(job_id, "cpu")
    data = copy.deepcopy(record["data"])
    unflipped = []
    for claim in job.claims:
        if claim.id in NOT_YET_FLIPPED:
            continue
        assert record["claims"][claim.id]["verdict"] != INCONCLUSIVE, f"{claim.id}: the committed record decides nothing"
        if find_flip(_decider(job, claim), data, claim.id, BUDGET) is None:
            unflipped.append(claim.id)
    assert data == record["data"], "an edit was not undone"
    assert not unflipped, f"no single edit of the record flips: {unflipped}"
