"""What vllm bench serve's TTFT, ITL, TPOT and goodput are, checked on the raw streams of its own requests.

The page's benchmark command runs against the recording proxy (verify/live/recording_proxy.py),
so every request the tool sends and every SSE line it gets back is recorded with its arrival
time, on the same clock as the tool's own saved start times (--save-detailed). Each figure
the tool printed is then recomputed from those streams by the definitions the page shows
(snippets/latency/definitions.py). GuideLLM runs the same workload through a proxy of its own,
and its saved per-request figures are checked the same way. The site's own harness (the
Prefill vs Decode article's) sends vllm bench serve's messages again, straight to the server.
The goodput objectives are set so that every request meets one and none the other.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from statistics import mean, median

from verify.headline import Headline, ms
from verify.job import CONFIRMED, INCONCLUSIVE, REFUTED, Claim, Job, Verdict, verdict_if
from verify.paths import SNIPPETS

COMMAND = "latency/bench_serve.py"
GUIDELLM_COMMAND = "latency/guidellm_run.sh"
DEFINITIONS = "latency/definitions.py"
RECOMPUTE = "latency/recompute.py"
HARNESS = "prefill-decode/ttft_by_length.py"
# Three short questions whose answers end by themselves, and soon. The embedded model, decoded greedily
# from the same weights outside vLLM, answers them in 7, 7 and 12 tokens, each ending at its
# end-of-sequence token; it gave the counts vLLM's cpu records show for the questions before these:
# "Name one colour." 7, "Say hello." 30 and "What is two plus two?" 157 (2.1 and 10.8 s of the job).
# What each answer was, and how it ended, is in the record.
NATURAL_QUESTIONS = ("Name one colour.", "Name one number.", "What is 2+2?")
NUM_PROMPTS, OUTPUT_TOKENS = 8, 32  # as in both tools' commands
# The proxy stamps a chunk before the tool reads it, one loopback hop later (0.2-2.3 ms in the records).
# A TTFT that ends this long after the first chunk with choices passed the proxy ended at that chunk or
# the next, not at a later token's chunk: tokens come 20 ms or more apart on the embedded CPU profile.
FIRST_CHUNK_S = 0.005
# A tool's per-request figure (seconds per token) against the same computed from the proxy's stream:
# the hop's jitter at the first and the last token, spread over n - 1 tokens (0.01-0.1 ms in the
# records). Narrower than half the gap to the other definition (dividing by n, not n - 1: 1.6-2.2 ms),
# or the rule says it cannot tell them apart.
PER_TOKEN_SAME_S = 0.0003
# The tool's printed median ITL against the median of the proxy's pooled gaps (0.02-0.10 ms apart in
# the records); a median of per-request means lies 1.3-1.45 ms away.
POOLED_SAME_MS = 0.4
# GuideLLM's own timestamps: its TTFT is one of them minus its request start, to float precision.
STAMP_S = 1e-6
# The empty first chunk and the first chunk with text "arrive together" when at most this share of
# a median gap between tokens apart: counting one or the other moves TTFT by less than that.
TOGETHER_SHARE = 0.1
# Goodput objectives that only the reading "every objective at once" turns into 0 req/s: every
# request meets the TTFT one, none the TPOT one (a token in a millisecond is beyond this server).
SLO_MS = {"ttft": 100000.0, "tpot": 1.0}
# The client side (the tool and the proxy's hop) adds at most this share to a median TTFT. A share, not
# milliseconds: the tool's own work grows on a slower or busier machine (medians of 1.7 to 7.3 ms on this
# kind of machine, against TTFTs of about 330 ms), and what matters is its share of what TTFT measures.
OVERHEAD_SHARE = 0.05
# The site's client against the tool, on the same request bodies sent straight to the server.
HARNESS_AGREEMENT = 0.25


@functools.lru_cache(maxsize=1)
def definitions():
    """The page's definitions snippet, imported from its file (stdlib only, so the site build can use it);
    once per process, as the rules call it for every stream."""
    spec = importlib.util.spec_from_file_location("latency_definitions", SNIPPETS / DEFINITIONS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_tool(argv: list[str], env: dict, result_path: str, what: str, timeout_s: float = 900) -> dict:
    """Run a benchmark tool; its printout, exit code and saved result file (None unless it succeeded)."""
    import os
    import subprocess

    from verify.measure import capture
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return capture.results("command", [], exit_code=None, lines=[], result=None,
                               error=f"{what} did not finish within {timeout_s:.0f} s")
    lines = [{"t": 0, "line": ln} for ln in proc.stdout.splitlines() if ln.strip()]
    result, error = None, None
    if proc.returncode == 0 and os.path.isfile(result_path):
        with open(result_path) as f:
            result = json.load(f)
    else:
        last = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        error = f"{what} exited with code {proc.returncode}: {last[-1][:300] if last else 'no message'}"
    return capture.results("command", lines if result else [], exit_code=proc.returncode, lines=lines,
                           result=result, error=error)


def collect(ctx) -> dict:
    import os
    import sys
    import tempfile
    import time

    import httpx

    from verify.config.tools import GUIDELLM, bin_dir
    from verify.live.recording_proxy import recording_proxy
    from verify.measure import capture, sse
    from verify.measure.metrics import wait_idle
    command, guidellm_command = ctx.snippet_path(COMMAND), ctx.snippet_path(GUIDELLM_COMMAND)
    ctx.snippet_path(DEFINITIONS)  # the verdicts use it: a change makes the record stale
    recompute = ctx.snippet(RECOMPUTE)
    root = httpx.get(ctx.base_url + "/models", timeout=10).json()["data"][0].get("root")
    if not (root and os.path.isdir(root)):
        return {"bench": capture.no_response("command", "the server's model folder is not on this machine: "
                                                        "the benchmarks need it as their tokenizer")}
    guidellm_bin = bin_dir(GUIDELLM, progress=ctx.progress)
    slo_ms = dict(SLO_MS)
    out_dir = tempfile.mkdtemp(prefix="verify-bench-")
    seed = time.time_ns() % 1_000_000  # fresh prompts: nothing for the prefix cache to serve
    base_env = {**os.environ, "TOKENIZER": root, "OUT": out_dir, "HF_HUB_OFFLINE": "1"}
    wait_idle(ctx.server.url)
    with recording_proxy(ctx.server.url) as proxy:
        env = {**base_env, "BASE_URL": proxy.url, "SEED": str(seed),
               "TTFT_SLO_MS": str(slo_ms["ttft"]), "TPOT_SLO_MS": str(slo_ms["tpot"])}
        bench = run_tool([sys.executable, str(command)], env, os.path.join(out_dir, "result.json"), "vllm bench serve")
        exchanges = list(proxy.exchanges)
    if bench["result"]:
        bench["result"] = {k: v for k, v in bench["result"].items() if k != "generated_texts"}
    streams = _streams(exchanges, bench["result"])
    # GuideLLM on the same workload, through a proxy of its own; it stamps with the wall clock.
    wait_idle(ctx.server.url)
    with recording_proxy(ctx.server.url) as proxy:
        env = {**base_env, "BASE_URL": proxy.url, "PATH": str(guidellm_bin) + os.pathsep + os.environ["PATH"]}
        guidellm = run_tool(["bash", str(guidellm_command)], env, os.path.join(out_dir, "guidellm.json"), "guidellm")
        guidellm_exchanges, wall_minus_perf = list(proxy.exchanges), proxy.wall_minus_perf
    guidellm["result"] = _guidellm_requests(guidellm["result"])
    guidellm_streams = _guidellm_streams(guidellm_exchanges, guidellm["result"], wall_minus_perf)
    # The site's own harness: the very messages vllm bench serve sent, straight to the server.
    from openai import OpenAI
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    harness = []
    for i, s in enumerate(streams):
        wait_idle(ctx.server.url)
        asked = s["request"].get("max_completion_tokens") or s["request"].get("max_tokens")  # the tool sends the first
        r = ctx.snippet(HARNESS).measure(client, _uncached(s["request"]["messages"], i), max_tokens=asked)
        # measure() returns the number of text chunks that arrived, not the chunks themselves.
        harness.append(capture.results("timed-request", range(r["chunks"]), **r))
    # Answers that end by themselves (no ignore_eos): where the definitions part on the last chunk.
    natural = []
    for question in NATURAL_QUESTIONS:
        wait_idle(ctx.server.url)
        natural.append(sse.capture(ctx.base_url + "/chat/completions", {
            "model": "chat", "messages": [{"role": "user", "content": question}], "max_tokens": 200,
            "temperature": 0, "stream": True, "stream_options": {"include_usage": True}}))
    return {"seed": seed, "slo_ms": slo_ms, "bench": bench, "natural": natural,
            "other_exchanges": [{k: e[k] for k in ("method", "path", "status")} for e in exchanges
                                if not _is_chat(e)],
            "streams": streams, "harness": harness,
            "guidellm": {**guidellm, "release": "==".join(GUIDELLM)}, "guidellm_streams": guidellm_streams,
            "recomputed": recompute.recompute(bench["result"], slo_ms["ttft"] / 1000, slo_ms["tpot"] / 1000)
            if bench["result"] else None}


def _uncached(messages: list[dict], i: int) -> list[dict]:
    """The same messages with one word put in front: sent again unchanged, the prefix cache would
    serve their prompt and the harness would time no prefill at all."""
    first, *rest = messages
    content = first["content"]
    if isinstance(content, list):  # OpenAI content parts, as the tools send them
        content = [{"type": "text", "text": f"Again{i}:"}, *content]
    else:
        content = f"Again{i}: {content}"
    return [{**first, "content": content}, *rest]


def _guidellm_requests(result: dict | None) -> dict | None:
    """GuideLLM's report cut to what the rules read: its version and each successful request's figures."""
    if not result:
        return None
    bench = result["benchmarks"][0]
    keep = ("request_start_time", "time_to_first_token_ms", "inter_token_latency_ms", "time_per_output_token_ms",
            "output_tokens", "prompt_tokens", "request_latency")
    return {"requests": [{**{k: r.get(k) for k in keep}, "timings": r["info"]["timings"]}
                         for r in bench["requests"]["successful"]],
            "errored": len(bench["requests"].get("errored") or []),
            "incomplete": len(bench["requests"].get("incomplete") or [])}


def _guidellm_streams(exchanges: list[dict], result: dict | None, wall_minus_perf: float) -> list[dict]:
    """Each GuideLLM request's stream as the proxy saw it, in seconds after GuideLLM's own request start."""
    if not result:
        return []
    chat = [e for e in exchanges if _is_chat(e)]
    reqs = result["requests"]
    out = []
    for r, e in zip(reqs, chat[len(chat) - len(reqs):]):
        out.append(_as_sent(e, r["timings"]["request_start"] - wall_minus_perf))  # on the proxy's clock
    return out


def _as_sent(exchange: dict, sent: float) -> dict:
    """One recorded exchange as a stream capture, its times in seconds after the tool sent it."""
    from verify.measure import capture
    lines = [{"t": round(x["t"] - sent, 6), "line": x["line"]} for x in exchange["lines"]]
    return capture.results("sse", [x for x in lines if x["line"].startswith("data: ")], statuses=[exchange["status"]],
                           error=exchange["error"], request=exchange["request"], sent=0.0,
                           at_proxy=round(exchange["t_received"] - sent, 6), lines=lines)


def _is_chat(exchange: dict) -> bool:
    return exchange["path"].startswith("/v1/chat/completions") and exchange["method"] == "POST"


def _streams(exchanges: list[dict], result: dict | None) -> list[dict]:
    """Each benchmark request's stream as the proxy saw it, its times on the tool's clock.

    The tool sends one test request before the benchmark; with one request at a time, the
    benchmark's requests are the last chat exchanges, in the order of its saved start times."""
    if not result:
        return []
    chat = [e for e in exchanges if _is_chat(e)]
    starts = result["start_times"]
    out = []
    for sent, e in zip(starts, chat[len(chat) - len(starts):]):
        out.append(_as_sent(e, sent))
    return out


def as_stream(c: dict) -> dict:
    return {"sent": c.get("sent", 0.0), "lines": [(x["t"], x["line"]) for x in c["lines"]]}


def _usage(c: dict) -> int:
    chunks = definitions().chunks(as_stream(c))
    return next(ch["usage"]["completion_tokens"] for _, ch in reversed(chunks) if ch.get("usage"))


def by_tool(c: dict, tool: str) -> dict:
    return getattr(definitions(), tool)(as_stream(c), _usage(c))


def _tool(d) -> dict:
    r = d["bench"]["result"]
    if not r:
        raise ValueError("vllm bench serve saved no result")
    return r


def _ok(d) -> list[int]:
    r = _tool(d)
    return [i for i, e in enumerate(r["errors"]) if not e]


# --- the rules


def _told_apart(rows: list[tuple[float, float, float]], tolerance: float) -> tuple[bool | None, str]:
    """Per request: a tool's figure, the same computed from the proxy's stream by the sentence's
    definition, and by the other one. Whether the tool's figure is the sentence's, within `tolerance` in
    all requests but one (one stall of the tool's own process on a busy machine may move one); None when
    in some request the two definitions lie within twice the tolerance of each other, so that the
    tolerance could not tell them apart."""
    if len(rows) != NUM_PROMPTS:
        return None, f"{len(rows)} successful requests of {NUM_PROMPTS}"
    alike = [b for _, b, other in rows if abs(other - b) <= 2 * tolerance]
    if alike:
        return None, f"in {len(alike)} of {len(rows)} requests the two definitions lie within " \
                     f"{2 * tolerance * 1000:.2f} ms of each other: the tolerance cannot tell them apart"
    within = sum(abs(a - b) <= tolerance for a, b, _ in rows)
    apart = min(abs(o - b) for _, b, o in rows)
    return within >= len(rows) - 1, (f"{within} of {len(rows)} within {tolerance * 1000:.2f} ms (all but one required); "
                                     f"the other definition {apart * 1000:.2f} ms away or more")


def _ttft_rows(d) -> list[tuple[float, float, float]]:
    """Per request: the tool's TTFT, and when the first chunk with choices and the first chunk with text
    reached the proxy (seconds after the tool's own start time)."""
    r, defs, rows = _tool(d), definitions(), []
    for i in _ok(d):
        chunks = defs.chunks(as_stream(d["streams"][i]))
        first = next(t for t, ch in chunks if ch.get("choices"))
        text = next(t for t, ch in chunks if defs.text_of(ch))
        rows.append((r["ttfts"][i], first, text))
    return rows


def decide_ttft_first_chunk(d):
    """The tool reads a chunk after the proxy stamped it. Its TTFT must end once the first chunk with
    choices has passed the proxy, and within FIRST_CHUNK_S after it: less than one token's gap, so a
    clock that ran on to a later token's chunk is told apart. Which of the first two chunks (role,
    then first text, about a millisecond apart) ends it, the record cannot tell."""
    rows = _ttft_rows(d)
    because = ("tool's TTFT against the arrival at the proxy of the first chunk with choices and of the first "
               "with text: " + "; ".join(f"{a * 1000:.2f} ms, {(a - first) * 1000:+.2f}/{(a - text) * 1000:+.2f} ms"
                                         for a, first, text in rows))
    if len(rows) != NUM_PROMPTS:
        return Verdict(INCONCLUSIVE, because + f" ({len(rows)} successful requests of {NUM_PROMPTS})")
    if any(a < first for a, first, _ in rows):
        return Verdict(INCONCLUSIVE, because + " (a TTFT over before the proxy saw any chunk: the clocks disagree)")
    step = median(_pooled(d))
    if step <= 2 * FIRST_CHUNK_S:
        return Verdict(INCONCLUSIVE, because + f" (tokens {step * 1000:.1f} ms apart: too close to tell the first "
                                               "chunk's arrival from a later one)")
    within = sum(a - first <= FIRST_CHUNK_S for a, first, _ in rows)
    because += f"; within {FIRST_CHUNK_S * 1000:g} ms after the first chunk with choices in {within} of {len(rows)}"
    return verdict_if(within == len(rows), because)


def first_chunks(c: dict) -> tuple[dict, float, float]:
    """The first chunk with choices, its arrival, and the arrival of the next one (the first token's)."""
    chunks = [(t, ch) for t, ch in definitions().chunks(as_stream(c)) if ch.get("choices")]
    return chunks[0][1], chunks[0][0], chunks[1][0]


def decide_first_chunk_empty(d):
    firsts = [first_chunks(s)[0] for s in d["streams"]]
    deltas = [f["choices"][0].get("delta", {}) for f in firsts]
    return verdict_if(len(deltas) == NUM_PROMPTS and all(not x.get("content") for x in deltas),
                      f"first chunk with choices in each of {len(deltas)} streams: " +
                      ", ".join(sorted({json.dumps(x, sort_keys=True) for x in deltas})))


def decide_empty_chunk_with_first_token(d):
    gaps = [token - first for _, first, token in (first_chunks(s) for s in d["streams"])]
    step = median(_pooled(d))
    return verdict_if(median(gaps) <= TOGETHER_SHARE * step,
                      f"from the empty chunk to the first token's chunk: median {median(gaps) * 1000:.3f} ms, at most "
                      f"{max(gaps) * 1000:.3f} ms over {len(gaps)} requests; the median gap between tokens is "
                      f"{step * 1000:.1f} ms (together means a median within {TOGETHER_SHARE:.0%} of it)")


def _pooled(d) -> list[float]:
    return [g for i in _ok(d) for g in by_tool(d["streams"][i], "vllm_bench_serve")["itl_gaps"]]


def decide_itl_pooled(d):
    r, gaps = _tool(d), _pooled(d)
    ours, theirs = median(gaps) * 1000, r["median_itl_ms"]
    per_request = median(by_tool(d["streams"][i], "aiperf")["itl"] for i in _ok(d)) * 1000
    because = (f"median of all {len(gaps)} gaps between chunks with choices in the proxy's streams {ours:.2f} ms; the "
               f"tool printed median ITL {theirs:.2f} ms; tolerance {POOLED_SAME_MS} ms (a median of per-request means "
               f"would be {per_request:.2f} ms: " + ("near enough that this box alone does not tell the two definitions "
                                                    "apart; the saved gaps do, recompute-matches)"
                                                    if abs(per_request - ours) <= 2 * POOLED_SAME_MS else
                                                    "told apart from the pooled median here)"))
    return verdict_if(abs(ours - theirs) <= POOLED_SAME_MS, because)


def decide_itl_gap_per_token(d):
    r, ok = _tool(d), _ok(d)
    rows = [(len(r["itls"][i]), r["output_lens"][i]) for i in ok]
    return verdict_if(all(n == t for n, t in rows), "gaps saved per request against its output tokens: " +
                      ", ".join(f"{n}/{t}" for n, t in rows))


def decide_tpot_formula(d):
    r, ok = _tool(d), _ok(d)
    per_request = [(by_tool(d["streams"][i], "vllm_bench_serve")["tpot"], r["output_lens"][i]) for i in ok]
    ours = median(t for t, _ in per_request)
    by_n = median(t * (n - 1) / n for t, n in per_request)  # the same time over all n tokens
    theirs = r["median_tpot_ms"] / 1000
    because = (f"median of (last chunk - first chunk) / (output tokens - 1) over the proxy's streams {ours * 1000:.2f} ms "
               f"(over all n tokens: {by_n * 1000:.2f} ms); the tool printed median TPOT {theirs * 1000:.2f} ms; "
               f"tolerance {PER_TOKEN_SAME_S * 1000:g} ms")
    if abs(by_n - ours) <= 2 * PER_TOKEN_SAME_S:
        return Verdict(INCONCLUSIVE, because + ": on these streams the two divisors lie within twice the tolerance of "
                                               "each other, so the record cannot tell them apart")
    return verdict_if(abs(ours - theirs) <= PER_TOKEN_SAME_S, because)


def decide_mean_itl_below_tpot(d):
    r, ok = _tool(d), _ok(d)
    n = mean(r["output_lens"][i] for i in ok)
    ratio = r["mean_itl_ms"] / r["mean_tpot_ms"]
    return verdict_if(ratio < 1 and abs(ratio - (n - 1) / n) <= 0.03,
                      f"mean ITL {r['mean_itl_ms']:.2f} ms, mean TPOT {r['mean_tpot_ms']:.2f} ms: a ratio of "
                      f"{ratio:.3f}, against (n - 1) / n = {(n - 1) / n:.3f} for {n:.0f} output tokens")


def decide_server_usage_counts(d):
    r, ok, defs = _tool(d), _ok(d), definitions()
    rows = []
    for i in ok:
        with_choices = [ch for _, ch in defs.chunks(as_stream(d["streams"][i])) if ch.get("choices")]
        first = with_choices[0]["choices"][0].get("delta") or {}
        rows.append((r["output_lens"][i], _usage(d["streams"][i]), len(with_choices),
                     first.get("role") == "assistant" and not defs.text_of(with_choices[0])))
    if not rows:
        return Verdict(INCONCLUSIVE, "no successful request")
    return verdict_if(all(a == b and c == b + 1 and role for a, b, c, role in rows),
                      "tool's output length / usage.completion_tokens in the stream / chunks with choices, and whether "
                      "the first of them is the role chunk without text: " +
                      ", ".join(f"{a}/{b}/{c} {'role' if role else 'not the role chunk'}" for a, b, c, role in rows))


def goodput_counts(d) -> tuple[int, int, int]:
    """Requests meeting every objective, meeting at least one, and all, by the tool's own per-request figures."""
    r, ok, slo = _tool(d), _ok(d), d["slo_ms"]
    meets = []
    for i in ok:
        tpot = (r["latencies"][i] - r["ttfts"][i]) / (r["output_lens"][i] - 1)
        meets.append((r["ttfts"][i] * 1000 <= slo["ttft"], tpot * 1000 <= slo["tpot"]))
    return sum(a and b for a, b in meets), sum(a or b for a, b in meets), len(meets)


def decide_goodput_every_objective(d):
    r = _tool(d)
    every, some, n = goodput_counts(d)
    because = (f"objectives TTFT {d['slo_ms']['ttft']} ms, TPOT {d['slo_ms']['tpot']} ms: {every} of {n} requests meet "
               f"both, {some} at least one; over {r['duration']:.2f} s that is {every / r['duration']:.3f} or "
               f"{some / r['duration']:.3f} req/s; the tool printed request_goodput {r['request_goodput']:.3f}")
    if every == some:
        return Verdict(INCONCLUSIVE, because + " (no request met just one objective, so the two readings agree)")
    if every:
        # Above 0, the printed figure is a count over a divisor this claim does not settle.
        return Verdict(INCONCLUSIVE, because + " (a request met every objective: the sentence is about a run in "
                                               "which none did)")
    # No request meets both: counting only those gives 0 whatever it divides by; counting any gives more.
    return verdict_if(r["request_goodput"] == 0, because)


def decide_recompute_matches(d):
    r, again = _tool(d), d["recomputed"]
    rows = [(k, again[k], r[k]) for k in ("median_ttft_ms", "median_itl_ms", "median_tpot_ms", "request_goodput")]
    return verdict_if(all(abs(a - b) <= 1e-6 * max(1.0, abs(b)) for _, a, b in rows),
                      "; ".join(f"{k}: recomputed {a:.4f}, printed {b:.4f}" for k, a, b in rows))


def decide_overhead(d):
    r, ok = _tool(d), _ok(d)
    extra = [r["ttfts"][i] - (by_tool(d["streams"][i], "vllm_bench_serve")["ttft"] - d["streams"][i]["at_proxy"])
             for i in ok]
    ttft = median(r["ttfts"][i] for i in ok)
    return verdict_if(median(extra) <= OVERHEAD_SHARE * ttft,
                      f"tool's TTFT minus the proxy's (request in to first chunk out): median "
                      f"{median(extra) * 1000:.2f} ms, largest {max(extra) * 1000:.2f} ms, against a median TTFT of "
                      f"{ttft * 1000:.1f} ms: {median(extra) / ttft:.1%} (limit {OVERHEAD_SHARE:.0%})")


def harness_value(d, key: str) -> float:
    return median(r[key] for r in d["harness"])


def _agree(d, key: str, printed: str, label: str):
    ours, theirs = harness_value(d, key) * 1000, _tool(d)[printed]
    diff = abs(ours - theirs) / theirs
    return verdict_if(diff <= HARNESS_AGREEMENT, f"median {label}: the harness {ours:.1f} ms, vllm bench serve "
                      f"{theirs:.1f} ms on the same {len(d['harness'])} requests: {diff:.0%} apart "
                      f"(tolerance {HARNESS_AGREEMENT:.0%})")


def guidellm_requests(d) -> list[tuple[dict, dict]]:
    """GuideLLM's own figures for each request, with the stream the proxy recorded for it."""
    g = d["guidellm"]["result"]
    if not g or not g["requests"]:
        raise ValueError("GuideLLM saved no successful request")
    return list(zip(g["requests"], d["guidellm_streams"]))


def _text_times(c: dict) -> list[float]:
    defs = definitions()
    return [t for t, ch in defs.chunks(as_stream(c)) if defs.text_of(ch)]


def _guidellm_ttft_rows(d) -> list[dict]:
    """Per GuideLLM request: its TTFT, its own first iteration (first chunk read) and first token
    iteration, its token iterations, and the raw stream's chunks with choices and with text."""
    defs, rows = definitions(), []
    for g, s in guidellm_requests(d):
        timings, chunks = g["timings"], defs.chunks(as_stream(s))
        with_choices = [(t, ch) for t, ch in chunks if ch.get("choices")]
        rows.append({"ttft": g["time_to_first_token_ms"] / 1000,
                     "first_iteration": timings["first_request_iteration"] - timings["request_start"],
                     "token_iteration": timings["first_token_iteration"] - timings["request_start"],
                     "token_iterations": timings["token_iterations"],
                     "text_chunks": sum(1 for _, ch in chunks if defs.text_of(ch)),
                     "first_empty": not defs.text_of(with_choices[0][1]),
                     "first_at_proxy": with_choices[0][0]})
    return rows


def decide_guidellm_ttft(d):
    """The raw stream alone cannot tell which of the first two chunks ends GuideLLM's TTFT: they reach
    the proxy 0.07-1.3 ms apart, within the hop's spread. GuideLLM's own timings can: it stamps the first
    chunk it reads and the first that brings a token, and counts the chunks that bring a token."""
    rows = _guidellm_ttft_rows(d)
    because = ("GuideLLM's TTFT against its own first iteration and first token iteration; its token iterations "
               "against the stream's chunks with text: " + "; ".join(
                   f"{r['ttft'] * 1000:.3f} ms, {(r['ttft'] - r['first_iteration']) * 1000:+.3f}/"
                   f"{(r['ttft'] - r['token_iteration']) * 1000:+.3f} ms, {r['token_iterations']}/{r['text_chunks']}"
                   for r in rows))
    if len(rows) != NUM_PROMPTS:
        return Verdict(INCONCLUSIVE, because + f" ({len(rows)} successful requests of {NUM_PROMPTS})")
    if any(r["ttft"] < r["first_at_proxy"] for r in rows):
        return Verdict(INCONCLUSIVE, because + " (a TTFT over before the proxy saw any chunk: the clocks disagree)")
    if not all(r["first_empty"] and r["token_iterations"] == r["text_chunks"]
               and r["token_iteration"] - r["first_iteration"] > STAMP_S for r in rows):
        return Verdict(INCONCLUSIVE, because + " (a stream whose first chunk has text, or whose token iterations are "
                                               "not its chunks with text: the timings cannot tell the chunks apart)")
    at_first = sum(abs(r["ttft"] - r["first_iteration"]) <= STAMP_S for r in rows)
    at_token = sum(abs(r["ttft"] - r["token_iteration"]) <= STAMP_S for r in rows)
    because += f"; at its first token iteration in {at_token} of {len(rows)}, at its first iteration in {at_first}"
    if at_token == len(rows):
        return Verdict(CONFIRMED, because)
    return Verdict(REFUTED if at_first else INCONCLUSIVE, because)


def decide_guidellm_itl(d):
    rows = []
    for r, s in guidellm_requests(d):
        times, n = _text_times(s), r["output_tokens"]
        ours = (times[-1] - times[0]) / (n - 1)
        rows.append((r["inter_token_latency_ms"] / 1000, ours, ours * (n - 1) / n))
    told, how = _told_apart(rows, PER_TOKEN_SAME_S)
    because = ("GuideLLM's ITL against (last text chunk - first) / (n - 1) from the proxy's stream: " +
               "; ".join(f"{a * 1000:.2f}/{b * 1000:.2f} ms" for a, b, _ in rows) + f"; {how}")
    return verdict_if(told, because)


def decide_guidellm_tpot(d):
    rows = []
    for r, s in guidellm_requests(d):
        n = r["output_tokens"]
        ours = _text_times(s)[-1] / n
        rows.append((r["time_per_output_token_ms"] / 1000, ours, ours * n / (n - 1), r["inter_token_latency_ms"] / 1000))
    told, how = _told_apart([row[:3] for row in rows], PER_TOKEN_SAME_S)
    because = ("GuideLLM's TPOT against (last text chunk - request start) / n from the proxy's stream, and its ITL: " +
               "; ".join(f"{a * 1000:.2f}/{b * 1000:.2f}/{itl * 1000:.2f} ms" for a, b, _, itl in rows) + f"; {how}")
    if told is None:
        return Verdict(INCONCLUSIVE, because)
    return verdict_if(told and all(a > itl for a, _, _, itl in rows), because)


def decide_guidellm_forces_length(d):
    sent = [s["request"] or {} for _, s in guidellm_requests(d)]
    lengths = sorted({json.dumps({k: b.get(k) for k in ("ignore_eos", "max_completion_tokens", "max_tokens")},
                                 sort_keys=True) for b in sent})
    tokens = [r["output_tokens"] for r, _ in guidellm_requests(d)]
    return verdict_if(all(b.get("ignore_eos") is True for b in sent) and set(tokens) == {OUTPUT_TOKENS},
                      f"{len(sent)} request bodies as the proxy received them: {', '.join(lengths)}; "
                      f"output tokens {tokens}")


def decide_guidellm_usage(d):
    rows = [(r["output_tokens"], _usage(s)) for r, s in guidellm_requests(d)]
    return verdict_if(all(a == b for a, b in rows), "GuideLLM's output tokens / usage.completion_tokens in the "
                      "stream: " + ", ".join(f"{a}/{b}" for a, b in rows))


def decide_aiperf_itl_ends_at_text(d):
    """On answers that end by themselves: the closing chunk with choices, the end-of-sequence token's,
    holds no text, so AIPerf's clock stops a token earlier than vLLM's and its ITL comes out smaller."""
    defs, rows = definitions(), []
    for s in d["natural"]:
        with_choices = [ch for _, ch in defs.chunks(as_stream(s)) if ch.get("choices")]
        if with_choices[-1]["choices"][0].get("finish_reason") != "stop":
            continue  # ran to max_tokens: says nothing about how an answer ends
        a, v = by_tool(s, "aiperf")["itl"], by_tool(s, "vllm_bench_serve")["tpot"]
        rows.append((json.dumps(with_choices[-1]["choices"][0].get("delta")), a, v))
    because = "answers that ended with finish_reason stop: " + ("; ".join(
        f"last chunk with choices {delta}, AIPerf's ITL {a * 1000:.2f} ms, vLLM's TPOT {v * 1000:.2f} ms"
        for delta, a, v in rows) or "none")
    if not rows:
        return Verdict(INCONCLUSIVE, because + f" (of {len(d['natural'])} requests)")
    return verdict_if(all(not json.loads(delta).get("content") and a < v for delta, a, v in rows), because)


def figures(d) -> dict:
    r = _tool(d)
    return {"ttft": r["median_ttft_ms"] / 1000, "itl": r["median_itl_ms"] / 1000, "tpot": r["median_tpot_ms"] / 1000,
            "harness_ttft": harness_value(d, "ttft"), "harness_itl": harness_value(d, "itl")}


HEADLINE = Headline({
    "vllm bench serve: time to first token, median": lambda d: ms(figures(d)["ttft"]),
    "vllm bench serve: inter-token latency, median": lambda d: ms(figures(d)["itl"]),
    "vllm bench serve: time per output token, median": lambda d: ms(figures(d)["tpot"]),
    "the harness: time to first token, median": lambda d: ms(figures(d)["harness_ttft"]),
}, HARNESS_AGREEMENT, "the job's own threshold for two measurements of one latency to agree, HARNESS_AGREEMENT", "ms")

JOB = Job(
    id="bench-definitions",
    title="What vllm bench serve measures, on the raw streams of its own requests",
    question="Where do vllm bench serve's TTFT, ITL and TPOT start and stop, what does it count, and what is its "
             "goodput, checked against the raw streams of the very requests it sent?",
    pages=("latency.md",),
    collect=collect,
    claims=(
        Claim("bench-definitions.ttft-first-chunk", "vllm bench serve's TTFT ends as the first chunks of the "
              "stream arrive: in every request within 5 ms after the first chunk with choices passed the proxy, "
              "less than one token's gap.", decide_ttft_first_chunk, timing=True),
        Claim("bench-definitions.first-chunk-empty", "That first chunk carries no text: it is the role chunk, "
              "content empty.", decide_first_chunk_empty),
        Claim("bench-definitions.empty-chunk-with-first-token", "The empty chunk arrives together with the first "
              "token's chunk (in the median, within a tenth of a token step), so counting it or not hardly moves TTFT, unless "
              "that token brings no text.",
              decide_empty_chunk_with_first_token, timing=True),
        Claim("bench-definitions.itl-pooled", "Its printed median ITL matches, within 0.4 ms, the median of every "
              "gap between chunks the proxy saw, pooled over all requests.", decide_itl_pooled),
        Claim("bench-definitions.itl-gap-per-token", "It saves one gap per output token, not one fewer: the gap "
              "from the empty chunk to the first token is among them.", decide_itl_gap_per_token),
        Claim("bench-definitions.tpot-formula", "Its TPOT is, per request, the time after the first chunk divided "
              "by the output tokens after the first: (e2e - TTFT) / (n - 1).", decide_tpot_formula),
        Claim("bench-definitions.mean-itl-below-tpot", "Its mean ITL is below its mean TPOT by about one part in n, "
              "the near-zero gap each request adds.", decide_mean_itl_below_tpot),
        Claim("bench-definitions.server-usage-counts", "It counts output tokens from the server's usage, which here "
              "is one fewer than the chunks with choices: the first of them, the role chunk, brings no token.",
              decide_server_usage_counts),
        Claim("bench-definitions.goodput-every-objective", "Its request_goodput counts only the requests that meet "
              "every objective at once: when every request meets one of two objectives and none meets both, it is 0.",
              decide_goodput_every_objective),
        Claim("bench-definitions.recompute-matches", "The --save-detailed file holds all the summary is made of: the "
              "page's script recomputes the printed medians and goodput from it exactly.", decide_recompute_matches),
        Claim("bench-definitions.overhead-small", "The client side (the tool and the recording proxy's hop) adds "
              f"under {OVERHEAD_SHARE:.0%} to a median TTFT.", decide_overhead, timing=True),
        Claim("bench-definitions.harness-ttft-agrees", "The site's own harness, sending the same messages straight "
              "to the server, gets the same median TTFT (within 25 %).",
              lambda d: _agree(d, "ttft", "median_ttft_ms", "TTFT"), timing=True),
        Claim("bench-definitions.harness-itl-is-tpot", "The harness's ITL, one mean per request, agrees with vllm bench "
              "serve's TPOT (within 25 %), its figure of the same definition.",
              lambda d: _agree(d, "itl", "median_tpot_ms", "ITL (harness) against TPOT (tool)"), timing=True),
        Claim("bench-definitions.guidellm-ttft", "GuideLLM's TTFT ends at the first chunk with text, not at the "
              "empty first chunk: by its own timings it ends at the first chunk that brings a token, and the chunks "
              "it counts as bringing tokens are the raw stream's chunks with text.", decide_guidellm_ttft, timing=True),
        Claim("bench-definitions.guidellm-itl", "GuideLLM's ITL is one mean per request: (last token - first "
              "token) / (n - 1), which is vLLM's TPOT under another name while the last chunk with choices holds a "
              "token (every request here ran with ignore_eos).", decide_guidellm_itl, timing=True),
        Claim("bench-definitions.guidellm-tpot", "GuideLLM's TPOT counts the first token in: (last token - request "
              "start) / n, above its ITL for every request.", decide_guidellm_tpot, timing=True),
        Claim("bench-definitions.guidellm-forces-length", "GuideLLM asks the server to ignore the end-of-sequence "
              "token itself: every request carries ignore_eos and gets its full output length.",
              decide_guidellm_forces_length),
        Claim("bench-definitions.guidellm-usage", "GuideLLM counts output tokens from the server's usage.",
              decide_guidellm_usage),
        Claim("bench-definitions.aiperf-itl-ends-at-text", "When an answer ends by itself, its last chunk with "
              "choices (the end-of-sequence token's) holds no text: AIPerf's ITL definition stops a token earlier "
              "than vLLM's TPOT and comes out smaller.",
              decide_aiperf_itl_ends_at_text),
    ),
    headline=HEADLINE,
)
