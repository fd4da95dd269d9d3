"""Offline inference article: its rules replay real records captured from a live vLLM engine and server, edited."""

from __future__ import annotations

import pytest

from tests.rules._records import cases, check, decide_edited, every_verdict, record, row

# --- offline-chat -------------------------------------------------------------------------------------


def template_ids_read_from_a_batch_encoding(data: dict) -> None:
    """A chat template that gave no token ids (a BatchEncoding read as a list) is inconclusive."""
    data["template_token_ids"] = ["input_ids", "attention_mask"]


def template_added_nothing(data: dict) -> None:
    """The template's token ids are generate()'s prompt: the template added nothing."""
    data["template_token_ids"] = data["generate"]["prompt_token_ids"]


def chat_returned_no_tokens(data: dict) -> None:
    """An empty chat answer is a failed capture, not a different answer: chat() returned no tokens at all."""
    data["chat"].update(text="", events=0)


# --- offline-generation-defaults ------------------------------------------------------------------------

def new_sampling_params_kept_a_model_default(data: dict) -> None:
    """A new SamplingParams whose answers ran to the model's max_new_tokens kept a model default."""
    for out in data["ways"]["SamplingParams(temperature=0)"]["outputs"]:
        if out["finish_reason"] == "length":
            out["tokens"] = data["model_defaults"]["max_new_tokens"]


def changed_defaults_lost_max_new_tokens(data: dict) -> None:
    """A changed copy of the defaults that lost the model's max_new_tokens."""
    for out in data["ways"]["model defaults, temperature=0"]["outputs"]:
        if out["finish_reason"] == "length":
            out["tokens"] = 16


def server_ignored_max_new_tokens(data: dict) -> None:
    """A server that ignored the model's max_new_tokens: answers run past it."""
    for answer in data["server"]["temperature only"]["answers"]:
        answer["tokens"] = 40


def every_answer_ended_on_its_own(data: dict) -> None:
    """Answers that all ended on their own cannot show where the length limit was."""
    for out in data["ways"]["no SamplingParams"]["outputs"]:
        out["finish_reason"] = "stop"


def a_failed_server_request(data: dict) -> None:
    """A failed server request makes generation-defaults inconclusive."""
    data["server"]["temperature only"]["answers"][0].update(status=500, events=0)


# --- offline-vs-server -----------------------------------------------------------------------------------

def server_ran_the_whole_batch_at_once(data: dict) -> None:
    """A server that ran the whole batch at once caps nothing."""
    for trial in data["server"]["trials"]:
        trial.update(peak_running=data["prompts"], peak_waiting=0)


def requests_waiting_for_a_full_kv_cache(data: dict) -> None:
    """Requests waiting because the whole batch would not fit in the KV cache: a memory limit."""
    data["server"]["trials"][0]["peak_kv_usage"] = 0.95


def offline_twice_as_slow(data: dict) -> None:
    """An offline engine twice as slow as the server."""
    fastest_server = min(t["seconds"] for t in data["server"]["trials"])
    for trial in data["offline"]["trials"]:
        trial["seconds"] = fastest_server * 2


def one_answer_changed_through_the_server(data: dict) -> None:
    """One answer that came out differently through the server."""
    data["server"]["trials"][1]["texts"][0] += " (changed)"


def offline_starts_in_half_the_time(data: dict) -> None:
    """Start-up: markedly sooner only when the offline start beats the fastest server start by over 25 %."""
    data["offline"]["starts_s"] = [min(data["server"]["starts_s"]) * 0.5]


def offline_start_ahead_within_the_noise(data: dict) -> None:
    """A lead within the noise: the offline start at 90 % of the fastest server start."""
    data["offline"]["starts_s"] = [min(data["server"]["starts_s"]) * 0.9]


def offline_start_not_timed(data: dict) -> None:
    """A run whose offline engine was not started from a fresh process: start-up needs a timed start of each."""
    data["offline"]["starts_s"] = []


def a_failed_server_batch(data: dict) -> None:
    """A failed server batch makes offline-vs-server inconclusive."""
    data["server"]["trials"][0].update(error="APIConnectionError: Connection error.", events=0, texts=[])


GENERATION_DEFAULTS = ("no-params-follow-model", "explicit-replaces-all", "start-from-defaults", "server-fills-gaps")
VS_SERVER = ("server-caps-running", "larger-limits", "throughput", "same-outputs")

# Each a claim, an edit of its committed cpu record (None: as recorded) and the verdict it must give.
EDITS = [
    row("offline-chat.template-applied", None, "confirmed"),
    row("offline-chat.template-applied", template_ids_read_from_a_batch_encoding, "inconclusive"),
    row("offline-chat.template-applied", template_added_nothing, "refuted"),
    row("offline-chat.answers-differ", None, "confirmed"),
    *[row(f"offline-generation-defaults.{claim}", None, "confirmed") for claim in GENERATION_DEFAULTS],
    row("offline-generation-defaults.explicit-replaces-all", new_sampling_params_kept_a_model_default, "refuted"),
    row("offline-generation-defaults.start-from-defaults", changed_defaults_lost_max_new_tokens, "refuted"),
    row("offline-generation-defaults.server-fills-gaps", server_ignored_max_new_tokens, "refuted"),
    row("offline-generation-defaults.no-params-follow-model", every_answer_ended_on_its_own, "inconclusive"),
    *[row(f"offline-vs-server.{claim}", None, "confirmed") for claim in VS_SERVER],
    row("offline-vs-server.server-caps-running", server_ran_the_whole_batch_at_once, "refuted"),
    row("offline-vs-server.larger-limits", server_ran_the_whole_batch_at_once, "refuted"),
    row("offline-vs-server.server-caps-running", requests_waiting_for_a_full_kv_cache, "refuted"),
    row("offline-vs-server.throughput", offline_twice_as_slow, "refuted"),
    row("offline-vs-server.same-outputs", one_answer_changed_through_the_server, "refuted"),
    row("offline-vs-server.starts-sooner", offline_starts_in_half_the_time, "confirmed"),
    row("offline-vs-server.starts-sooner", offline_start_ahead_within_the_noise, "refuted"),
    row("offline-vs-server.starts-sooner", offline_start_not_timed, "inconclusive"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(EDITS))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


@pytest.mark.parametrize("job_id, edit", [
    ("offline-generation-defaults", a_failed_server_request),
    ("offline-vs-server", a_failed_server_batch),
    ("offline-chat", chat_returned_no_tokens),
], ids=["offline-generation-defaults", "offline-vs-server", "offline-chat"])
def test_a_failed_capture_makes_every_claim_of_the_job_inconclusive(job_id, edit):
    data = record(job_id)
    edit(data)
    assert every_verdict(job_id, data) == {"inconclusive"}
