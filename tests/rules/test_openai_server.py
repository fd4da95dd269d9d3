"""OpenAI server article: its rules replay real records captured from a live vLLM server, edited to other behaviour."""

from __future__ import annotations

import pytest

from tests.rules._records import cases, check, decide_edited, every_verdict, record, row
from verify.captures import iter_captures


def metrics_page_without_vllm_samples(data: dict) -> None:
    """The metrics endpoint rule needs vLLM samples: a Prometheus page of some other program."""
    data["endpoints"]["GET /metrics"]["vllm_samples"] = 0


def refusals_without_error_objects(data: dict) -> None:
    """Error types need error objects: three refusals whose bodies carry none."""
    for name in ("unknown model", "seed not a number", "temperature 3"):
        data["cases"][name]["body"] = {}


def openai_error_type_on_one_refusal(data: dict) -> None:
    """One refusal with OpenAI's own error type."""
    data["cases"]["temperature 3"]["body"]["error"]["type"] = "invalid_request_error"


def console_script_fails_for_another_reason(data: dict) -> None:
    """The console script must fail for its known reason, not another."""
    data["vllm_command"]["last_line"] = ["error: unrecognized arguments: --version"]


def console_script_missing(data: dict) -> None:
    """No vllm command installed: nothing to fail."""
    data["vllm_command"] = {"exit_code": None, "last_line": ["no vllm command installed"]}


def console_script_works(data: dict) -> None:
    """The console script runs and prints the version."""
    data["vllm_command"] = {"exit_code": 0, "last_line": ["0.32.0"]}


# Each a claim, an edit of its committed cpu record (None: as recorded) and the verdict it must give.
EDITS = [
    row("server-endpoints.metrics-prometheus", None, "confirmed"),
    row("server-endpoints.metrics-prometheus", metrics_page_without_vllm_samples, "refuted"),
    row("request-handling.error-types-differ", None, "confirmed"),
    row("request-handling.error-types-differ", refusals_without_error_objects, "inconclusive"),
    row("request-handling.error-types-differ", openai_error_type_on_one_refusal, "refuted"),
    row("launch-path.cpu-console-script-fails", None, "confirmed"),
    row("launch-path.cpu-console-script-fails", console_script_fails_for_another_reason, "inconclusive"),
    row("launch-path.cpu-console-script-fails", console_script_missing, "inconclusive"),
    row("launch-path.cpu-console-script-fails", console_script_works, "refuted"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(EDITS))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


def test_an_unread_server_log_is_a_failed_capture():
    data = record("request-handling")
    reads = [c for _, c in iter_captures(data) if c["capture"] == "server-log"]
    assert reads, "request-handling records no log read"
    for c in reads:
        c.update(events=0, lines_read=0)
    assert every_verdict("request-handling", data) == {"inconclusive"}
