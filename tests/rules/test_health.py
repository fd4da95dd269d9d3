"""Health article: its rules replay real records of servers the jobs launched, stalled, killed and
signalled (captured live), edited to the opposite behaviour or to data that cannot decide."""

from __future__ import annotations

import json

import pytest

from tests.rules._records import PROFILES, cases, check, compact, decide_edited, edit_chunks, record, row
from tests.rules.flips_health import models_ready_a_poll_later

# --- edits of a recorded stream (its raw lines, as the server sent them) ---------------------------------


def _finish(raw: dict, tokens: int) -> None:
    """The stream ends as a finished one: a last chunk with finish reason length and usage, then [DONE]."""
    t = raw["lines"][-1]["t"] if raw["lines"] else 0.0
    end = {"choices": [{"index": 0, "text": "", "finish_reason": "length"}], "usage": {"completion_tokens": tokens}}
    raw["lines"] = [x for x in raw["lines"] if "error" not in x["line"] and x["line"] != "data: [DONE]"]
    raw["lines"] += [{"t": t, "line": compact(end)}, {"t": t, "line": "data: [DONE]"}]
    raw["error"] = None


def _told_abort(raw: dict) -> None:
    """The stream is told, as one 0.32.0 trial was: a last chunk with finish reason abort, then [DONE]."""
    t = raw["lines"][-1]["t"] if raw["lines"] else 0.0
    end = {"choices": [{"index": 0, "text": "", "finish_reason": "abort"}]}
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


def _in_a_timed_out_trial(edit):
    """The edit applied to the first trial whose streams both ended by their client's read timeout (which
    trial that is differs between records: the shutdown races with the streams)."""
    def apply(d):
        edit(next(t for t in d["trials"] if all(s["stream"].get("error") for s in _streams(t))))
    apply.__name__ = edit.__name__ + "_in_a_timed_out_trial"
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


def one_stream_told_abort(t):
    _told_abort(_streams(t)[0]["stream"])


def no_streams(t):
    """The record holds no stream at all: "every stream was cut" (or "finished") would hold of nothing."""
    t["drain"]["streams"] = []


def a_poll_timed_out(t):
    """A poll after SIGTERM timed out instead of being refused: the port took the connection and never answered."""
    next(p for p in t["drain"]["polls"] if not isinstance(p["health"], int))["health"] = "ReadTimeout"


def no_direct_request(t):
    """No completion was sent directly after SIGTERM: what a new request gets is not in the record."""
    t["drain"]["new_requests"].pop("direct")


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
    # A SIGSTOP that did not take: the stream during the "stall" got text, so /health's 200s and the
    # unchanged gauges show nothing about a stopped engine.
    row("health-probes.stall-health-200", stall_stream_got_tokens, "inconclusive"),
    row("health-probes.stall-health-200", engine_did_not_come_back, "inconclusive"),
    row("health-probes.stall-metrics-blind", stall_stream_got_tokens, "inconclusive"),
    row("health-probes.stall-recovers", stall_stream_got_tokens, "inconclusive"),
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
    row("drain-abort.streams-cut", _first(one_stream_told_abort), "confirmed"),
    row("drain-abort.refused-at-once", _first(server_answered_503), "refuted"),
    row("drain-abort.refused-at-once", _first(server_answered_after_sigterm), "inconclusive"),
    row("drain-abort.refused-at-once", _first(a_poll_timed_out), "refuted"),
    row("drain-abort.refused-at-once", _first(no_direct_request), "inconclusive"),
    row("drain-abort.streams-cut", _first(no_streams), "inconclusive"),
    row("drain-abort.nginx-502", _first(nginx_passed_a_503), "refuted"),
    row("drain-abort.nginx-502", _first(server_answered_after_sigterm), "inconclusive"),
    row("drain-abort.exits-after-streams", None, "confirmed"),
    row("drain-abort.exits-after-streams", _first(exited_before_its_streams_ended), "refuted"),
    row("drain-abort.exits-after-streams", _first(kept_running), "refuted"),
    row("drain-grace.streams-finish", None, "confirmed"),
    row("drain-grace.streams-finish", stream_cut_short, "refuted"),
    row("drain-grace.streams-finish", stream_no_text, "inconclusive"),
    row("drain-grace.streams-finish", no_streams, "inconclusive"),
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


# --- boundaries and reasons: each edit sits just on one side of a rule's condition ---------------------------
#
# The table above flips each claim; these rows pin where the flip happens (a strict or non-strict
# comparison, a constant, an and/or) and the words of each reason, so a rule that drifts from the
# condition its claim states, or says something else than it decided, fails here.


def _stream_end(t) -> float:
    """When the last stream ended, in seconds after SIGTERM (as the record gives it: sent at offset_s)."""
    return max(round(s["stream"]["ended_s"] + s["offset_s"], 3) for s in _streams(t))


def _recorded_error_event() -> dict:
    """The error event vLLM sent on the health-probes record's stream when its engine died (a real line)."""
    return next(x for x in record("health-probes")["death"]["stream"]["lines"] if '"error"' in x["line"])


def _text_lines(raw: dict) -> list[dict]:
    def has_text(line: str) -> bool:
        return line.startswith("data: {") and any(c.get("text") for c in json.loads(line[6:]).get("choices") or [])
    return [x for x in raw["lines"] if has_text(x["line"])]


# health-probes: dead-request-5xx


def request_sent_before_the_503(d):
    """The completion went out between the last 200 and the first 503 poll: before /health said 503."""
    death = d["death"]
    first = next(p["t"] for p in death["polls"] if p["health"] == 503)
    death["request_after"]["t"] = round(first - 0.001, 3)


def request_sent_with_the_503(d):
    """The completion went out at the very moment of the first 503 poll: once /health answered 503."""
    death = d["death"]
    death["request_after"]["t"] = next(p["t"] for p in death["polls"] if p["health"] == 503)


def no_request_after_death(d):
    """The server exited before the job sent its completion: nothing to judge."""
    d["death"]["request_after"] = None


def dead_request_had_no_error_text(d):
    """The 500 came with an empty body: the reason must not print an error it did not get."""
    d["death"]["request_after"]["error"] = None


# health-probes: dead-stream-error


def stream_error_without_done(d):
    """The stream got its error event and then nothing: no [DONE] line."""
    raw = d["death"]["stream"]
    raw["lines"] = [x for x in raw["lines"] if x["line"] != "data: [DONE]"]


def stream_got_every_chunk_before_the_error(d):
    """The stream's recorded text chunks repeated until there are STREAM_TOKENS of them, then its error
    event and [DONE]: a stream that had all its text was not cut short by the death."""
    from verify.jobs.health.health_probes import STREAM_TOKENS
    raw = d["death"]["stream"]
    text = _text_lines(raw)
    rest = raw["lines"][raw["lines"].index(text[-1]) + 1:]
    raw["lines"] = [dict(text[i % len(text)]) for i in range(STREAM_TOKENS)] + rest


def stream_error_as_a_string(d):
    """The error event's error is a plain string, not an object with a message."""
    for x in d["death"]["stream"]["lines"]:
        if x["line"].startswith('data: {"error"'):
            x["line"] = compact({"error": json.loads(x["line"][6:])["error"]["message"]})


def stream_error_without_message(d):
    """The error event's object has no message: the reason shows the object itself."""
    for x in d["death"]["stream"]["lines"]:
        if x["line"].startswith('data: {"error"'):
            event = json.loads(x["line"][6:])
            del event["error"]["message"]
            x["line"] = compact(event)


# drain-abort: streams-cut


def stream_kept_one_chunk(t):
    """Only the direct stream's last text chunk stays: one chunk, still right before SIGTERM."""
    raw = _streams(t)[0]["stream"]
    text = _text_lines(raw)
    raw["lines"] = [x for x in raw["lines"] if x not in text[:-1]]


def _last_text_at(t, seconds: float) -> None:
    """The direct stream was sent earlier, so that its last text came `seconds` after SIGTERM."""
    s = _streams(t)[0]
    s["offset_s"] = round(seconds - _text_lines(s["stream"])[-1]["t"], 4)


def last_text_half_a_second_before_sigterm(t):
    """The last text came exactly 0.5 s before SIGTERM: still 'shortly before', so in flight."""
    _last_text_at(t, -0.5)


def last_text_a_second_before_sigterm(t):
    """The last text came 1 s before SIGTERM: the stream was idle, not in flight."""
    _last_text_at(t, -1.0)


# drain-abort: refused-at-once


def models_answered_at_the_first_refusal(t):
    """At the first poll that found /health gone, /v1/models still answered: the port closed a poll later."""
    t["drain"]["polls"][1]["models"] = 200


def health_answered_at_the_first_refusal(t):
    t["drain"]["polls"][1]["health"] = 200


def models_answered_at_the_last_poll(t):
    t["drain"]["polls"][-1]["models"] = 200


def health_answered_at_the_last_poll(t):
    t["drain"]["polls"][-1]["health"] = 200


def direct_request_got_500(t):
    """The new request sent directly got an HTTP answer: the port was not closed to it."""
    t["drain"]["new_requests"]["direct"]["status"] = 500


def _polls_shifted(t, first_refused_s: float) -> None:
    """The polls after the first ran later, so that the first with no answer came first_refused_s after SIGTERM."""
    polls = t["drain"]["polls"]
    delta = first_refused_s - polls[1]["t"]
    for p in polls[1:]:
        p["t"] = round(p["t"] + delta, 3)
    polls[1]["t"] = first_refused_s


def refused_at_half_a_second(t):
    _polls_shifted(t, 0.5)


def refused_just_after_half_a_second(t):
    _polls_shifted(t, 0.501)


# drain-abort: exits-after-streams


def direct_stream_ended_by_an_error_event(t):
    """The direct stream's read ended on an error event (vLLM's, from the health-probes record), not the
    client's timeout; the nginx stream's read ended with no error: the server closed it."""
    direct, via = _streams(t)[0]["stream"], _streams(t)[1]["stream"]
    direct["lines"].append({**_recorded_error_event(), "t": direct["ended_s"]})
    direct["error"] = via["error"] = None


def exited_half_a_second_before_streams_ended(t):
    t["drain"]["exit_s"] = _stream_end(t) - 0.5


def exited_a_second_before_streams_ended(t):
    t["drain"]["exit_s"] = _stream_end(t) - 1.0


def exited_five_seconds_after_streams_ended(t):
    from verify.jobs.health.drain_abort import EXIT_AFTER_STREAMS_S
    t["drain"]["exit_s"] = _stream_end(t) + EXIT_AFTER_STREAMS_S


# drain-grace


def stream_usage_one_short(d):
    """The nginx stream's usage counted one token fewer than it asked for; finish reason and [DONE] as recorded."""
    def edit(chunk):
        if chunk.get("usage"):
            chunk["usage"]["completion_tokens"] -= 1
    edit_chunks(_streams(d)[1]["stream"], edit)


def stream_finished_on_stop(d):
    """The nginx stream's finish reason was stop, not length; its usage and [DONE] as recorded."""
    def edit(chunk):
        for c in chunk.get("choices") or []:
            if c.get("finish_reason"):
                c["finish_reason"] = "stop"
    edit_chunks(_streams(d)[1]["stream"], edit)


def new_request_connection_refused(d):
    """The direct request got no HTTP answer, recorded as drain-abort records one: the error's name only."""
    r = d["drain"]["new_requests"]["direct"]
    d["drain"]["new_requests"]["direct"] = {"t": r["t"], "status": "ConnectError"}


def no_direct_request(d):
    """Only the request through nginx was sent."""
    del d["drain"]["new_requests"]["direct"]


def no_nginx_request(d):
    del d["drain"]["new_requests"]["nginx"]


def nginx_502_as_the_last_stream_ended(d):
    """The last stream ended at the moment of the next poll, and that poll got a 502 through nginx:
    not a poll 'while the streams drained'."""
    last = max(_streams(d), key=lambda s: s["stream"]["ended_s"] + s["offset_s"])
    end = last["stream"]["ended_s"] + last["offset_s"]
    poll = next(p for p in d["drain"]["polls"] if p["t"] > end)
    last["stream"]["ended_s"] = round(poll["t"] - last["offset_s"], 4)
    poll["health_nginx"] = 502


_DRAIN_ABORT_NOT_IN_FLIGHT = "trial 1: a stream had no text shortly before SIGTERM, so it was not in flight: stream direct: "

BOUNDARY_ROWS = [
    row("health-probes.dead-request-5xx", request_sent_before_the_503, "inconclusive",
        because="no completion was sent after /health answered 503"),
    row("health-probes.dead-request-5xx", request_sent_with_the_503, "confirmed"),
    row("health-probes.dead-request-5xx", no_request_after_death, "inconclusive",
        because="no completion was sent after /health answered 503"),
    row("health-probes.dead-request-5xx", dead_request_had_no_error_text, "confirmed",
        because="a completion sent once /health answered 503 got 500"),
    row("health-probes.dead-request-5xx", new_request_served_after_death, "refuted",
        because="a completion sent once /health answered 503 got 200"),
    row("health-probes.dead-stream-error", stream_had_no_text, "inconclusive",
        because="the stream had received no text before the engine died, so it was not in flight"),
    row("health-probes.dead-stream-error", stream_error_without_done, "refuted",
        contains=("1 error event(s) (EngineCore encountered an issue.", ", [DONE] not sent; client error: None")),
    row("health-probes.dead-stream-error", stream_got_every_chunk_before_the_error, "refuted",
        starts="the stream in flight got 400 text chunks of 400, 1 error event(s)"),
    row("health-probes.dead-stream-error", stream_error_as_a_string, "confirmed",
        contains="1 error event(s) (EngineCore encountered an issue. See stack trace (above) for the root cause.), "
                 "[DONE] sent"),
    row("health-probes.dead-stream-error", stream_error_without_message, "confirmed",
        contains="1 error event(s) ({'type': 'InternalServerError', 'param': None, 'code': 500}), [DONE] sent"),
    row("health-probes.dead-stream-error", stream_finished_normally, "refuted",
        ends=" text chunks of 400, 0 error event(s), [DONE] sent; client error: None"),
    row("drain-abort.streams-cut", _first(stream_kept_one_chunk), "confirmed",
        starts="trial 1: stream direct: 1 text chunks"),
    row("drain-abort.streams-cut", _first(last_text_half_a_second_before_sigterm), "confirmed",
        contains="the last -0.5 s after SIGTERM"),
    row("drain-abort.streams-cut", _first(last_text_a_second_before_sigterm), "inconclusive",
        starts=_DRAIN_ABORT_NOT_IN_FLIGHT),
    row("drain-abort.streams-cut", _first(stream_idle_before_sigterm), "inconclusive",
        starts=_DRAIN_ABORT_NOT_IN_FLIGHT),
    row("drain-abort.refused-at-once", None, "confirmed"),
    row("drain-abort.refused-at-once", _first(models_answered_at_the_first_refusal), "confirmed"),
    row("drain-abort.refused-at-once", _first(health_answered_at_the_first_refusal), "confirmed"),
    row("drain-abort.refused-at-once", _first(models_answered_at_the_last_poll), "refuted",
        contains="polls from then on: ['200', 'ConnectError']"),
    row("drain-abort.refused-at-once", _first(health_answered_at_the_last_poll), "refuted",
        contains="polls from then on: ['200', 'ConnectError']"),
    row("drain-abort.refused-at-once", _first(direct_request_got_500), "refuted", contains=" got 500"),
    row("drain-abort.refused-at-once", _first(refused_at_half_a_second), "confirmed",
        starts="trial 1: the first poll with no answer 0.50 s after SIGTERM"),
    row("drain-abort.refused-at-once", _first(refused_just_after_half_a_second), "refuted"),
    row("drain-abort.refused-at-once", _first(server_answered_after_sigterm), "inconclusive",
        starts="trial 1: no poll after SIGTERM found the server gone"),
    row("drain-abort.exits-after-streams", _in_a_timed_out_trial(direct_stream_ended_by_an_error_event), "confirmed",
        contains=(" (an error event), nginx ", " (the server ended it); the process exited at ")),
    row("drain-abort.exits-after-streams", None, "confirmed", contains=" (the client gave up), nginx "),
    row("drain-abort.exits-after-streams", _first(exited_half_a_second_before_streams_ended), "confirmed"),
    row("drain-abort.exits-after-streams", _first(exited_a_second_before_streams_ended), "refuted"),
    row("drain-abort.exits-after-streams", _first(exited_five_seconds_after_streams_ended), "confirmed"),
    row("drain-grace.streams-finish", stream_no_text, "inconclusive",
        starts="a stream had no text before SIGTERM, so it was not in flight: stream direct: 0 text chunks"),
    row("drain-grace.streams-finish", stream_usage_one_short, "refuted", contains="usage 79 of 80 tokens"),
    row("drain-grace.streams-finish", stream_finished_on_stop, "refuted", contains="finish reason stop"),
    row("drain-grace.new-request-500", nothing_sent_through_nginx, "inconclusive",
        because="the server exited before a new request could be sent"),
    row("drain-grace.new-request-500", new_request_connection_refused, "inconclusive",
        starts="a completion sent directly ", ends=" s after SIGTERM got ConnectError: no HTTP answer"),
    row("drain-grace.nginx-passes-500", nothing_sent_through_nginx, "inconclusive",
        because="nothing was sent through nginx during the drain"),
    row("drain-grace.nginx-passes-500", no_direct_request, "inconclusive",
        because="nothing was sent through nginx during the drain"),
    row("drain-grace.nginx-passes-500", no_nginx_request, "inconclusive",
        because="nothing was sent through nginx during the drain"),
    row("drain-grace.nginx-passes-500", nginx_health_502_while_draining, "refuted",
        ends="; /health through nginx while the streams drained: 200, 502"),
    row("drain-grace.nginx-passes-500", nginx_502_as_the_last_stream_ended, "confirmed",
        ends="; /health through nginx while the streams drained: 200"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(BOUNDARY_ROWS, PROFILES))
def test_an_edit_at_a_boundary_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)
