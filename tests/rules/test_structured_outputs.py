"""Structured outputs article: its rules replay real records captured from a live vLLM server, edited."""

from __future__ import annotations

import pytest

from tests.rules._records import PROFILES, cases, check, decide_edited, row
from tests.rules.flips_structured_outputs import request_option_honoured
from verify.jobs.structured_outputs.json_whitespace import OPTION


def honoured_but_one_answer_missing(data: dict) -> None:
    """Every answer with the option compact, but one answer fewer than the job asks for."""
    request_option_honoured(data)
    data["ways"][OPTION]["samples"] = data["ways"][OPTION]["samples"][:-1]


def honoured_but_one_answer_cut(data: dict) -> None:
    """Every answer with the option compact, one of them cut by max_tokens."""
    request_option_honoured(data)
    data["ways"][OPTION]["samples"][0].update(text='{"name":"Adalbertina', finish_reason="length")


def one_answer_missing_and_one_spaced(data: dict) -> None:
    """One answer fewer, and one of the rest with whitespace: refuted all the same."""
    honoured_but_one_answer_missing(data)
    data["ways"][OPTION]["samples"][0]["text"] = '{"name": "Ada", "age": 36}'


# Each a claim, an edit of its committed record (None: as recorded) and the verdict it must give, on the
# records of both CPU profiles: request-option is undecided by missing or cut answers and refuted by whitespace.
BOUNDARIES = [
    row("json-whitespace.request-option", None, "refuted"),
    row("json-whitespace.request-option", request_option_honoured, "confirmed"),
    row("json-whitespace.request-option", honoured_but_one_answer_missing, "inconclusive"),
    row("json-whitespace.request-option", honoured_but_one_answer_cut, "inconclusive", contains="1 cut by max_tokens"),
    row("json-whitespace.request-option", one_answer_missing_and_one_spaced, "refuted"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(BOUNDARIES, PROFILES))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)
