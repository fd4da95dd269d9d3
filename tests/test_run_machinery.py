"""The runner's guarantees, without a vLLM server: one start per variant, inputs only through the
context, and no verdict from a failed capture.

Where recorded data is needed it is the committed evidence, captured from a real vLLM server by
`verify run`; the failure cases are made by breaking those real captures, never by inventing
server output.
"""

from __future__ import annotations

import contextlib
import os
import copy
import json

import pytest

from verify.captures import TAG
from verify.runner.context import RunContext
from verify.errors import VerifyError
from verify.evidence import inputs as input_hashes
from verify.evidence import store
from verify.job import OFFLINE, Claim, Job, verdict_if
from verify.config.profiles import PROFILES, VARIANTS, get_profile
from verify.paths import SNIPPETS
from verify.registry import all_jobs
from verify.runner import grouping, server_groups
from verify.runner.run import run

CPU = get_profile("cpu")


def _fake_job(job_id: str, collect, variant: str = "default", engine: str = "server", timing: bool = False) -> Job:
    job = Job(id=job_id, title=job_id, question="?", pages=("streaming.md",), collect=collect,
              claims=(Claim(f"{job_id}.ok", "ok", lambda d: verdict_if(True, "ok"), timing=timing),), variant=variant,
              engine=engine)
    object.__setattr__(job, "module_file", __file__)
    return job


def _one_capture(ctx):
    return {"c": {TAG: "sse", "status": 200, "error": None, "lines": [{"t": 0.0, "line": "data: {}"}]}}


class _FakeServer:
    def __init__(self, variant):
        self.variant, self.start_seconds, self.url, self.argv, self.managed = variant, 1.0, "http://127.0.0.1:9", [], True
        self.port = 9

    def alive(self):
        return True


def _run_on_fake_servers(monkeypatch, tmp_path, jobs: list[Job], progress=lambda m: None) -> list[str]:
    """verify run over jobs, with stand-ins for the servers; returns the variants started, in order."""
    starts = []

    @contextlib.contextmanager
    def fake_server_for(profile, server_url=None, port=None, progress=print, variant="default", run_env=None):
        starts.append(variant)
        server = _FakeServer(variant)
        server.run_env = run_env
        yield server

    monkeypatch.setattr("verify.runner.run.select_jobs", lambda ids, profile: jobs)
    monkeypatch.setattr("verify.live.server.server_for", fake_server_for)
    monkeypatch.setattr("verify.runner.server_groups.server_facts", lambda server: {"variant": server.variant})
    assert run(None, CPU, run_all=True, evidence_root=tmp_path, progress=progress) == 0
    return starts


def test_a_run_starts_each_variant_once_whatever_the_job_order(tmp_path, monkeypatch):
    jobs = [_fake_job("a-default", _one_capture), _fake_job("b-queue", _one_capture, "max-num-seqs-1", timing=True),
            _fake_job("c-default", _one_capture), _fake_job("d-queue", _one_capture, "max-num-seqs-1"),
            _fake_job("e-nolog", _one_capture, "no-request-log")]
    printed = []
    starts = _run_on_fake_servers(monkeypatch, tmp_path, jobs, printed.append)
    # Variants with a timing job first, then the default server (a server phase then sees every start);
    # a variant whose jobs judge no timing runs on a second engine beside the default server's.
    assert starts == ["max-num-seqs-1", "default", "no-request-log"]
    summary = "\n".join(printed)
    assert "engine starts:" in summary and "server variant max-num-seqs-1" in summary
    # Progress: jobs done of total, and a time left estimated from earlier records.
    done = [m for m in printed if "jobs done" in m]
    assert len(done) == len(jobs) and "5/5 jobs done" in done[-1] and "about 0 s left" in done[-1]
    assert "1/5 jobs done" in done[0] and "left" in done[0]
    for job in jobs:
        rec = store.load(job.id, "cpu", tmp_path)
        assert rec["provenance"]["engine"]["variant"] == job.variant
        assert rec["provenance"]["engine"]["command"] == CPU.command(job.variant)


def test_combinable_variants_share_one_start_and_each_record_keeps_its_own_command(tmp_path, monkeypatch):
    jobs = [_fake_job("a-nolog", _one_capture, "no-request-log"),
            _fake_job("b-details", _one_capture, "prompt-tokens-details"),
            _fake_job("c-queue", _one_capture, "max-num-seqs-1")]
    starts = _run_on_fake_servers(monkeypatch, tmp_path, jobs)
    assert starts == ["max-num-seqs-1", "no-request-log+prompt-tokens-details"]
    combined = CPU.command("no-request-log+prompt-tokens-details")
    assert "--enable-log-requests" not in combined and "--enable-prompt-tokens-details" in combined
    for job in jobs[:2]:
        rec = store.load(job.id, "cpu", tmp_path)
        assert rec["provenance"]["server"]["variant"] == "no-request-log+prompt-tokens-details"  # what it ran under
        assert rec["provenance"]["engine"]["command"] == CPU.command(job.variant)  # what its hash covers
    # A variant that changes what other jobs observe never shares a start, nor do two start groups.
    with pytest.raises(VerifyError, match="cannot share"):
        CPU.command("no-request-log+max-num-seqs-1")
    with pytest.raises(VerifyError, match="cannot share"):
        CPU.command("api-key+no-request-log")


def test_each_start_group_is_one_start(tmp_path, monkeypatch):
    jobs = [_fake_job("a-nolog", _one_capture, "no-request-log"),
            _fake_job("b-key", _one_capture, "api-key"),
            _fake_job("c-json", _one_capture, "compact-json"),
            _fake_job("d-tools", _one_capture, "tool-parser")]
    starts = _run_on_fake_servers(monkeypatch, tmp_path, jobs)
    assert sorted(starts) == ["api-key+compact-json", "no-request-log+tool-parser"]
    both = CPU.command("api-key+compact-json")
    assert "--api-key" in both and "--structured-outputs-config" in both


def test_the_variant_command_is_in_provenance_and_in_the_hash():
    queue = all_jobs()["max-num-seqs-queue"]
    assert queue.variant == "max-num-seqs-1"
    command = CPU.command("max-num-seqs-1")
    assert command[-2:] == ["--max-num-seqs", "1"] and "--enable-log-requests" in command
    assert "--enable-log-requests" not in CPU.command("no-request-log")
    default_twin = _fake_job("max-num-seqs-queue", queue.collect)
    object.__setattr__(default_twin, "module_file", queue.module_file)
    label = "server command (cpu, variant max-num-seqs-1)"
    assert label in input_hashes.static_inputs(queue, CPU)
    assert input_hashes.static_inputs(queue, CPU)[label] != \
        input_hashes.static_inputs(default_twin, CPU)["server command (cpu, variant default)"]
    record = store.load("max-num-seqs-queue", "cpu")
    assert record["provenance"]["engine"]["command"] == command
    assert "--max-num-seqs" in record["provenance"]["server"]["command"]


def test_every_variant_exists_for_every_profile():
    """Each variant's command is the profile's, with exactly what the variant adds and nothing it removes."""
    from verify.config.adapters import in_records
    for profile in PROFILES.values():
        base = profile.command("default")
        for name, variant in VARIANTS.items():
            argv = profile.command(name)
            assert argv[:2] == base[:2] and argv[:2][0] == "-m"
            added = in_records(list(variant.add))  # an adapter's placeholder as records show it
            assert argv[len(argv) - len(added):] == added if added else True
            for flag in variant.remove:
                assert flag in base and flag not in argv, (profile.name, name, flag)
            assert len(argv) == len(base) + len(variant.add) - sum(
                2 if base.index(f) + 1 < len(base) and not base[base.index(f) + 1].startswith("--") else 1
                for f in variant.remove), (profile.name, name)


def test_offline_jobs_are_grouped_apart_from_server_starts():
    jobs = [_fake_job("x", _one_capture, engine=OFFLINE), _fake_job("y", _one_capture)]
    # Offline first: a job with a server phase has its offline part done when the server is up.
    assert list(grouping.grouped(jobs)) == ["offline engine", "server variant default"]
    offline = all_jobs()["offline-defaults"]
    assert offline.engine == OFFLINE
    assert "offline engine (cpu)" in input_hashes.static_inputs(offline, CPU)
    record = store.load("offline-defaults", "cpu")
    engine = record["provenance"]["offline_engine"]
    assert engine["version"] and engine["engines"][0]["args"] == {k: v for k, v in CPU.offline_args().items()}


def _collect_under_watch(job, ctx):
    data, opened = server_groups._collect_on_server(job, ctx)
    return data, opened


def test_a_snippet_opened_behind_the_contexts_back_fails_the_job():
    def sneaky(ctx):
        (SNIPPETS / "streaming" / "stream_timing.py").read_text()
        return _one_capture(ctx)
    with pytest.raises(VerifyError, match="opened snippets/streaming/stream_timing.py without going through"):
        _collect_under_watch(_fake_job("sneaky", sneaky), RunContext(server=None))


def test_a_snippet_opened_through_the_context_is_recorded_with_its_hash():
    def honest(ctx):
        ctx.snippet_path("streaming/stream_timing.py").read_text()
        return _one_capture(ctx)
    _, opened = _collect_under_watch(_fake_job("honest", honest), RunContext(server=None))
    assert opened == {"snippets/streaming/stream_timing.py":
                      input_hashes.file_hash(SNIPPETS / "streaming" / "stream_timing.py")}


@pytest.mark.proxy
def test_a_proxy_started_behind_the_contexts_back_fails_the_job():
    """The class of error where a record said it used no proxy although it ran through nginx."""
    def own_proxy(ctx):
        from verify.live.proxy import managed_proxy
        with managed_proxy("nginx-streaming", 9):
            pass
        return _one_capture(ctx)
    with pytest.raises(VerifyError, match="snippets/nginx/streaming.conf"):
        _collect_under_watch(_fake_job("own-proxy", own_proxy), RunContext(server=None))


def _break(capture: dict) -> None:
    """What a failed request leaves: an error status, nothing received, an error message."""
    capture["status"] = 503
    capture["error"] = "HTTP 503 from a server that was going down"
    for key in ("lines", "results"):
        if key in capture:
            capture[key] = []
    if "events" in capture:
        capture["events"] = 0
    if "exit_code" in capture:
        capture["exit_code"] = 7


def test_a_run_keeps_the_last_good_record_when_a_capture_fails(tmp_path, monkeypatch):
    good = _fake_job("keeps-record", _one_capture)
    monkeypatch.setattr("verify.runner.run.select_jobs", lambda ids, profile: [good])

    @contextlib.contextmanager
    def fake_server_for(profile, server_url=None, port=None, progress=print, variant="default"):
        yield _FakeServer(variant)
    monkeypatch.setattr("verify.live.server.server_for", fake_server_for)
    monkeypatch.setattr("verify.runner.server_groups.server_facts", lambda server: {})
    run(None, CPU, run_all=True, evidence_root=tmp_path, progress=lambda m: None)
    before = store.record_path("keeps-record", "cpu", tmp_path).read_text()

    def failing(ctx):
        data = _one_capture(ctx)
        _break(data["c"])
        return data
    # A second good run: the summary says no verdict changed against the record it replaced.
    printed = []
    run(None, CPU, run_all=True, evidence_root=tmp_path, progress=printed.append)
    assert "verdicts changed against the records this run replaced: none" in printed
    before = store.record_path("keeps-record", "cpu", tmp_path).read_text()
    object.__setattr__(good, "collect", failing)
    with pytest.raises(VerifyError, match="keeps-record: a capture failed"):
        run(None, CPU, run_all=True, evidence_root=tmp_path, progress=lambda m: None)
    assert store.record_path("keeps-record", "cpu", tmp_path).read_text() == before


def test_thresholds_are_not_read_back_from_records():
    """Rules take tolerances from the job's code: a record claiming a looser tolerance changes nothing."""
    for job_id in all_jobs():
        text = json.dumps(store.load(job_id, "cpu")["data"])
        assert '"tolerance' not in text, f"{job_id} stores a tolerance in its data"


def test_verify_status_names_the_input_that_changed(tmp_path):
    import shutil

    from tests.conftest import run_verify
    from verify.paths import EVIDENCE
    root = tmp_path / "evidence"
    shutil.copytree(EVIDENCE, root)
    path = root / "usage-in-stream" / "cpu.json"
    record = json.loads(path.read_text())
    record["inputs"]["snippets/streaming/usage_in_stream.py"] = "0" * 64
    path.write_text(json.dumps(record))
    out = run_verify("status", "--evidence-dir", str(root))
    assert out.returncode == 0, out.stderr
    stale = [line for line in out.stdout.splitlines() if "STALE" in line]
    assert stale and all(line.startswith("usage-in-stream.") for line in stale)
    assert all("changed: snippets/streaming/usage_in_stream.py" in line for line in stale)


@pytest.mark.live
def test_real_failed_requests_are_failed_captures(live_server):
    """Captured from the live server and from a closed port: neither can settle a claim."""
    from verify.captures import failure
    from verify.measure.sse import capture
    body = {"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    wrong_model = capture(live_server.api + "/chat/completions", body)
    assert wrong_model["status"] == 404 and "HTTP status 404" in failure(wrong_model)
    closed = capture("http://127.0.0.1:9/v1/chat/completions", body, timeout=5)
    assert closed["status"] is None and "ConnectError" in failure(closed)
    ok = capture(live_server.api + "/chat/completions", {**body, "model": "chat", "max_tokens": 2})
    assert failure(ok) is None


def test_offline_jobs_that_start_engines_of_their_own_run_after_those_that_share_one():
    from verify.runner.offline import offline_order
    jobs = all_jobs()
    order = [j.id for j in offline_order([jobs["offline-generation-defaults"], jobs["offline-vs-server"],
                                          jobs["offline-defaults"]])]
    assert order[-1] == "offline-generation-defaults"


def test_a_job_with_a_server_phase_gets_the_default_server_and_the_runs_starts():
    vs = all_jobs()["offline-vs-server"]
    assert vs.server_phase is not None
    groups = grouping.grouped([vs, _fake_job("q", _one_capture, "max-num-seqs-1")])
    # Offline first, the default server last: started for the phase alone, after every other start.
    assert list(groups) == ["offline engine", "server variant max-num-seqs-1", "server variant default"]
    assert groups["server variant default"] == []
    # The record covers the server command the phase runs under.
    assert "server" in input_hashes.engine_description(vs, CPU)["command"][1]
    record = store.load("offline-vs-server", "cpu")
    assert record["data"]["offline"]["starts"] and record["data"]["server"]["starts"]
    assert record["provenance"]["offline_engine"] and record["provenance"]["server"]


def test_the_run_names_every_verdict_that_changed_against_the_record_it_replaced(tmp_path, monkeypatch):
    _run_on_fake_servers(monkeypatch, tmp_path, [_fake_job("flips", _one_capture)])
    flipped = Job(id="flips", title="flips", question="?", pages=("streaming.md",), collect=_one_capture,
                  claims=(Claim("flips.ok", "ok", lambda d: verdict_if(False, "now refuted")),))
    object.__setattr__(flipped, "module_file", __file__)
    printed = []
    _run_on_fake_servers(monkeypatch, tmp_path, [flipped], printed.append)
    assert "verdicts changed against the records this run replaced (1):" in printed
    assert "  flips.ok: confirmed -> refuted" in printed


def _committed_trials(job_id: str = "cancel-direct") -> list[dict]:
    """The real cancellation trials committed for cpu, as the attempts a replaced trial hands back."""
    data = json.loads(store.record_path(job_id, "cpu").read_text())["data"]
    return [copy.deepcopy(t) for t in data["trials"].values()]


def test_a_cancellation_trial_that_missed_the_request_is_repeated_and_every_attempt_is_kept(monkeypatch):
    from verify.jobs.streaming._cancellation import was_generating
    from verify.measure import cancel
    missed, live = _committed_trials()
    missed["running_at_disconnect"] = 0  # the engine's reading showed nothing running when the client left
    attempts = iter([missed, live])
    monkeypatch.setattr(cancel, "_attempt", lambda *a: next(attempts))
    got = cancel.trial(None, "httpx", None, 600, live=was_generating)
    assert got["attempts"] == 2 and got["running_at_disconnect"] == live["running_at_disconnect"]
    assert [e["not_live"] for e in got["earlier_attempts"]] == [was_generating(missed)]


def test_a_cancellation_trial_gives_up_after_its_attempts_and_stays_inconclusive(monkeypatch):
    from verify.jobs.streaming._cancellation import _decide_client_trial, was_generating
    from verify.measure import cancel
    missed = _committed_trials()[0]
    missed["generated_at_disconnect"] = 0
    calls = []
    monkeypatch.setattr(cancel, "_attempt", lambda *a: calls.append(1) or copy.deepcopy(missed))
    got = cancel.trial(None, "httpx", None, 600, live=was_generating)
    assert len(calls) == cancel.ATTEMPTS == got["attempts"] and len(got["earlier_attempts"]) == cancel.ATTEMPTS - 1
    verdict = _decide_client_trial("httpx", "Direct", True, {"trials": {"httpx": got}})
    assert verdict.verdict == "inconclusive" and f"{cancel.ATTEMPTS} attempts" in verdict.because


class _ProxyStandIn:
    """What capture_paths uses of a proxy: its address and its log (Caddy's words on a real empty 200)."""
    url, ca_file = "http://127.0.0.1:1", None

    def __init__(self):
        self.log = ['{"level":"info","msg":"serving initial configuration"}']

    def error_log(self):
        return list(self.log)


def _capture_paths_on(monkeypatch, replies: list[dict], proxy: _ProxyStandIn):
    """capture_paths over direct and caddy-default, each capture answered by the next reply."""
    from types import SimpleNamespace
    from verify.jobs.streaming import proxy_buffering
    from verify.measure import metrics, sse
    replies = iter(replies)

    def reply(*_a, **_k):
        got = next(replies)
        if not got["lines"]:
            proxy.log.append('{"level":"error","msg":"aborting with incomplete response","error":"read tcp: use of '
                             'closed network connection"}')
        return {**copy.deepcopy(got), "request": {}}
    monkeypatch.setattr(sse, "capture", reply)
    monkeypatch.setattr(metrics, "wait_idle", lambda url: None)
    monkeypatch.setattr(metrics, "read_all", lambda url: {})
    monkeypatch.setattr(metrics, "delta", lambda before, after, prefix: {})
    ctx = SimpleNamespace(server=SimpleNamespace(url="http://127.0.0.1:2"), base_url="http://127.0.0.1:2/v1",
                          proxy=lambda setup: proxy)
    return proxy_buffering.capture_paths(ctx, ("direct", "caddy-default"))


def _committed_stream(path: str = "caddy-default") -> tuple[dict, dict]:
    """A real stream through Caddy committed for cpu, and the same capture as an empty 200 (its lines gone)."""
    stream = json.loads(store.record_path("other-proxies", "cpu").read_text())["data"]["captures"][path]
    return stream, {**copy.deepcopy(stream), "lines": []}


def test_a_stream_that_came_back_empty_through_a_proxy_is_captured_again_and_the_empty_one_kept(monkeypatch):
    from verify.captures import failed_captures
    from verify.jobs.streaming import other_proxies
    good, empty = _committed_stream()
    data = _capture_paths_on(monkeypatch, [good, empty, good], _ProxyStandIn())
    assert data["captures"]["caddy-default"]["lines"] == good["lines"]
    [kept] = data["earlier_attempts"]["caddy-default"]
    assert kept["attempt"] == 1 and kept["why"] == "sse: nothing received" and kept["stream"]["status"] == 200
    assert any("use of closed network connection" in line for line in kept["proxy_log"])
    assert "serving initial configuration" not in " ".join(kept["proxy_log"])  # only what was logged meanwhile
    # The failed attempt is kept untagged: it does not fail the capture the verdict rests on.
    assert failed_captures(data) == [] and "direct" not in data["earlier_attempts"]
    claim = next(c for c in other_proxies.JOB.claims if c.id == "other-proxies.caddy-default")
    assert claim.decide(data).verdict in ("confirmed", "refuted")


def test_a_stream_that_stays_empty_through_every_attempt_leaves_its_claim_inconclusive(monkeypatch):
    from verify.captures import failed_captures
    from verify.jobs.streaming import proxy_buffering
    good, empty = _committed_stream()
    data = _capture_paths_on(monkeypatch, [good] + [empty] * proxy_buffering.ATTEMPTS, _ProxyStandIn())
    assert len(data["earlier_attempts"]["caddy-default"]) == proxy_buffering.ATTEMPTS - 1
    assert failed_captures(data) == ["data.captures.caddy-default: sse: nothing received"]


def test_an_attempt_repeated_because_it_showed_nothing_does_not_fail_the_job():
    """The committed cancel-direct record with an earlier attempt that got nothing (as an empty 200 from
    Caddy gives): kept for the record, it fails nothing; the attempt that decides still does."""
    from verify.captures import failed_captures
    data = copy.deepcopy(json.loads(store.record_path("cancel-direct", "cpu").read_text())["data"])
    trial = data["trials"]["openai"]
    empty = {**copy.deepcopy(trial), "events": 0, "not_live": "no request was running when the client left"}
    empty.pop("earlier_attempts", None)
    trial["earlier_attempts"] = [empty]
    assert failed_captures(data) == []
    del empty["not_live"]  # the same attempt, not marked as replaced: a failed capture
    assert failed_captures(data) and "earlier_attempts[0]" in failed_captures(data)[0]
    trial["events"] = 0  # and the attempt that decides, empty, fails the job whatever came before
    empty["not_live"] = "x"
    assert any("trials.openai:" in f or "trials.openai " in f for f in failed_captures(data))


def test_a_job_that_needs_a_fresh_server_runs_first_on_the_default_start(tmp_path, monkeypatch):
    """No start of its own: the default start serves it before any other job sends a request, the
    jobs that share the server side by side included; the fresh jobs share a context of their own."""
    order, contexts = [], {}

    def noting(name):
        def collect(ctx):
            order.append(name)
            contexts[name] = ctx
            return _one_capture(ctx)
        return collect
    jobs = [_fake_job("a-shared", noting("a-shared")), _fake_job("b-shared", noting("b-shared")),
            _fake_job("c-default", noting("c-default")), _fake_job("d-fresh", noting("d-fresh"), "fresh"),
            _fake_job("e-fresh", noting("e-fresh"), "fresh")]
    for job in jobs[:2]:
        object.__setattr__(job, "shares_server", True)
    starts = _run_on_fake_servers(monkeypatch, tmp_path, jobs)
    assert starts == ["default"] and order[:2] == ["d-fresh", "e-fresh"] and order[-1] == "c-default"
    assert contexts["d-fresh"] is contexts["e-fresh"] and contexts["e-fresh"] is not contexts["c-default"]
    for job in jobs[2:]:
        record = store.load(job.id, "cpu", tmp_path)
        assert record["provenance"]["engine"]["variant"] == job.variant  # its hashed input stays its own
        assert record["provenance"]["server"] == {"variant": "default"} and record["provenance"]["proxies"] == {}


def test_jobs_that_judge_no_timing_run_on_two_engines_and_timing_jobs_after_both(tmp_path, monkeypatch):
    import time
    spans: dict[str, tuple[float, float]] = {}

    def timed(job_id, seconds=0.0):
        def collect(ctx):
            t0 = time.monotonic()
            time.sleep(seconds)
            spans[job_id] = (t0, time.monotonic())
            return _one_capture(ctx)
        return collect
    jobs = [_fake_job("a-untimed", timed("a-untimed", 0.3)), _fake_job("b-timed", timed("b-timed"), timing=True),
            _fake_job("c-lora", timed("c-lora", 0.3), "lora-max-2"),
            _fake_job("d-queue", timed("d-queue"), "max-num-seqs-1", timing=True)]
    starts = _run_on_fake_servers(monkeypatch, tmp_path, jobs)
    assert starts == ["max-num-seqs-1", "default", "lora-max-2"]
    # The two untimed jobs overlapped, on two engines; the timing job on the default server came after both.
    (a0, a1), (c0, c1), (b0, _) = spans["a-untimed"], spans["c-lora"], spans["b-timed"]
    assert a0 < c1 and c0 < a1
    assert b0 >= max(a1, c1)
    lane = store.load("c-lora", "cpu", tmp_path)["provenance"]
    assert lane["two_engines"]["other_engine"].startswith("server variant default")
    assert lane["two_engines"]["this_engine_bound_to_cpus"] == str(os.cpu_count() - 1)
    assert "two_engines" in store.load("a-untimed", "cpu", tmp_path)["provenance"]
    for alone in ("b-timed", "d-queue"):
        assert "two_engines" not in store.load(alone, "cpu", tmp_path)["provenance"]


def test_a_run_with_a_server_given_by_url_never_starts_a_second_engine():
    jobs = {"server variant default": [_fake_job("a", _one_capture)],
            "server variant lora-max-2": [_fake_job("c", _one_capture, "lora-max-2")]}
    assert list(grouping.second_engine_groups(jobs, CPU, None)) == ["server variant lora-max-2"]
    assert grouping.second_engine_groups(jobs, CPU, "http://127.0.0.1:8000") == {}
    assert grouping.second_engine_groups(jobs, get_profile("t4"), None) == {}
