"""Structured outputs article: its rules replay real records captured from a live vLLM server, edited."""

from __future__ import annotations

import json

import pytest

from tests.rules._records import PROFILES, cases, check, compact, decide, decide_edited, edit_chunks, json_lines, record, row
from tests.rules.flips_structured_outputs import request_option_honoured
from verify.jobs.structured_outputs.json_whitespace import OPTION
from verify.registry import all_jobs


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


# --- tool-calls: stream-name-first: the id and the name once, in the first delta; fragments after -------

TOOL_CALLS = "tool-calls"


def _edit_tool_deltas(data: dict, edit) -> None:
    """Apply edit(i, delta) to the i-th tool-call delta of the recorded stream, in order, keeping arrival times."""
    seen = [0]

    def each(chunk: dict) -> None:
        for choice in chunk.get("choices", []):
            for tc in (choice.get("delta") or {}).get("tool_calls") or []:
                edit(seen[0], tc)
                seen[0] += 1
    edit_chunks(data["stream"], each)


def _tool_deltas(data: dict) -> list[dict]:
    return [tc for _, c in json_lines(data["stream"]) for ch in c.get("choices", [])
            for tc in (ch.get("delta") or {}).get("tool_calls") or []]


def first_delta_without_id(data: dict) -> None:
    """The first delta names the tool but carries no id."""
    _edit_tool_deltas(data, lambda i, tc: tc.pop("id") if i == 0 else None)


def first_delta_names_another_tool(data: dict) -> None:
    """The first delta names a tool that was not the one called."""
    _edit_tool_deltas(data, lambda i, tc: tc["function"].update(name="get_time") if i == 0 else None)


def a_later_delta_repeats_the_id(data: dict) -> None:
    """One delta after the first carries the call's id again."""
    first = _tool_deltas(data)[0]["id"]
    _edit_tool_deltas(data, lambda i, tc: tc.update(id=first) if i == 2 else None)


def a_later_delta_repeats_the_name(data: dict) -> None:
    """One delta after the first carries the tool's name again."""
    _edit_tool_deltas(data, lambda i, tc: tc["function"].update(name="get_weather") if i == 2 else None)


def later_deltas_carry_an_empty_id_and_name(data: dict) -> None:
    """Deltas after the first with an empty id and name carry neither: still confirmed."""
    _edit_tool_deltas(data, lambda i, tc: (tc.update(id=""), tc["function"].update(name="")) if i else None)


def a_later_delta_without_a_fragment(data: dict) -> None:
    """One delta after the first carries no arguments at all (null): not a fragment of them."""
    _edit_tool_deltas(data, lambda i, tc: tc["function"].update(arguments=None) if i == 2 else None)


def a_later_delta_without_a_function(data: dict) -> None:
    """One delta after the first has no function object."""
    _edit_tool_deltas(data, lambda i, tc: tc.update(function=None) if i == 2 else None)


def _keep_fragments(n: int):
    def edit(data: dict) -> None:
        _edit_tool_deltas(data, lambda i, tc: tc["function"].update(arguments="") if i > n else None)
    edit.__name__ = f"only_{n}_fragments_not_empty"
    edit.__doc__ = f"Every fragment after the first {n} emptied: {n} fragments carry arguments."
    return edit


def a_later_delta_of_a_second_call(data: dict) -> None:
    """One delta after the first is for tool call index 1."""
    _edit_tool_deltas(data, lambda i, tc: tc.update(index=1) if i == 2 else None)


def first_delta_of_a_second_call(data: dict) -> None:
    """The first delta is for tool call index 1, the rest for 0."""
    _edit_tool_deltas(data, lambda i, tc: tc.update(index=1) if i == 0 else None)


def no_tool_call_deltas(data: dict) -> None:
    """The stream carried no tool call at all: every delta's tool_calls emptied."""
    edit_chunks(data["stream"], lambda c: [(ch.get("delta") or {}).pop("tool_calls", None) for ch in c["choices"]])


def _name_first(data: dict, carrying: int) -> str:
    deltas = _tool_deltas(data)
    return (f"{len(deltas)} tool-call deltas; the first carries id {deltas[0].get('id')!r} and name "
            f"{deltas[0]['function'].get('name')!r}; {carrying} of the {len(deltas) - 1} after it carry an id or a name")


NAME_FIRST = [
    (None, "confirmed", 0),
    (first_delta_without_id, "refuted", 0),
    (first_delta_names_another_tool, "refuted", 0),
    (a_later_delta_repeats_the_id, "refuted", 1),
    (a_later_delta_repeats_the_name, "refuted", 1),
    (later_deltas_carry_an_empty_id_and_name, "confirmed", 0),
    (a_later_delta_without_a_fragment, "refuted", 0),
    (a_later_delta_without_a_function, "refuted", 0),
    (_keep_fragments(1), "refuted", 0),
    (_keep_fragments(2), "confirmed", 0),
    (a_later_delta_of_a_second_call, "refuted", 0),
    (first_delta_of_a_second_call, "refuted", 0),
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("edit, expected, carrying", NAME_FIRST,
                         ids=[e.__name__ if e else "as-recorded" for e, _, _ in NAME_FIRST])
def test_a_streamed_call_sends_its_id_and_name_first_and_only_fragments_after(profile, edit, expected, carrying):
    data = record(TOOL_CALLS, profile)
    if edit is not None:
        edit(data)
    check(decide(TOOL_CALLS, "stream-name-first", data), expected, because=_name_first(data, carrying))


@pytest.mark.parametrize("profile", PROFILES)
def test_a_stream_without_tool_call_deltas_is_refuted_not_a_crash(profile):
    data = record(TOOL_CALLS, profile)
    no_tool_call_deltas(data)
    check(decide(TOOL_CALLS, "stream-name-first", data), "refuted",
          because="0 tool-call deltas; the first carries id None and name None; 0 of the 0 after it carry an id or a name")


# --- tool-choice-no-parser: the refused claims, each deciding its own case with the flags it names --------

NO_PARSER = "tool-choice-no-parser"


def _error(data: dict, case: str) -> dict:
    return data["cases"][case]["body"]["error"]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_refused_claim_reads_its_own_case_for_the_flags_it_names(profile):
    from verify.jobs.structured_outputs.tool_choice_no_parser import _refused
    data = record(NO_PARSER, profile)
    message = {case: _error(data, case)["message"] for case in ("named", "required", "auto")}
    named = _refused("named-refused", "named", "A named tool_choice is refused.")
    assert (named.id, named.text) == (f"{NO_PARSER}.named-refused", "A named tool_choice is refused.")
    check(named.decide(data).as_record(), "confirmed", because=f"HTTP 400: {message['named']}")
    # The case is its own: the required case's message is not the named one's.
    required = _refused("required-refused", "required", "")
    check(required.decide(data).as_record(), "confirmed", because=f"HTTP 400: {message['required']}")
    # Its flag by default is --tool-call-parser: a 400 that does not name it is another refusal.
    _error(data, "named")["message"] = message["named"].replace("--tool-call-parser", "a parser")
    check(named.decide(data).as_record(), "refuted", because=f"HTTP 400: {_error(data, 'named')['message']}")
    # Flags given are all needed: the auto case names both; without one of them, refuted.
    both = ("--enable-auto-tool-choice", "--tool-call-parser")
    auto = _refused("auto-refused", "auto", "", flags=both)
    check(auto.decide(data).as_record(), "confirmed", because=f"HTTP 400: {message['auto']}")
    _error(data, "auto")["message"] = message["auto"].replace("--enable-auto-tool-choice and ", "")
    check(auto.decide(data).as_record(), "refuted")
    check(_refused("auto-refused", "auto", "").decide(data).as_record(), "confirmed")
    # Each registered claim is the one _refused makes: the same id, text and verdict on the record.
    registered = {c.id: c for c in all_jobs()[NO_PARSER].claims}
    assert registered[named.id].decide(data) == named.decide(data)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("claim, case", [("named-refused", "named"), ("required-refused", "required"),
                                         ("auto-refused", "auto")])
def test_a_refusal_is_a_400_naming_the_flag(profile, claim, case):
    data = record(NO_PARSER, profile)
    message = _error(data, case)["message"]
    check(decide(NO_PARSER, claim, data), "confirmed", because=f"HTTP 400: {message}")
    data["cases"][case]["status"] = 422
    check(decide(NO_PARSER, claim, data), "refuted", because=f"HTTP 422: {message}")
    data["cases"][case]["status"] = 400
    data["cases"][case]["body"] = {}
    check(decide(NO_PARSER, claim, data), "refuted", because="HTTP 400: no error message")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_chunk_without_choices_carries_no_tool_call_delta(profile):
    # The stream's first chunk (the role) with its choices left out: the rules read the other chunks.
    data = record(TOOL_CALLS, profile)
    expected = {c: decide(TOOL_CALLS, c, data) for c in ("stream-name-first", "stream-reassembles")}
    first = next(x for x in data["stream"]["lines"] if x["line"].startswith("data: {"))
    chunk = json.loads(first["line"][6:])
    assert not chunk["choices"][0]["delta"].get("tool_calls")
    del chunk["choices"]
    first["line"] = compact(chunk)
    assert {c: decide(TOOL_CALLS, c, data) for c in expected} == expected
    assert expected["stream-name-first"]["verdict"] == "confirmed"
