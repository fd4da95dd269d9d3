"""SIGTERM with --shutdown-timeout set: the drain, and a Deployment whose numbers fit it.

The sequence is verify/jobs/health/_drain.py's, with streams of STREAM_TOKENS tokens, on a server
started with --shutdown-timeout SHUTDOWN_TIMEOUT_S. The job also reads the page's Deployment
(snippets/health/deployment.yaml) and records its probe, preStop and grace-period numbers beside the
start-up and drain it measured.
"""

from __future__ import annotations

from verify.job import OFFLINE, Claim, Job, verdict_if

SHUTDOWN_TIMEOUT_S = 30
# The streams must still be generating well after SIGTERM (/metrics is read 1 s after it, /health polled
# every 0.2 s while they drain), not for long: 160 tokens drained for 10-11.6 s after it in the records (first
# token up to 1.9 s late on an old release), so 80 leave several seconds of drain.
STREAM_TOKENS = 80
MANIFEST = "health/deployment.yaml"
EXIT_AFTER_STREAMS_S = 10.0  # the claim: the process exits this soon after the last stream ended (teardown)
STARTUP_MARGIN = 3.0  # the startup probe's budget must exceed the measured start-up this many times


def collect(ctx) -> dict:
    from verify.jobs.health import _drain
    data = _drain.drain(ctx, shutdown_timeout_s=SHUTDOWN_TIMEOUT_S, stream_tokens=STREAM_TOKENS)
    data["manifest"] = _manifest_numbers(ctx.snippet_path(MANIFEST).read_text(encoding="utf-8"))
    return data


def _manifest_numbers(text: str) -> dict:
    import yaml
    deployment = next(doc for doc in yaml.safe_load_all(text) if doc and doc.get("kind") == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    args = container.get("args", [])
    startup = container["startupProbe"]
    return {
        "shutdown_timeout_s": int(args[args.index("--shutdown-timeout") + 1]) if "--shutdown-timeout" in args else 0,
        "grace_period_s": pod.get("terminationGracePeriodSeconds", 30),
        "pre_stop_sleep_s": container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0),
        "startup_budget_s": startup.get("initialDelaySeconds", 0) + startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3),
        "probe_paths": {k: container[k]["httpGet"]["path"] for k in ("startupProbe", "readinessProbe", "livenessProbe")
                        if k in container},
    }


def _last_stream_end_after_signal(d) -> float:
    from verify.jobs.health._drain import after_signal, streams
    return max(after_signal(s, s["ended_s"]) for s in streams(d))


def decide_streams_finish(d):
    from verify.jobs.health._drain import streams, streams_line, streams_missing
    if streams_missing(d):
        return verdict_if(None, streams_missing(d))
    delivered = streams(d)
    if any(s["chunks"] == 0 for s in delivered):
        return verdict_if(None, "a stream had no text before SIGTERM, so it was not in flight: " + streams_line(d))
    whole = all(s["tokens"] == d["stream_tokens"] and s["finish_reason"] == "length" and s["done"]
                and not s["errors"] and not s["client_error"] for s in delivered)
    return verdict_if(whole, streams_line(d))


def decide_new_request_500(d):
    from verify.jobs.health._drain import new_request, request_line
    r = new_request(d, "direct")
    if r is None:
        return verdict_if(None, "the server exited before a new request could be sent")
    if not isinstance(r["status"], int):
        return verdict_if(None, request_line(r, "directly") + ": no HTTP answer")
    return verdict_if(r["status"] == 500, request_line(r, "directly"))


def decide_nginx_passes(d):
    from verify.jobs.health._drain import new_request, request_line
    r, direct = new_request(d, "nginx"), new_request(d, "direct")
    last = _last_stream_end_after_signal(d)
    during = sorted({str(p["health_nginx"]) for p in d["drain"]["polls"] if p["t"] < last})
    if r is None or direct is None or not during:
        return verdict_if(None, "nothing was sent through nginx during the drain")
    return verdict_if(r["status"] == direct["status"] == 500 and during == ["200"],
                      request_line(r, "through nginx") + f"; /health through nginx while the streams drained: "
                                                         f"{', '.join(during)}")


def decide_health_during(d):
    last = _last_stream_end_after_signal(d)
    during = [p for p in d["drain"]["polls"] if p["t"] < last]
    if len(during) < 3:
        return verdict_if(None, f"only {len(during)} /health polls while the streams drained")
    statuses = sorted({str(p["health"]) for p in during} | {str(p["models"]) for p in during})
    return verdict_if(statuses == ["200"], f"{len(during)} polls in the {last:.1f} s the streams drained: "
                                           f"/health and /v1/models answered {', '.join(statuses)}")


def decide_exits_after(d):
    exit_s, last = d["drain"]["exit_s"], _last_stream_end_after_signal(d)
    if exit_s is None:
        return verdict_if(False, f"the server had not exited when the job stopped waiting")
    return verdict_if(exit_s - last <= EXIT_AFTER_STREAMS_S and exit_s < SHUTDOWN_TIMEOUT_S,
                      f"last stream ended {last:.2f} s after SIGTERM, the process exited at {exit_s:.2f} s "
                      f"(code {d['drain']['server_exit_code']}); shutdown timeout {SHUTDOWN_TIMEOUT_S} s")


def decide_metrics_show_drain(d):
    from verify.jobs.health._drain import PATHS
    during = d["drain"]["metrics_during"]
    if during is None:
        return verdict_if(None, "/metrics was not read during the drain")
    m = during["metrics"]
    if not isinstance(m, dict):
        return verdict_if(False, f"/metrics read {during['t']:.2f} s after SIGTERM got {m}")
    running = m.get("vllm:num_requests_running")
    # At least one, not all: the gauges are the engine's last report, which can lag a step behind.
    return verdict_if(running is not None and running >= 1,
                      f"/metrics read {during['t']:.2f} s after SIGTERM: vllm:num_requests_running {running}, "
                      f"vllm:num_requests_waiting {m.get('vllm:num_requests_waiting')}, with {len(PATHS)} streams draining")


def decide_manifest_fits(d):
    m, exit_s, ready_s = d["manifest"], d["drain"]["exit_s"], d["startup"]["ready_s"]
    if exit_s is None:
        return verdict_if(None, "no drain time was measured")
    teardown = exit_s - _last_stream_end_after_signal(d)
    fits = (m["grace_period_s"] >= m["pre_stop_sleep_s"] + m["shutdown_timeout_s"] + teardown
            and m["shutdown_timeout_s"] == SHUTDOWN_TIMEOUT_S and exit_s <= m["shutdown_timeout_s"]
            and m["startup_budget_s"] >= STARTUP_MARGIN * ready_s)
    return verdict_if(fits, f"grace period {m['grace_period_s']} s against preStop {m['pre_stop_sleep_s']} s + "
                            f"--shutdown-timeout {m['shutdown_timeout_s']} s + the measured teardown {teardown:.1f} s "
                            f"(last stream's end to exit); measured drain {exit_s:.1f} s; startup probe budget "
                            f"{m['startup_budget_s']} s against a measured start-up of {ready_s:.1f} s (at least "
                            f"{STARTUP_MARGIN:.0f}x required)")


JOB = Job(
    id="drain-grace",
    title="SIGTERM with a shutdown timeout: the drain",
    question=f"With --shutdown-timeout {SHUTDOWN_TIMEOUT_S}, what do streams in flight, a new request and the "
             "probes get on SIGTERM, and how soon does the process exit?",
    pages=("health.md",),
    engine=OFFLINE,
    starts_own_engine=True,  # the job launches and signals a server of its own
    collect=collect,
    claims=(
        Claim("drain-grace.streams-finish", "With a shutdown timeout, streams in flight on SIGTERM, direct or "
              "through nginx, receive every token and end with their finish reason and [DONE].", decide_streams_finish),
        Claim("drain-grace.new-request-500", "A new request during the drain gets HTTP 500, not a 503.",
              decide_new_request_500),
        Claim("drain-grace.nginx-passes-500", "Through nginx, the drain looks the same: /health answers 200 "
              "and a new request gets the server's 500.", decide_nginx_passes),
        Claim("drain-grace.health-200-while-draining", "/health and /v1/models answer 200 while the server drains.",
              decide_health_during),
        Claim("drain-grace.exits-when-drained", f"The process exits within {EXIT_AFTER_STREAMS_S:.0f} s of the last "
              "stream's end, not when the timeout runs out.", decide_exits_after, timing=True),
        Claim("drain-grace.metrics-show-drain", "/metrics keeps answering during the drain and shows requests "
              "running.", decide_metrics_show_drain),
        Claim("drain-grace.manifest-fits", "The page's Deployment fits the measured timeline: its grace period "
              "covers the preStop sleep, the shutdown timeout and the teardown measured after the last stream, the measured drain fits the timeout, and its "
              "startup probe allows several times the measured start-up.", decide_manifest_fits, timing=True),
    ),
)
