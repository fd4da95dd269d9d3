"""Sampling article: its rules replay real records captured from a live vLLM server, edited to other behaviour."""

from __future__ import annotations

import copy

import pytest

from tests.rules._records import PROFILES, cases, check, decide, decide_edited, record, row


def rejections_about_something_else(data: dict) -> None:
    """A 400 that does not name the parameter is not its rejection: what a broken base body would give."""
    for case in data["cases"].values():
        if case["status"] == 400:
            case["body"]["error"]["message"] = "messages: field required"


def empty_answers(data: dict) -> None:
    """Empty answers prove no reproducibility."""
    for group in ("greedy", "seeded"):
        data[group]["in_a_row"] = ["" for _ in data[group]["in_a_row"]]
        data[group]["among_others"] = ["" for _ in data[group]["among_others"]]


def model_ships_its_own_temperature(data: dict) -> None:
    """defaults-when-unset reads the model's generation config: a model that ships its own default."""
    data["model_generation_config"]["temperature"] = 0.6


# Each a claim, an edit of its committed cpu record (None: as recorded) and the verdict it must give.
EDITS = [
    *[r for claim in ("greedy-n-rejected", "temperature-range") for r in (
        row(f"parameter-validation.{claim}", None, "confirmed"),
        row(f"parameter-validation.{claim}", rejections_about_something_else, "refuted"))],
    # No rejection at all: whether rejections name their parameter cannot be judged.
    row("parameter-validation.error-names-parameter", rejections_about_something_else, "inconclusive"),
    row("reproducibility.greedy-in-a-row", None, "confirmed"),
    *[row(f"reproducibility.{claim}", empty_answers, "inconclusive")
      for claim in ("greedy-in-a-row", "greedy-among-others", "seed-in-a-row", "seed-among-others")],
    row("sampling-behaviour.defaults-when-unset", None, "confirmed"),
    row("sampling-behaviour.defaults-when-unset", model_ships_its_own_temperature, "refuted"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(EDITS))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


# --- structured-output: only answers that ended by themselves are judged -----------------------------------

STRUCTURED = "structured-output"


def _finished(data: dict, reasons: list[str]) -> None:
    for s, reason in zip(data["constrained"]["samples"], reasons):
        s["finish_reason"] = reason


@pytest.mark.parametrize("profile", PROFILES)
def test_only_answers_that_ended_by_themselves_are_judged_and_enough_of_them_must(profile):
    from verify.jobs.sampling.structured_output import MIN_FINISHED, SAMPLES
    data = record(STRUCTURED, profile)
    assert decide(STRUCTURED, "every-sample-valid", data)["verdict"] == "confirmed"
    # A record without finish reasons (as before they were recorded) cannot tell a cut answer: inconclusive.
    unknown = copy.deepcopy(data)
    for s in unknown["constrained"]["samples"]:
        s.pop("finish_reason", None)
    v = decide(STRUCTURED, "every-sample-valid", unknown)
    assert v["verdict"] == "inconclusive" and f"{SAMPLES} not recorded" in v["because"]
    _finished(data, ["stop"] * SAMPLES)
    assert decide(STRUCTURED, "every-sample-valid", data)["verdict"] == "confirmed"
    # An answer cut by max_tokens inside a long name is unfinished JSON: not judged.
    cut = copy.deepcopy(data)
    cut["constrained"]["samples"][0].update(text='{"name": "Bartholomew Aloysius Fitzgerald-Montgomery',
                                            finish_reason="length")
    assert decide(STRUCTURED, "every-sample-valid", cut)["verdict"] == "confirmed"
    # One that ended by itself and does not match the schema refutes.
    bad = copy.deepcopy(data)
    bad["constrained"]["samples"][0]["text"] = '{"name": "Ada"}'
    assert decide(STRUCTURED, "every-sample-valid", bad)["verdict"] == "refuted"
    # Fewer than MIN_FINISHED ended by themselves: inconclusive.
    few = copy.deepcopy(data)
    _finished(few, ["stop"] * (MIN_FINISHED - 1) + ["length"] * (SAMPLES - MIN_FINISHED + 1))
    v = decide(STRUCTURED, "every-sample-valid", few)
    assert v["verdict"] == "inconclusive" and f"at least {MIN_FINISHED} finished" in v["because"]
    _finished(few, ["stop"] * MIN_FINISHED + ["length"] * (SAMPLES - MIN_FINISHED))
    assert decide(STRUCTURED, "every-sample-valid", few)["verdict"] == "confirmed"
