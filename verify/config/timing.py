"""Which claims are timing claims: their verdict rests on how fast the machine is.

A timing claim can flip on a CPU with fewer cores or without AVX-512 although no sentence is wrong;
where a record from other hardware than the committed one decides such a claim otherwise, the
verdicts layer reports a hardware difference instead of a contradiction (verify/verdicts/hardware.py),
the release bisection measures both ends on one machine first, and the live sample notes it. This is
how a differing verdict is read, never how it is decided: editing the table leaves every record fresh.
"""

TIMING_CLAIMS: dict[str, tuple[str, ...]] = {
    "admission-limit": (
        "admission-limit.refused-fast",
        "admission-limit.sdk-no-retries",
    ),
    "api-server-cpu": (
        "api-server-cpu.small-beside-engine",
        "api-server-cpu.streaming-costs-more",
    ),
    "batching": (
        "batching.itl-rises",
        "batching.throughput-rises",
    ),
    "bench-agreement": (
        "bench-agreement.itl-agrees",
        "bench-agreement.same-seed-is-cached",
        "bench-agreement.ttft-agrees",
    ),
    "bench-definitions": (
        "bench-definitions.empty-chunk-with-first-token",
        "bench-definitions.guidellm-itl",
        "bench-definitions.guidellm-tpot",
        "bench-definitions.guidellm-ttft",
        "bench-definitions.harness-itl-is-tpot",
        "bench-definitions.harness-ttft-agrees",
        "bench-definitions.overhead-small",
        "bench-definitions.ttft-first-chunk",
    ),
    "cancel-caddy-default": (
        "cancel-caddy-default.httpx",
        "cancel-caddy-default.openai",
    ),
    "cancel-direct": (
        "cancel-direct.httpx",
        "cancel-direct.openai",
    ),
    "cancel-haproxy-default": (
        "cancel-haproxy-default.httpx",
        "cancel-haproxy-default.openai",
    ),
    "cancel-nginx-default": (
        "cancel-nginx-default.httpx",
        "cancel-nginx-default.openai",
    ),
    "cancel-nginx-ignore-abort": (
        "cancel-nginx-ignore-abort.non-streaming-default-stops",
        "cancel-nginx-ignore-abort.non-streaming-keeps-running",
        "cancel-nginx-ignore-abort.stream-still-stops",
    ),
    "cancel-nginx-streaming": (
        "cancel-nginx-streaming.httpx",
        "cancel-nginx-streaming.openai",
    ),
    "cancel-nginx-tls": (
        "cancel-nginx-tls.httpx",
        "cancel-nginx-tls.openai",
    ),
    "chunk-shapes": (
        "chunk-shapes.finish-token",
        "chunk-shapes.one-token-per-chunk",
    ),
    "client-retries": (
        "client-retries.amplification",
        "client-retries.sequential-copies",
    ),
    "drain-abort": (
        "drain-abort.exits-after-streams",
        "drain-abort.refused-at-once",
    ),
    "drain-grace": (
        "drain-grace.exits-when-drained",
        "drain-grace.manifest-fits",
    ),
    "finish-reasons": (
        "finish-reasons.broken",
    ),
    "grammar-compile": (
        "grammar-compile.first-request",
        "grammar-compile.later-schemas",
    ),
    "health-probes": (
        "health-probes.dead-exits",
        "health-probes.dead-health-503",
    ),
    "httpx-close": (
        "httpx-close.prompt",
    ),
    "kv-timeline": (
        "kv-timeline.rises-and-returns",
    ),
    "load-signals": (
        "load-signals.alert-fires",
        "load-signals.alert-resolves",
        "load-signals.ttft-moves-with-queue",
        "load-signals.waiting-past-limit",
    ),
    "lora-cost": (
        "lora-cost.slower",
    ),
    # Which requests decode together depends on their arriving together: measured beside a second
    # engine, the client's sends spread out and the verdict flipped (two of three trials told nothing).
    "lora-max-loras": (
        "lora-max-loras.two-at-a-time",
    ),
    "max-num-seqs-queue": (
        "max-num-seqs-queue.prefill-excludes-queue",
        "max-num-seqs-queue.queue-time-histogram",
        "max-num-seqs-queue.served-one-after-another",
        "max-num-seqs-queue.waiting-count",
    ),
    "offline-batching": (
        "offline-batching.one-call-faster",
        "offline-batching.speedup-grows",
    ),
    "offline-vs-server": (
        "offline-vs-server.server-caps-running",
        "offline-vs-server.starts-sooner",
        "offline-vs-server.throughput",
    ),
    "other-proxies": (
        "other-proxies.caddy-default",
        "other-proxies.caddy-streaming",
        "other-proxies.caddy-tls",
        "other-proxies.haproxy-default",
        "other-proxies.haproxy-streaming",
        "other-proxies.haproxy-tls",
    ),
    "prefill-stall": (
        "prefill-stall.chunked-prefill-on-by-default",
        "prefill-stall.decode-waits",
    ),
    "prefill-stall-chunked": (
        "prefill-stall-chunked.stall-bounded",
    ),
    "prefix-hits": (
        "prefix-hits.hit-skips-prefill",
    ),
    "probe-tls-default": (
        "probe-tls-default.cancel-reaches-engine",
        "probe-tls-default.finds-blocks",
    ),
    "prompt-length-sweep": (
        "prompt-length-sweep.itl-flat",
        "prompt-length-sweep.itl-matches-server",
        "prompt-length-sweep.prefill-grows",
        "prompt-length-sweep.prefill-linear",
        "prompt-length-sweep.prompt-token-cheaper",
        "prompt-length-sweep.repeat-served-from-cache",
        "prompt-length-sweep.ttft-grows",
    ),
    "proxy-buffering": (
        "proxy-buffering.nginx-default",
        "proxy-buffering.nginx-streaming",
        "proxy-buffering.nginx-tls",
        "proxy-buffering.nginx-tls-streaming",
        "proxy-buffering.server-unaffected",
    ),
    "proxy-read-timeout": (
        "proxy-read-timeout.long-stream-completes",
        "proxy-read-timeout.non-streaming-cut",
        "proxy-read-timeout.slow-first-token-cut",
    ),
    "queue-grows": (
        "queue-grows.ttft-arithmetic",
    ),
    "queued-tokens": (
        "queued-tokens.generating-free",
        "queued-tokens.refused-503",
    ),
    "request-phases": (
        "request-phases.phases-add-up",
    ),
    "server-processes": (
        "server-processes.busy-cores",
    ),
    "stream-timing": (
        "stream-timing.e2e-parity",
        "stream-timing.ttft-fraction",
    ),
    "structured-output": (
        "structured-output.small-cost",
    ),
    "throughput": (
        "throughput.cost-falls",
        "throughput.rises-with-concurrency",
    ),
    "ttft-clocks": (
        "ttft-clocks.covers-queue-and-prefill",
    ),
    "ttft-quantiles": (
        "ttft-quantiles.exact",
    ),
    "wire-format": (
        "wire-format.no-n-pipe-burst",
        "wire-format.no-n-terminal-burst",
    ),
}


def timing_claims(job) -> frozenset[str]:
    """The job's timing claims."""
    return frozenset(TIMING_CLAIMS.get(job.id, ()))
