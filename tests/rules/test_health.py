"""Health article: its rules replay real records of servers the jobs launched, stalled, killed and
signalled (captured live), edited to the opposite behaviour or to data that cannot decide."""

from __future__ import annotations

import json

import pytest

from tests.rules._records import PROFILES, cases, check, compact, decide_edited, row
from tests.rules.flips_health import models_ready_a_poll_later

# --- edits of a recorded stream (its raw lines, as the server sent them) ---------------------------------


def _finish(raw: dict, tokens: int) -> None:
    """The stream ends as a finished one: a last chunk with finish reason length and usage, then [DONE]."""
    t = raw["lines"][-1]["t"] if raw["lines"] else 0.0
    end = {"choices": [{"index": 0, "text": "", "finish_reason": "length"}], "usage": {"completion_tokens": tokens}}
    raw["lines"] = [x for x in raw["lines"] if "error" not in x["line"] and x["line"] != "data: [DONE]"]
    raw["lines"] += [{"t": t, "line": compact(end)}, {"t": t, "line": "data: [DONE]"}]
    raw["error"] = None


def _no_text(raw: dict) -> None:
    """Every chunk that carried text is gone; the other lines (an error event, [DONE]) stay."""
    def has_text(line: str) -> bool:
        if not line.startswith("data: {"):
            return False
        return any(c.get("text") for c in json.loads(line[6:]).get("choices") or [])
    raw["lines"] = [x for x in raw["lines"] if not has_text(x["line"])]


# --- health-probes --------------------------------------------------------------------------------------


def health_503_while_loading(d):
    """A server that answered 503 while loading: the port was open and /health said so."""
    for p in d["startup"]["polls"][-4:-1]:
        p.update(port="open", health=503, models=503, completion=503)


def port_reset_while_loading(d):
    """A connection accepted and reset while loading: not a refusal."""
    d["startup"]["polls"][2]["port"] = "ConnectionResetError"


def too_few_polls_before_ready(d):
    d["startup"]["polls"] = d["startup"]["polls"][-2:]


def health_503_during_stall(d):
    d["stall"]["polls"][-1]["health"] = 503


def two_stall_polls(d):
    d["stall"]["polls"] = d["stall"]["polls"][:2]


def stall_stream_got_tokens(d):
    raw = d["stall"]["stream_during"]
    raw["lines"] = [{"t": 0.5, "line": compact({"choices": [{"index": 0, "text": "One", "finish_reason": None}]})}]
    _finish(raw, 1)


def engine_did_not_come_back(d):
    d["stall"]["after_continue"].update(status=500, tokens=None)


def gauges_show_the_stalled_request(d):
    d["stall"]["metrics_during"]["vllm:num_requests_waiting"] = 1.0


def metrics_not_read_during_stall(d):
    d["stall"]["metrics_during"] = "ConnectError"


def health_never_503(d):
    for p in d["death"]["polls"]:
        if p["health"] == 503:
            p["health"] = 200


def new_request_served_after_death(d):
    d["death"]["request_after"].update(status=200, error=None)


def stream_finished_normally(d):
    _finish(d["death"]["stream"], 400)


def stream_had_no_text(d):
    _no_text(d["death"]["stream"])


def server_kept_running(d):
    d["death"].update(exit_s=None, server_exit_code=None)


def server_exited_with_error(d):
    d["death"]["server_exit_code"] = 1


# --- drain-abort (every claim must hold in each trial: the edits change the first) -----------------------


def _streams(d):
    return d["drain"]["streams"]


def _first(edit):
    def apply(d):
        edit(d["trials"][0])
    apply.__name__ = edit.__name__ + "_in_one_trial"
    return apply


def stream_finished_on_sigterm(t):
    _finish(_streams(t)[0]["stream"], t["stream_tokens"])


def stream_idle_before_sigterm(t):
    """The stream was sent five seconds earlier than recorded: its last text came well before SIGTERM."""
    _streams(t)[0]["offset_s"] -= 5.0


def server_answered_after_sigterm(t):
    for p in t["drain"]["polls"][1:]:
        p.update(health=200, models=200)


def server_answered_503(t):
    """The port open again after it had closed: a later poll got an HTTP status."""
    t["drain"]["polls"][-1].update(health=503, models=503)


def nginx_passed_a_503(t):
    for p in t["drain"]["polls"]:
        if not isinstance(p["health"], int):
            p["health_nginx"] = 503


def exited_before_its_streams_ended(t):
    for s in _streams(t):
        s["stream"]["ended_s"] = -s["offset_s"] + 20.0
    t["drain"]["exit_s"] = 0.4


def kept_running(t):
    t["drain"]["exit_s"] = None


def one_trial_missing(d):
    d["trials"].pop()


# --- drain-grace -------------------------------------------------------------------------------------------


def nothing_sent_through_nginx(d):
    d["drain"]["new_requests"] = None


def stream_cut_short(d):
    """The nginx stream lost its last lines: no finish reason, no usage, no [DONE]."""
    _streams(d)[1]["stream"]["lines"] = _streams(d)[1]["stream"]["lines"][:-25]


def stream_no_text(d):
    _no_text(_streams(d)[0]["stream"])


def new_request_got_503(d):
    d["drain"]["new_requests"]["direct"]["status"] = 503
    d["drain"]["new_requests"]["nginx"]["status"] = 503


def new_request_refused(d):
    d["drain"]["new_requests"]["direct"]["status"] = "ConnectError"


def health_503_while_draining(d):
    d["drain"]["polls"][2]["health"] = 503


def nginx_health_502_while_draining(d):
    d["drain"]["polls"][2]["health_nginx"] = 502


def waited_for_the_timeout(d):
    d["drain"]["exit_s"] = 30.5


def metrics_show_nothing_running(d):
    d["drain"]["metrics_during"]["metrics"]["vllm:num_requests_running"] = 0.0


def metrics_not_read(d):
    d["drain"]["metrics_during"] = None


def grace_too_short(d):
    d["manifest"]["grace_period_s"] = 30


def startup_budget_too_small(d):
    d["manifest"]["startup_budget_s"] = d["startup"]["ready_s"] * 2


def drain_not_measured(d):
    d["drain"]["exit_s"] = None


ROWS = [
    row("health-probes.refused-while-loading", None, "confirmed"),
    row("health-probes.refused-while-loading", port_reset_while_loading, "refuted"),
    row("health-probes.refused-while-loading", too_few_polls_before_ready, "inconclusive"),
    row("health-probes.no-loading-status", health_503_while_loading, "refuted", contains="503"),
    row("health-probes.ready-together", models_ready_a_poll_later, "refuted"),
    row("health-probes.stall-health-200", health_503_during_stall, "refuted"),
    row("health-probes.stall-health-200", two_stall_polls, "inconclusive"),
    row("health-probes.stall-request-hangs", stall_stream_got_tokens, "refuted"),
    row("health-probes.stall-request-hangs", engine_did_not_come_back, "inconclusive"),
    row("health-probes.stall-metrics-blind", gauges_show_the_stalled_request, "refuted"),
    row("health-probes.stall-metrics-blind", metrics_not_read_during_stall, "inconclusive"),
    row("health-probes.stall-recovers", engine_did_not_come_back, "refuted"),
    row("health-probes.dead-health-503", health_never_503, "refuted", contains="never 503"),
    row("health-probes.dead-request-5xx", new_request_served_after_death, "refuted"),
    row("health-probes.dead-request-5xx", health_never_503, "inconclusive"),
    row("health-probes.dead-stream-error", stream_finished_normally, "refuted"),
    row("health-probes.dead-stream-error", stream_had_no_text, "inconclusive"),
    row("health-probes.dead-exits", server_kept_running, "refuted"),
    row("health-probes.dead-exit-code-zero", server_exited_with_error, "refuted"),
    row("health-probes.dead-exit-code-zero", server_kept_running, "inconclusive"),
    row("drain-abort.streams-cut", None, "confirmed"),
    row("drain-abort.streams-cut", _first(stream_finished_on_sigterm), "refuted"),
    row("drain-abort.streams-cut", _first(stream_idle_before_sigterm), "inconclusive"),
    row("drain-abort.streams-cut", one_trial_missing, "inconclusive"),
    row("drain-abort.refused-at-once", _first(server_answered_503), "refuted"),
    row("drain-abort.refused-at-once", _first(server_answered_after_sigterm), "inconclusive"),
    row("drain-abort.nginx-502", _first(nginx_passed_a_503), "refuted"),
    row("drain-abort.nginx-502", _first(server_answered_after_sigterm), "inconclusive"),
    row("drain-abort.exits-after-streams", None, "confirmed"),
    row("drain-abort.exits-after-streams", _first(exited_before_its_streams_ended), "refuted"),
    row("drain-abort.exits-after-streams", _first(kept_running), "refuted"),
    row("drain-grace.streams-finish", None, "confirmed"),
    row("drain-grace.streams-finish", stream_cut_short, "refuted"),
    row("drain-grace.streams-finish", stream_no_text, "inconclusive"),
    row("drain-grace.new-request-500", new_request_got_503, "refuted"),
    row("drain-grace.new-request-500", new_request_refused, "inconclusive"),
    row("drain-grace.nginx-passes-500", new_request_got_503, "refuted"),
    row("drain-grace.nginx-passes-500", nginx_health_502_while_draining, "refuted"),
    row("drain-grace.nginx-passes-500", nothing_sent_through_nginx, "inconclusive"),
    row("drain-grace.health-200-while-draining", health_503_while_draining, "refuted"),
    row("drain-grace.exits-when-drained", waited_for_the_timeout, "refuted"),
    row("drain-grace.exits-when-drained", drain_not_measured, "refuted"),
    row("drain-grace.metrics-show-drain", metrics_show_nothing_running, "refuted"),
    row("drain-grace.metrics-show-drain", metrics_not_read, "inconclusive"),
    row("drain-grace.manifest-fits", None, "confirmed"),
    row("drain-grace.manifest-fits", grace_too_short, "refuted"),
    row("drain-grace.manifest-fits", startup_budget_too_small, "refuted"),
    row("drain-grace.manifest-fits", drain_not_measured, "inconclusive"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(ROWS, PROFILES))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)
