"""Every claim in the registry can be shown wrong by data, and made blind by damage.

Replays the committed cpu records (captured from a live vLLM server by `verify run`). For each
claim, tests/flips.py searches one edit of its real record that turns its verdict to the opposite
one: a rule no single change can turn would read the same whatever the server did. The damage half
(a failed capture makes every claim inconclusive) is test_run_machinery's, per job, for every job.
A new claim cannot land without a flip: it is searched like the rest. Only two kinds are not
searched: the claims in HAND_FLIPS, whose rule reads a trend over many values or a pair of values
that must move together, so each has a hand-made edit of its record that shows the server behaving
the other way; and the few in UNFLIPPABLE, each with its reason.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from typing import Callable

import pytest

from tests.flips import OPPOSITE, find_flip
from verify.evidence import store
from verify.job import INCONCLUSIVE
from verify.registry import all_claims, all_jobs

BUDGET = 5000  # edits tried per claim before giving up


# Hand-made edits. Each changes a deep copy of the committed record's data, in place, into what a server
# that behaves the other way would have recorded, and no more than the claim's rule needs. They are
# written against the records' structure, not their values, so they keep working on re-recorded data.

def _data_times(lines: list[dict]) -> list[float]:
    return [x["t"] for x in lines if x["line"].startswith("data: ")]


def _reverse_over_lengths(runs: list[dict], *path: str) -> None:
    """The value at path in each run, given to the runs of the mirror-image prompt length: the shortest
    prompt gets the longest prompt's values and so on, so a rising trend falls."""
    by_length: dict[int, list[dict]] = {}
    for run in runs:
        by_length.setdefault(run["prompt_tokens"] if "prompt_tokens" in run else run["sentences"], []).append(run)
    groups = [by_length[k] for k in sorted(by_length)]

    def get(run):
        for key in path[:-1]:
            run = run[key]
        return run, path[-1]
    values = [[get(r)[0][get(r)[1]] for r in g] for g in groups]
    for group, mirrored in zip(groups, reversed(values)):
        for run, value in zip(group, mirrored):
            holder, key = get(run)
            holder[key] = value


def requests_served_one_after_another(d: dict) -> None:
    """batching.throughput-rises: no batching. The requests sent together are served one at a time, each
    taking as long as it did: each request's lines arrive after the requests before it have finished."""
    for run in d["runs"]:
        wait = 0.0
        for request in sorted(run["requests"], key=lambda r: _data_times(r["lines"])[-1]):
            for line in request["lines"]:
                line["t"] = round(line["t"] + wait, 4)
            wait = _data_times(request["lines"])[-1]


def batch_steps_as_fast_as_one(d: dict) -> None:
    """batching.itl-rises: a batch costs each request nothing: in the largest batch, every request's
    tokens come as far apart as one request's alone."""
    from verify.jobs.prefill_decode.batching import by_concurrency
    rows = by_concurrency(d)
    factor = rows[0]["itl"] / rows[-1]["itl"]
    top = max(run["concurrency"] for run in d["runs"])
    for run in d["runs"]:
        if run["concurrency"] != top:
            continue
        for request in run["requests"]:
            start = _data_times(request["lines"])[0]
            for line in request["lines"]:
                if line["t"] > start:
                    line["t"] = round(start + (line["t"] - start) * factor, 4)


def decode_slows_with_context(d: dict) -> None:
    """prompt-length-sweep.itl-flat: each generated token costs more as the context grows: the longest
    prompt's inter-token latency is half as long again as the shortest's."""
    shortest = min(r["sentences"] for r in d["runs"])
    longest = max(r["sentences"] for r in d["runs"])
    base = sorted(r["itl"] for r in d["runs"] if r["sentences"] == shortest)
    for run in d["runs"]:
        if run["sentences"] == longest:
            run["itl"] = base[len(base) // 2] * 1.5


def engine_counts_prompt_once_for_n(d: dict) -> None:
    """billing.n-computes-prompt-once: the engine prefills the prompt once and forks the n answers from it,
    so its prompt-token counter rises by the same amount for n=3 as for n=1."""
    d["n3"]["engine"]["prompt_tokens_total"] = d["n1"]["engine"]["prompt_tokens_total"]


def abort_not_logged(d: dict) -> None:
    """cancel-direct.log-line: the server stops the request without logging it: no abort line in its log."""
    for trial in d["trials"].values():
        trial["abort_log_lines"] = []
        trial["request_log_lines"] = [x for x in trial["request_log_lines"] if not re.search("abort", x, re.I)]


def finish_reason_rides_on_last_text(d: dict) -> None:
    """chunk-shapes.finish-on-last-text: the server puts finish_reason on the chunk of the last text and
    sends no empty finish chunk after it."""
    for stream in d["streams"].values():
        lines = stream["lines"]
        events = [(i, json.loads(x["line"][6:])) for i, x in enumerate(lines) if x["line"].startswith("data: {")]
        events = [(i, c) for i, c in events if c.get("choices")]
        finish = next(k for k, (_, c) in enumerate(events) if c["choices"][0].get("finish_reason"))
        finish_line, finish_chunk = events[finish]
        if finish_chunk["choices"][0]["delta"].get("content"):
            continue
        text_line, text_chunk = next((i, c) for i, c in reversed(events[:finish]) if c["choices"][0]["delta"].get("content"))
        for key in ("finish_reason", "stop_reason"):
            if key in finish_chunk["choices"][0]:
                text_chunk["choices"][0][key] = finish_chunk["choices"][0][key]
        lines[text_line]["line"] = "data: " + json.dumps(text_chunk)
        end = finish_line + 1
        if end < len(lines) and lines[end]["line"] == "":  # the blank line that ends the event
            end += 1
        del lines[finish_line:end]


def concurrency_not_tokens_over_context(d: dict) -> None:
    """kv-sizing.max-concurrency: the start-up report's 'maximum concurrency' is not the cache's tokens over
    the context length (here: twice that, as if a request took half the context)."""
    d["report"]["lines"] = [re.sub(r"(Maximum concurrency for [\d,]+ tokens per request: )([\d.]+)x",
                                   lambda m: f"{m.group(1)}{float(m.group(2)) * 2:.2f}x", x) for x in d["report"]["lines"]]


def cpu_build_picks_gpu_block_size(d: dict) -> None:
    """kv-sizing.cpu-block-size: with no --block-size flag, the CPU build picks 16-token blocks, as on a GPU."""
    for key in ("block_size", "effective_attention_block_size"):
        if key in d["cache_config"]:
            d["cache_config"][key] = "16"


def module_launch_not_deprecated(d: dict) -> None:
    """launch-path.deprecated: a release that starts from the module without any deprecation warning."""
    d["deprecation_lines"] = []


def chat_answers_like_generate(d: dict) -> None:
    """offline-chat.answers-differ: the chat template does not change the greedy answer: generate() gives
    chat()'s text."""
    d["generate"]["text"] = d["chat"]["text"]
    d["generate"]["events"] = d["chat"]["events"]


def every_refusal_names_its_parameter(d: dict) -> None:
    """parameter-validation.error-names-parameter: every refusal without error.param names there the
    parameter its message is about."""
    for case in d["cases"].values():
        error = (case.get("body") or {}).get("error")
        if isinstance(error, dict) and not error.get("param"):
            named = [p for p in case["params"] if p in (error.get("message") or "")]
            if named:
                error["param"] = named[0]


def hit_recomputes_prefill(d: dict) -> None:
    """prefix-hits.hit-skips-prefill: a hit saves no prefill time: the warm request's TTFT is its cold one's."""
    for pair in d["timed"]:
        pair["warm"]["ttft_s"] = pair["cold"]["ttft_s"]


def ttft_falls_with_length(d: dict) -> None:
    """prompt-length-sweep.ttft-grows: TTFT falls as prompts grow (the lengths' TTFTs in mirror order)."""
    _reverse_over_lengths(d["runs"], "ttft")


def prefill_falls_with_length(d: dict) -> None:
    """prompt-length-sweep.prefill-grows: the engine's own prefill time falls as prompts grow."""
    _reverse_over_lengths(d["runs"], "server", "request_prefill_time_seconds_sum")


def prefill_one_token_per_step(d: dict) -> None:
    """prompt-length-sweep.prompt-token-cheaper: prefill works one token per step, as decode does: each
    request's TTFT is its prompt length times its own inter-token latency."""
    for run in d["runs"]:
        run["ttft"] = run["prompt_tokens"] * run["itl"]


def tls_proxy_relays_each_event(d: dict) -> None:
    """proxy-buffering.nginx-tls: nginx with TLS passes each event on as it comes: its lines arrive when the
    direct path's did."""
    direct = _data_times(d["captures"]["direct"]["lines"])
    k, t = -1, None
    for line in d["captures"]["nginx-tls"]["lines"]:
        if line["line"].startswith("data: "):
            k += 1
            t = direct[min(k, len(direct) - 1)]
        if t is not None:
            line["t"] = t


def _relays_each_event(path: str, d: dict) -> None:
    """A proxy that passes each event on as it comes: the path's lines arrive when the direct path's did."""
    direct = _data_times(d["captures"]["direct"]["lines"])
    k, t = -1, None
    for line in d["captures"][path]["lines"]:
        if line["line"].startswith("data: "):
            k += 1
            t = direct[min(k, len(direct) - 1)]
        if t is not None:
            line["t"] = t


def _holds_events_in_blocks(path: str, d: dict, block: int = 10) -> None:
    """A proxy that holds the stream back: each run of `block` lines arrives at once, with its last line."""
    lines = d["captures"][path]["lines"]
    for start in range(0, len(lines), block):
        group = lines[start:start + block]
        for line in group:
            line["t"] = group[-1]["t"]


def nginx_tls_streaming_holds_blocks(d: dict) -> None:
    """proxy-buffering.nginx-tls-streaming: nginx with TLS and the streaming settings holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("nginx-tls-streaming", d)


def caddy_default_holds_blocks(d: dict) -> None:
    """other-proxies.caddy-default: Caddy at its defaults holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("caddy-default", d)


def caddy_tls_holds_blocks(d: dict) -> None:
    """other-proxies.caddy-tls: Caddy with TLS holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("caddy-tls", d)


def caddy_streaming_holds_blocks(d: dict) -> None:
    """other-proxies.caddy-streaming: Caddy with flush_interval -1 still holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("caddy-streaming", d)


def haproxy_tls_holds_blocks(d: dict) -> None:
    """other-proxies.haproxy-tls: HAProxy with TLS holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("haproxy-tls", d)


def haproxy_streaming_holds_blocks(d: dict) -> None:
    """other-proxies.haproxy-streaming: HAProxy with http-no-delay still holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("haproxy-streaming", d)


def haproxy_no_delay_holds_blocks(d: dict) -> None:
    """other-proxies.haproxy-no-delay: HAProxy with only http-no-delay still holds the stream back in blocks of ten lines."""
    _holds_events_in_blocks("haproxy-no-delay", d)


def haproxy_default_relays_each_event(d: dict) -> None:
    """other-proxies.haproxy-default: HAProxy at its defaults passes each event on as it comes: its lines
    arrive when the direct path's did."""
    _relays_each_event("haproxy-default", d)


def proxy_waits_for_slow_first_token(d: dict) -> None:
    """proxy-read-timeout.slow-first-token-cut: nginx waits for the late first token: the stream through it
    arrives whole, as it did directly."""
    via, direct = d["slow_first_token"], d["slow_first_token_direct"]
    via.update(status=200, error=None, ended_s=direct["ended_s"], body_lines=copy.deepcopy(direct["lines"]))


def unseeded_repeats(d: dict) -> None:
    """reproducibility.unseeded-varies: without a seed the server still samples the same answer every time."""
    row = d["unseeded"]["in_a_row"]
    row[:] = [row[0]] * len(row)


def abort_counted_as_finished(d: dict) -> None:
    """request-endings(-quiet).abort-counted: the disconnected request is counted as finished with reason
    abort, with its e2e latency observed."""
    moved = d["endings"]["abort"]["metrics_delta"]
    moved['vllm:request_success_total{finished_reason="abort"}'] = 1.0
    moved["vllm:e2e_request_latency_seconds_count"] = 1.0


def abort_logged_without_flag(d: dict) -> None:
    """request-endings-quiet.silent-log: without --enable-log-requests, the server still logs the abort."""
    d["endings"]["abort"]["log"].append("(APIServer pid=1) INFO [async_llm.py] Aborted request(s) chatcmpl-0.")


def openai_error_types(d: dict) -> None:
    """request-handling.error-types-differ: the server gives OpenAI's own error type on every refusal."""
    for case in d["cases"].values():
        error = (case.get("body") or {}).get("error") if isinstance(case.get("body"), dict) else None
        if isinstance(error, dict) and "type" in error:
            error["type"] = "invalid_request_error"


def first_token_waits_as_long_as_decode(d: dict) -> None:
    """stream-timing.ttft-fraction: the first token comes late (a prefill or a queue wait as long as the
    whole decode): every line of each streamed trial arrives that much later."""
    for trial in d["trials"]["streaming"]:
        delay = trial["e2e"] - trial["ttft"]
        trial["ttft"] = round(trial["ttft"] + delay, 4)
        trial["e2e"] = round(trial["e2e"] + delay, 4)
        trial["arrivals"] = [round(t + delay, 4) for t in trial["arrivals"]]


def throughput_saturates_at_the_top(d: dict) -> None:
    """throughput.rises-with-concurrency: the machine is saturated one level below the top: the last
    doubling doubles the batch's wall time, so tokens per second stay where they were."""
    for levels in d["rounds"]:
        top, below = levels[-1], levels[-2]
        top["seconds"] = round(below["seconds"] * top["tokens"] / below["tokens"], 3)


def no_gain_from_concurrency(d: dict) -> None:
    """throughput.cost-falls: requests sent together gain nothing: every level generates tokens at the
    rate of one request at a time, and the page's snippet prices them accordingly."""
    import statistics

    from snippets.cost.cost_per_million import cost_per_million
    for levels in d["rounds"]:
        rate = levels[0]["tokens"] / levels[0]["seconds"]
        for level in levels[1:]:
            level["seconds"] = level["tokens"] / rate
    for i, level in enumerate(sorted(d["cost_per_million"], key=int)):
        tps = statistics.median(r[i]["tokens"] / r[i]["seconds"] for r in d["rounds"])
        d["cost_per_million"][level] = round(cost_per_million(d["price_per_hour"], tps), 4)


def _burst_without_n(d: dict, mode: str) -> None:
    """curl without -N holds the whole stream back and writes it in one read when it ends."""
    for run in d["runs"][f"without_n_{mode}"]:
        last = max(x["t"] for x in run["lines"])
        for line in run["lines"]:
            line["t"] = last
        if "reads" in run:
            run["reads"] = 1


def terminal_burst_without_n(d: dict) -> None:
    """wire-format.no-n-terminal-burst: in a terminal, curl without -N shows the stream in one burst."""
    _burst_without_n(d, "terminal")


def pipe_burst_without_n(d: dict) -> None:
    """wire-format.no-n-pipe-burst: into a pipe, curl without -N delivers the stream in one burst."""
    _burst_without_n(d, "pipe")


def streaming_costs_the_api_server_nothing(d: dict) -> None:
    """api-server-cpu.streaming-costs-more: every streamed batch costs the API server exactly what the
    same non-streamed batch of its round did (its listener's CPU reading set to match)."""
    for b in d["batches"]:
        if b["stream"]:
            twin = next(n for n in d["batches"] if not n["stream"] and n["round"] == b["round"]
                        and n["concurrency"] == b["concurrency"])
            used = twin["after"][0]["cpu_s"] - {p["pid"]: p["cpu_s"] for p in twin["before"]}[twin["after"][0]["pid"]]
            start = {p["pid"]: p["cpu_s"] for p in b["before"]}[b["after"][0]["pid"]]
            b["after"][0]["cpu_s"] = start + used * b["generated_tokens"] / twin["generated_tokens"]


def first_tokens_at_the_estimates(d: dict) -> None:
    """Each client's first token at Prometheus' estimate for its rank: the buckets then look exact."""
    import math

    from verify.jobs.metrics import ttft_quantiles as job
    values = sorted(r["ttft_s"] for r in d["requests"])
    for q in job.QUANTILES:
        k, est = max(math.ceil(q * len(values)), 1) - 1, job._estimate(d, q)
        values = [min(v, est) if j < k else est if j == k else max(v, est) for j, v in enumerate(values)]
    for r, v in zip(d["requests"], values):
        r["ttft_s"] = v


def first_tokens_unmoved_by_the_queue(d: dict) -> None:
    """load-signals.ttft-moves-with-queue: the TTFT p95 series holds its one-client value all through
    the load, queue or not."""
    points = d["series"]["series"]["ttft_p95"]
    base = next(v for t, v in points if t >= d["steps"][0]["start_s"] + 5 and v == v)
    d["series"]["series"]["ttft_p95"] = [[t, base if v == v else v] for t, v in points]


def _sse_json_lines(stream: dict) -> list[tuple[dict, dict]]:
    import json
    return [(x, json.loads(x["line"][6:])) for x in stream["lines"] if x["line"].startswith("data: {")]


def role_chunk_a_step_ahead(d: dict) -> None:
    """bench-definitions.empty-chunk-with-first-token: the server sends the empty role chunk one token
    step (the stream's own next gap) before the first token's chunk."""
    for s in d["streams"]:
        (role, _), (first, _), (second, _) = _sse_json_lines(s)[:3]
        role["t"] = first["t"] - (second["t"] - first["t"])


def tool_saves_one_gap_fewer(d: dict) -> None:
    """bench-definitions.mean-itl-below-tpot: a tool that leaves out the empty chunk's gap: its mean ITL
    is its mean TPOT."""
    d["bench"]["result"]["mean_itl_ms"] = d["bench"]["result"]["mean_tpot_ms"]


def tool_counts_with_its_own_tokenizer(d: dict) -> None:
    """bench-definitions.server-usage-counts: output lengths from a client tokenizer that counts the
    text one token longer than the server did."""
    r = d["bench"]["result"]
    r["output_lens"] = [n + 1 for n in r["output_lens"]]


def guidellm_leaves_the_length_to_the_model(d: dict) -> None:
    """bench-definitions.guidellm-forces-length: GuideLLM's requests without ignore_eos."""
    for s in d["guidellm_streams"]:
        s["request"].pop("ignore_eos", None)


def stop_chunk_carries_text(d: dict) -> None:
    """bench-definitions.aiperf-itl-ends-at-text: the closing chunk of an answer that ends by itself
    carries text, so every clock stops at it."""
    import json
    for s in d["natural"]:
        line, chunk = [(x, c) for x, c in _sse_json_lines(s) if c.get("choices")][-1]
        chunk["choices"][0].setdefault("delta", {})["content"] = "."
        line["line"] = "data: " + json.dumps(chunk)


def tool_saves_gaps_between_text_chunks(d: dict) -> None:
    """bench-definitions.itl-gap-per-token: a tool that starts its gaps at the first token: n - 1 per request."""
    r = d["bench"]["result"]
    r["itls"] = [gaps[1:] for gaps in r["itls"]]


def guidellm_counts_one_more(d: dict) -> None:
    """bench-definitions.guidellm-usage: GuideLLM's output token counts one above the server's usage."""
    for r in d["guidellm"]["result"]["requests"]:
        r["output_tokens"] += 1


def tool_counts_any_objective(d: dict) -> None:
    """bench-definitions.goodput-every-objective: a tool whose goodput counts a request that meets any
    one objective."""
    from verify.jobs.latency import bench_definitions as job
    _, some, _ = job._goodput_counts(d)
    d["bench"]["result"]["request_goodput"] = some / d["bench"]["result"]["duration"]


def tool_stops_at_the_text_chunk(d: dict) -> None:
    """bench-definitions.ttft-first-chunk: a tool that stops its TTFT at the first chunk with text, on a server
    that sends the empty role chunk a token step ahead of the first token's: each TTFT is the text chunk's
    arrival at the proxy plus the hop the record shows (the tool's TTFT after the role chunk)."""
    from verify.jobs.latency import bench_definitions as job
    r = d["bench"]["result"]
    for i in job._ok(d):
        s = d["streams"][i]
        events = [(x, c) for x, c in _sse_json_lines(s) if c.get("choices")]
        role, first_text = events[0][0], next(x for x, c in events if c["choices"][0].get("delta", {}).get("content"))
        second = next(x for x, c in events if x["t"] > first_text["t"])
        hop = r["ttfts"][i] - role["t"]
        role["t"] = first_text["t"] - (second["t"] - first_text["t"])
        r["ttfts"][i] = first_text["t"] + hop


def guidellm_stops_at_the_empty_chunk(d: dict) -> None:
    """bench-definitions.guidellm-ttft: a GuideLLM whose TTFT ends at the first chunk it reads, the empty one:
    each request's TTFT is its own first iteration's time after its start."""
    for r in d["guidellm"]["result"]["requests"]:
        t = r["timings"]
        r["time_to_first_token_ms"] = (t["first_request_iteration"] - t["request_start"]) * 1000


def waiting_label_names_the_queue(d: dict) -> None:
    """lora-metric.waiting-named: in every scrape that caught requests waiting, the newest series' waiting
    label names adapters that are not running, as many as the queue gauge counts."""
    from verify.jobs.lora.lora_metric import ADAPTERS
    for scrape in d["during"]:
        if (scrape.get("waiting") or 0) > 0 and scrape["samples"]:
            newest = max(scrape["samples"], key=lambda x: x["value"])
            running = [n for n in newest["labels"].get("running_lora_adapters", "").split(",") if n]
            others = [a for a in ADAPTERS if a not in running]
            newest["labels"]["waiting_lora_adapters"] = ",".join(others[:int(scrape["waiting"])])


def unconstrained_answers_fit(d: dict) -> None:
    """constraint-kinds.unconstrained-misses: the prompt alone does the work: each unconstrained answer is
    what the constrained one of the same way was."""
    for way, control in d["unconstrained"].items():
        for free, held in zip(control["samples"], d["ways"][way]["samples"]):
            free["text"] = held["text"]


def request_option_honoured(d: dict) -> None:
    """json-whitespace.request-option: the request's disable_any_whitespace is read: every answer with it is
    compact JSON that ended by itself."""
    from verify.jobs.structured_outputs.json_whitespace import OPTION
    for s in d["ways"][OPTION]["samples"]:
        s["text"], s["finish_reason"] = json.dumps({"name": "Ada", "age": 36}, separators=(",", ":")), "stop"


def rank_refused_as_client_error(d: dict) -> None:
    """lora-runtime.rank-client-error: the server answers a rank it does not allow with HTTP 400."""
    d["steps"]["load_rank_32"]["status"] = 400


def two_adapters_answer_alike(d: dict) -> None:
    """lora-served.distinct: two adapters with the same effect: attn-b answers every prompt as attn-a."""
    by = d["answers"]["by_model"]
    by["attn-b"] = copy.deepcopy(by["attn-a"])


def skipped_modules_warned(d: dict) -> None:
    """lora-target-modules.silent: the server warns that the adapter's MLP modules are not applied."""
    d["log"]["lines"].append("WARNING lora: mlp-c targets gate_proj, up_proj, down_proj, outside --lora-target-modules")


def second_slot_keeps_base_apart(d: dict) -> None:
    """lora-max-loras.base-changed: a base-model token reads no adapter's weights: each base-model request
    beside attn-a streams, at its own arrival times, what it streamed alone."""
    from verify.jobs.lora._answers import BASE
    alone = d["alone"]["base:x"]["stream"]["lines"]
    for t in d["trials"]:
        for s in t["mixed"]:
            if s["model"] == BASE:
                s["stream"]["lines"] = [{**line, "line": a["line"]} for line, a in zip(s["stream"]["lines"], alone)]


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "bench-definitions.ttft-first-chunk": tool_stops_at_the_text_chunk,
    "bench-definitions.guidellm-ttft": guidellm_stops_at_the_empty_chunk,
    "lora-metric.waiting-named": waiting_label_names_the_queue,
    "lora-max-loras.base-changed": second_slot_keeps_base_apart,
    "lora-runtime.rank-client-error": rank_refused_as_client_error,
    "lora-served.distinct": two_adapters_answer_alike,
    "lora-target-modules.silent": skipped_modules_warned,
    "json-whitespace.request-option": request_option_honoured,
    "constraint-kinds.unconstrained-misses": unconstrained_answers_fit,
    "bench-definitions.goodput-every-objective": tool_counts_any_objective,
    "bench-definitions.itl-gap-per-token": tool_saves_gaps_between_text_chunks,
    "bench-definitions.guidellm-usage": guidellm_counts_one_more,
    "bench-definitions.empty-chunk-with-first-token": role_chunk_a_step_ahead,
    "bench-definitions.mean-itl-below-tpot": tool_saves_one_gap_fewer,
    "bench-definitions.server-usage-counts": tool_counts_with_its_own_tokenizer,
    "bench-definitions.guidellm-forces-length": guidellm_leaves_the_length_to_the_model,
    "bench-definitions.aiperf-itl-ends-at-text": stop_chunk_carries_text,
    "load-signals.ttft-moves-with-queue": first_tokens_unmoved_by_the_queue,
    "ttft-quantiles.exact": first_tokens_at_the_estimates,
    "api-server-cpu.streaming-costs-more": streaming_costs_the_api_server_nothing,
    "batching.throughput-rises": requests_served_one_after_another,
    "batching.itl-rises": batch_steps_as_fast_as_one,
    "prompt-length-sweep.itl-flat": decode_slows_with_context,
    "billing.n-computes-prompt-once": engine_counts_prompt_once_for_n,
    "cancel-direct.log-line": abort_not_logged,
    "chunk-shapes.finish-on-last-text": finish_reason_rides_on_last_text,
    "kv-sizing.max-concurrency": concurrency_not_tokens_over_context,
    "kv-sizing.cpu-block-size": cpu_build_picks_gpu_block_size,
    "launch-path.deprecated": module_launch_not_deprecated,
    "offline-chat.answers-differ": chat_answers_like_generate,
    "parameter-validation.error-names-parameter": every_refusal_names_its_parameter,
    "prefix-hits.hit-skips-prefill": hit_recomputes_prefill,
    "prompt-length-sweep.ttft-grows": ttft_falls_with_length,
    "prompt-length-sweep.prefill-grows": prefill_falls_with_length,
    "prompt-length-sweep.prompt-token-cheaper": prefill_one_token_per_step,
    "proxy-buffering.nginx-tls": tls_proxy_relays_each_event,
    "proxy-buffering.nginx-tls-streaming": nginx_tls_streaming_holds_blocks,
    "other-proxies.caddy-default": caddy_default_holds_blocks,
    "other-proxies.caddy-tls": caddy_tls_holds_blocks,
    "other-proxies.caddy-streaming": caddy_streaming_holds_blocks,
    "other-proxies.haproxy-default": haproxy_default_relays_each_event,
    "other-proxies.haproxy-no-delay": haproxy_no_delay_holds_blocks,
    "other-proxies.haproxy-tls": haproxy_tls_holds_blocks,
    "other-proxies.haproxy-streaming": haproxy_streaming_holds_blocks,
    "proxy-read-timeout.slow-first-token-cut": proxy_waits_for_slow_first_token,
    "reproducibility.unseeded-varies": unseeded_repeats,
    "request-endings.abort-counted": abort_counted_as_finished,
    "request-endings-quiet.abort-counted": abort_counted_as_finished,
    "request-endings-quiet.silent-log": abort_logged_without_flag,
    "request-handling.error-types-differ": openai_error_types,
    "stream-timing.ttft-fraction": first_token_waits_as_long_as_decode,
    "throughput.rises-with-concurrency": throughput_saturates_at_the_top,
    "throughput.cost-falls": no_gain_from_concurrency,
    "wire-format.no-n-terminal-burst": terminal_burst_without_n,
    "wire-format.no-n-pipe-burst": pipe_burst_without_n,
}

# Claims no honest edit can turn to the opposite verdict, each with why. The set may only shrink.
UNFLIPPABLE = {
    "chunk-shapes.empty-mid-stream": "'can appear' is existential: one sighting confirms it, and streams without "
                                     "one are inconclusive, never refuted, so there is no opposite verdict to reach",
}


def _decider(job, claim):
    """The claim's verdict as the job gives it (Job.decide: a failed capture or unreadable data is
    inconclusive), deciding only this claim."""
    alone = dataclasses.replace(job, claims=(claim,))
    return alone.decide


def _searched(job) -> list:
    """The job's claims the automatic search must flip: all but the hand-flipped and the unflippable."""
    return [c for c in job.claims if c.id not in HAND_FLIPS and c.id not in UNFLIPPABLE]


def test_every_claim_is_flipped_one_way_exactly():
    claims = set(all_claims())
    assert set(HAND_FLIPS) <= claims, f"hand edits for unknown claims: {sorted(set(HAND_FLIPS) - claims)}"
    assert set(UNFLIPPABLE) <= claims, f"unknown claims excused: {sorted(set(UNFLIPPABLE) - claims)}"
    assert not set(HAND_FLIPS) & set(UNFLIPPABLE), "a claim both hand-flipped and excused"
    skipped = {c.id for job in all_jobs().values() for c in job.claims} - \
        {c.id for job in all_jobs().values() for c in _searched(job)}
    assert skipped == set(HAND_FLIPS) | set(UNFLIPPABLE), "the search skips exactly the hand-flipped and excused claims"
    assert all(f.__name__ != "<lambda>" and f.__doc__ for f in HAND_FLIPS.values()), "each edit a named, described function"


@pytest.mark.parametrize("job_id", sorted(all_jobs()))
def test_every_claim_of_the_job_flips_on_one_edit_of_its_record(job_id):
    job = all_jobs()[job_id]
    record = store.load(job_id, "cpu")
    data = copy.deepcopy(record["data"])
    unflipped = []
    for claim in _searched(job):
        assert record["claims"][claim.id]["verdict"] != INCONCLUSIVE, f"{claim.id}: the committed record decides nothing"
        if find_flip(_decider(job, claim), data, claim.id, BUDGET) is None:
            unflipped.append(claim.id)
    assert data == record["data"], "an edit was not undone"
    assert not unflipped, f"no single edit of the record flips: {unflipped}"


@pytest.mark.parametrize("claim_id", sorted(HAND_FLIPS))
def test_each_hand_edit_flips_its_claim(claim_id):
    job, claim = all_claims()[claim_id]
    record = store.load(job.id, "cpu")
    committed = record["claims"][claim_id]["verdict"]
    assert committed != INCONCLUSIVE, f"{claim_id}: the committed record decides nothing"
    decide = _decider(job, claim)
    data = copy.deepcopy(record["data"])
    assert decide(data)[claim_id]["verdict"] == committed, "the unedited data no longer gives the committed verdict"
    HAND_FLIPS[claim_id](data)
    assert data != record["data"], f"{HAND_FLIPS[claim_id].__name__} changed nothing"
    got = decide(data)[claim_id]
    assert got["verdict"] == OPPOSITE[committed], \
        f"{HAND_FLIPS[claim_id].__name__}: {committed} became {got['verdict']} ({got['because'][:200]})"
