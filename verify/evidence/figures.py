"""The headline figures of each job's evidence, and which of them moved between two records.

The page comparing two vLLM releases lists every claim whose verdict changed and
every measured figure that moved beyond its job's tolerance. This module says which
numbers are a job's headline figures, how to read them from a record's data, and how
far each job's figures may move before the move counts.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable

from verify.jobs.cost import billing
from verify.jobs.cost import throughput as throughput_job
from verify.jobs.kv_cache import kv_sizing
from verify.jobs.lifecycle import max_num_seqs_queue, request_phases, ttft_clocks
from verify.jobs.offline import offline_batching, offline_vs_server
from verify.jobs.prefill_decode import _stall, batching, bench_agreement, prompt_length_sweep
from verify.jobs.streaming import api_server_cpu, stream_timing

# Timings (wall-clock or CPU time) on the shared 2-core CPU machine: the committed records
# of one release, made on the same CPU model on different days, put the same median up to
# about 30 % apart, so only a larger move counts.
TIMING_TOLERANCE = 0.3
# Token and block counts, sizes and limits are exact: any change is a change.
EXACT = 0.0

# What a failed or partial capture raises when a figure is read from it.
_FAILED = (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, AttributeError,
           StopIteration, statistics.StatisticsError)


@dataclass(frozen=True)
class Figures:
    extract: Callable[[dict], dict[str, float]]  # a record's "data" -> {figure name: number}
    tolerance: float  # relative change allowed before a figure counts as moved
    why: str  # why this tolerance
    unit: str = ""  # shown after the numbers; "" when the names carry their own units


def _each(getters: dict[str, Callable[[dict], float]]) -> Callable[[dict], dict[str, float]]:
    """An extractor built from one getter per figure: a figure the data cannot give is left out, not the rest."""
    def extract(data: dict) -> dict[str, float]:
        out = {}
        for name, get in getters.items():
            try:
                value = float(get(data))
            except _FAILED:
                continue
            if math.isfinite(value):
                out[name] = value
        return out
    extract.names = tuple(getters)  # every figure it can give: a complete record must give them all
    return extract


def _median(values) -> float:
    """The median of the readings a capture gave (a reading it did not get, None, left out)."""
    return statistics.median([v for v in values if v is not None])


def _ms(seconds: float) -> float:
    return seconds * 1000


# --- streaming

def _streamed(d, mode: str, key: str) -> float:
    return _ms(_median(t[key] for t in d["trials"][mode]))


_ANSWER = stream_timing.MAX_TOKENS

STREAM_TIMING = _each({
    "time to first token, streamed, median": lambda d: _streamed(d, "streaming", "ttft"),
    "inter-token latency, streamed, median": lambda d: _streamed(d, "streaming", "itl"),
    f"end-to-end time of a {_ANSWER}-token answer, streamed, median": lambda d: _streamed(d, "streaming", "e2e"),
    f"end-to-end time of a {_ANSWER}-token answer, not streamed, median":
        lambda d: _streamed(d, "non_streaming", "e2e"),
})


def _api_cpu(d, stream: bool, concurrency: int, part: str) -> float:
    """The median over the job's rounds of one mode and concurrency."""
    return _median(api_server_cpu.cpu_per_token_ms(b)[part] for b in d["batches"]
                   if b["stream"] == stream and b["concurrency"] == concurrency)


_ONE, _MANY = min(api_server_cpu.LEVELS), max(api_server_cpu.LEVELS)

API_SERVER_CPU = _each({
    "API server CPU per generated token, one request at a time, not streamed":
        lambda d: _api_cpu(d, False, _ONE, "api"),
    "API server CPU per generated token, one request at a time, streamed": lambda d: _api_cpu(d, True, _ONE, "api"),
    f"API server CPU per generated token, {_MANY} requests at once, streamed":
        lambda d: _api_cpu(d, True, _MANY, "api"),
    "engine CPU per generated token, one request at a time, streamed": lambda d: _api_cpu(d, True, _ONE, "engine"),
})


# --- prefill and decode

def _sweep_row(d, which: int) -> dict:
    return prompt_length_sweep.by_length(d)[which]


_SHORTEST, _LONGEST = prompt_length_sweep.SENTENCES[0], prompt_length_sweep.SENTENCES[-1]

PROMPT_LENGTH_SWEEP = _each({
    f"time to first token, shortest prompt ({_SHORTEST} sentence), median": lambda d: _ms(_sweep_row(d, 0)["ttft"]),
    f"time to first token, longest prompt ({_LONGEST} sentences), median": lambda d: _ms(_sweep_row(d, -1)["ttft"]),
    f"server prefill time per prompt token, longest prompt ({_LONGEST} sentences), median":
        lambda d: _ms(_sweep_row(d, -1)["prefill"] / _sweep_row(d, -1)["prompt_tokens"]),
    "inter-token latency, median over every prompt length": lambda d: _ms(_median(r["itl"] for r in d["runs"])),
    "time to first token of the longest prompt sent again (prefix cache)": lambda d: _ms(d["repeat_of_last"]["ttft"]),
})


def _batching_row(d, concurrency: int) -> dict:
    return next(r for r in batching.by_concurrency(d) if r["concurrency"] == concurrency)


_MOST = batching.CONCURRENCY[-1]

BATCHING = _each({
    "throughput, one request alone (tokens/s)": lambda d: _batching_row(d, 1)["throughput"],
    f"throughput, {_MOST} requests at once (tokens/s)": lambda d: _batching_row(d, _MOST)["throughput"],
    "inter-token latency per request, one request alone, median (ms)": lambda d: _ms(_batching_row(d, 1)["itl"]),
    f"inter-token latency per request, {_MOST} requests at once, median (ms)":
        lambda d: _ms(_batching_row(d, _MOST)["itl"]),
})


BENCH_AGREEMENT = _each({
    "vllm bench serve: time to first token, median": lambda d: _ms(bench_agreement.figures(d)["bench_ttft"]),
    "vllm bench serve: inter-token latency, median": lambda d: _ms(bench_agreement.figures(d)["bench_itl"]),
    "harness: time to first token, median": lambda d: _ms(bench_agreement.figures(d)["harness_ttft"]),
    "harness: inter-token latency, median": lambda d: _ms(bench_agreement.figures(d)["harness_itl"]),
    "vllm bench serve: time to first token run again with the same seed (prefix cache), median":
        lambda d: d["same_seed_again"]["result"]["median_ttft_ms"],
})


PREFILL_STALL = _each({
    "long prompt's time, sent to answered": lambda d: _ms(_stall.analyse(d)["long_prompt_s"]),
    "stream's largest gap between tokens (the stall)": lambda d: _ms(_stall.analyse(d)["largest_gap"]),
    "stream's median gap between tokens": lambda d: _ms(_stall.analyse(d)["median_gap"]),
})


# --- cost

def _throughput_at(concurrency: int) -> Callable[[dict], float]:
    return lambda d: throughput_job.throughput(d)[concurrency]["median"]


THROUGHPUT = _each({f"throughput at {c} concurrent request{'s' if c > 1 else ''}, median": _throughput_at(c)
                    for c in throughput_job.LEVELS})


BILLING = _each({
    "completion tokens of /v1/completions without max_tokens": lambda d: d["completions_default"]["completion_tokens"],
    "completion tokens of /v1/chat/completions without max_tokens, prompt near the context's end":
        lambda d: d["chat_default"]["completion_tokens"],
    f"prompt tokens billed for an n={billing.N} request": lambda d: d["n3"]["prompt_tokens"],
    f"prompt tokens the engine counted for the same n={billing.N} request":
        lambda d: d["n3"]["engine"]["prompt_tokens_total"],
    "prefix-cache hits of a long prompt sent again": lambda d: d["repeat_second"]["engine"]["prefix_cache_hits_total"],
})


# --- KV cache

KV_SIZING = _each({
    "KV cache size reported at start-up (tokens)": lambda d: kv_sizing._reported(d)["tokens"],
    "KV cache blocks (num_gpu_blocks)": lambda d: d["cache_config"]["num_gpu_blocks"],
    "block size (tokens)": lambda d: d["cache_config"]["block_size"],
    "maximum concurrency at the full context length (requests)": lambda d: kv_sizing._reported(d)["concurrency"],
    "memory given to the KV cache (MiB)": lambda d: int(d["cache_config"]["kv_cache_memory_bytes"]) / 2**20,
})


def _blocks_held(d, usage: float) -> int:
    return round(usage * d["num_blocks"])


KV_RESERVATION = _each({
    "blocks held after the first token, max_tokens near the context length":
        lambda d: _blocks_held(d, d["large"]["readings"][0][1]),
    "blocks held after the last token read, max_tokens near the context length":
        lambda d: _blocks_held(d, d["large"]["readings"][-1][1]),
    # The small request's last reading comes after it finished, its blocks already freed.
    "most blocks held, max_tokens just large enough":
        lambda d: max(_blocks_held(d, r[1]) for r in d["small"]["readings"][:-1]),
})


def _timed_prefix(d, which: str) -> float:
    return _ms(_median(t[which]["ttft_s"] for t in d["timed"]))


PREFIX_HITS = _each({
    "time to first token, long prompt, cold, median": lambda d: _timed_prefix(d, "cold"),
    "time to first token, the same long prompt again (cache hit), median": lambda d: _timed_prefix(d, "warm"),
})


# --- lifecycle

def _phase(t, name):
    return t["phases"][name]["seconds"]


def _phase_median(d, name):
    return _ms(_median(_phase(t, name) for t in d["trials"]))


REQUEST_PHASES = _each({
    "server prefill time, median": lambda d: _phase_median(d, "request_prefill_time_seconds"),
    f"server decode time of a {request_phases.MAX_TOKENS}-token answer, median":
        lambda d: _phase_median(d, "request_decode_time_seconds"),
    "server end-to-end latency, median": lambda d: _phase_median(d, "e2e_request_latency_seconds"),
    "client's wait, send to last byte, median": lambda d: _ms(_median(t["client_e2e_s"] for t in d["trials"])),
})


def _server_ttft(t) -> float:
    # Strict: the job reads a missing histogram as 0, which would show as a move here.
    return t["histograms"]["vllm:time_to_first_token_seconds_sum"]


TTFT_CLOCKS = _each({
    "client time to first token, median": lambda d: _ms(_median(ttft_clocks._client_ttft(t) for t in d["trials"])),
    "server time to first token (histogram), median": lambda d: _ms(_median(_server_ttft(t) for t in d["trials"])),
    "client minus server time to first token, median":
        lambda d: _ms(_median(ttft_clocks._client_ttft(t) - _server_ttft(t) for t in d["trials"])),
})


def _queue(d) -> list[dict]:
    return max_num_seqs_queue._timings(d)


def _waits(d) -> float:
    t = _queue(d)
    return sum(x["ttft"] - t[0]["ttft"] for x in t)


MAX_NUM_SEQS_QUEUE = _each({
    "first text of the request served last (it waited for the others)": lambda d: _queue(d)[-1]["ttft"],
    f"time to stream one {max_num_seqs_queue.MAX_TOKENS}-token answer, first text to last event, median":
        lambda d: _median(x["e2e"] - x["ttft"] for x in _queue(d)),
    "waits the clients saw, summed over the requests": _waits,
    "queue time the server recorded, summed (vllm:request_queue_time_seconds)":
        lambda d: d["histograms"]["vllm:request_queue_time_seconds_sum"],
})


# --- offline engine

def _offline_throughput(d, engine: str) -> float:
    return _median(offline_vs_server.throughput(t, d) for t in d[engine]["trials"])


OFFLINE_VS_SERVER = _each({
    "offline engine throughput, median (tokens/s)": lambda d: _offline_throughput(d, "offline"),
    "server throughput, every request in flight, median (tokens/s)": lambda d: _offline_throughput(d, "server"),
    "offline engine start-up, fresh process to constructed vllm.LLM, median (s)":
        lambda d: _median(d["offline"]["starts_s"]),
    "server start-up, launch to healthy, median (s)": lambda d: _median(d["server"]["starts_s"]),
})


_LARGEST = str(offline_batching.SIZES[-1])

OFFLINE_BATCHING = _each({
    "one generate() call, 1 prompt (s)": lambda d: d["sizes"]["1"]["batch_seconds"],
    f"one generate() call, {_LARGEST} prompts (s)": lambda d: d["sizes"][_LARGEST]["batch_seconds"],
    f"one call per prompt, {_LARGEST} prompts (s)": lambda d: d["sizes"][_LARGEST]["loop_seconds"],
    f"speed-up of one call over a loop, {_LARGEST} prompts (x)":
        lambda d: offline_batching.speedup(d["sizes"][_LARGEST]),
})


# --- sampling

def _per_token_ms(samples) -> float:
    return _ms(_median(s["seconds"] / s["tokens"] for s in samples if s["tokens"]))


STRUCTURED_OUTPUT = _each({
    "time per output token, JSON schema constrained, median": lambda d: _per_token_ms(d["constrained"]["samples"]),
    "time per output token, unconstrained, median": lambda d: _per_token_ms(d["unconstrained"]["samples"]),
})


_TIMING_WHY = "timings on a shared 2-core machine move this much between runs of one release (TIMING_TOLERANCE)"

FIGURES: dict[str, Figures] = {
    "stream-timing": Figures(STREAM_TIMING, TIMING_TOLERANCE, _TIMING_WHY, "ms"),
    "api-server-cpu": Figures(API_SERVER_CPU, TIMING_TOLERANCE, _TIMING_WHY, "ms"),
    "prompt-length-sweep": Figures(PROMPT_LENGTH_SWEEP, TIMING_TOLERANCE, _TIMING_WHY, "ms"),
    "batching": Figures(BATCHING, TIMING_TOLERANCE, _TIMING_WHY),
    "bench-agreement": Figures(BENCH_AGREEMENT, bench_agreement.TTFT_AGREEMENT,
                               "the job's own threshold for two measurements of one TTFT to agree, TTFT_AGREEMENT",
                               "ms"),
    "prefill-stall": Figures(PREFILL_STALL, TIMING_TOLERANCE, _TIMING_WHY, "ms"),
    "prefill-stall-chunked": Figures(PREFILL_STALL, TIMING_TOLERANCE, _TIMING_WHY, "ms"),
    "throughput": Figures(THROUGHPUT, TIMING_TOLERANCE, _TIMING_WHY, "tokens/s"),
    "billing": Figures(BILLING, EXACT, "token counts are exact", "tokens"),
    "kv-sizing": Figures(KV_SIZING, EXACT, "the sizes, counts and limits the server reports are exact"),
    "kv-reservation": Figures(KV_RESERVATION, EXACT, "block counts are exact", "blocks"),
    "prefix-hits": Figures(PREFIX_HITS, TIMING_TOLERANCE, _TIMING_WHY, "ms"),
    "request-phases": Figures(REQUEST_PHASES, TIMING_TOLERANCE, _TIMING_WHY, "ms"),
    "ttft-clocks": Figures(TTFT_CLOCKS, TIMING_TOLERANCE, _TIMING_WHY, "ms"),
    # QUEUE_TIME_AGREEMENT (25 %) compares two clocks on the same requests; between runs of one
    # release the waits themselves differ by up to about 30 %.
    "max-num-seqs-queue": Figures(MAX_NUM_SEQS_QUEUE, TIMING_TOLERANCE, _TIMING_WHY, "s"),
    # THROUGHPUT_TOLERANCE (10 %) compares the two engines within one run; between runs of one
    # release their medians differ by up to about a third.
    "offline-vs-server": Figures(OFFLINE_VS_SERVER, TIMING_TOLERANCE, _TIMING_WHY),
    "offline-batching": Figures(OFFLINE_BATCHING, TIMING_TOLERANCE, _TIMING_WHY),
    "structured-output": Figures(STRUCTURED_OUTPUT, TIMING_TOLERANCE, _TIMING_WHY, "ms"),
}


def figures_of(job_id: str, data: dict) -> dict[str, float]:
    """The job's headline figures from a record's data; {} when the job has none or the data cannot give them
    (never raises)."""
    figures = FIGURES.get(job_id)
    if figures is None:
        return {}
    try:
        found = figures.extract(data)
    except _FAILED:
        return {}
    return {name: float(v) for name, v in found.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


def moved(job_id: str, before: dict, after: dict) -> list[dict]:
    """Figures (by name) present in both data dicts whose relative change exceeds the job's tolerance:
    [{"name", "before", "after", "change" (relative, signed, rounded), "tolerance", "unit"}], sorted by name.
    A figure that was 0 before has no relative change: it counts as moved when it is no longer 0 (change None)."""
    figures = FIGURES.get(job_id)
    if figures is None:
        return []
    a, b = figures_of(job_id, before), figures_of(job_id, after)
    out = []
    for name in sorted(a.keys() & b.keys()):
        x, y = a[name], b[name]
        if x == 0:
            if y == x:
                continue
            change = None
        else:
            change = (y - x) / abs(x)
            if abs(change) <= figures.tolerance:
                continue
            change = float(f"{change:.3g}")
        out.append({"name": name, "before": round(x, 3), "after": round(y, 3), "change": change,
                    "tolerance": figures.tolerance, "unit": figures.unit})
    return out
