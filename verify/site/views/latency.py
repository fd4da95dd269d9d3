"""How the evidence of the latency article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from statistics import median

from verify.jobs.latency import bench_definitions
from verify.site import charts, html
from verify.site.views import View


# bench-definitions
def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def bench_definitions_requests(record):
    """Each benchmark request: what the tool saved beside what its raw stream shows."""
    d = record["data"]
    r = d["bench"]["result"]
    rows = []
    for i, s in enumerate(d["streams"]):
        v = bench_definitions.by_tool(s, "vllm_bench_serve")
        _, first, token = bench_definitions.first_chunks(s)
        rows.append([i + 1, _ms(s["at_proxy"]), _ms(r["ttfts"][i]), _ms(v["ttft"]), _ms(token),
                     _ms((r["latencies"][i] - r["ttfts"][i]) / (r["output_lens"][i] - 1)), _ms(v["tpot"]),
                     r["output_lens"][i], len(r["itls"][i])])
    return html.table(["request", "at the proxy after", "tool's TTFT", "first chunk (proxy)", "first token's chunk (proxy)",
                       "tool's TPOT", "TPOT from the stream", "output tokens", "gaps saved"], rows)


def bench_definitions_definitions(record):
    """One set of streams, four readings: the tool's printout, and each tool's definition applied to the streams."""
    d = record["data"]
    r = d["bench"]["result"]
    streams = d["streams"]
    by = {tool: [bench_definitions.by_tool(s, tool) for s in streams] for tool in ("vllm_bench_serve", "guidellm", "aiperf")}
    pooled = [g for v in by["vllm_bench_serve"] for g in v["itl_gaps"]]
    icl = [g for v in by["aiperf"] for g in v["inter_chunk_gaps"]]
    saved = bench_definitions.guidellm_requests(d)
    rows = [
        ["vllm bench serve, as printed", f"{r['median_ttft_ms']:.1f} ms", f"{r['median_itl_ms']:.1f} ms (pooled gaps)",
         f"{r['median_tpot_ms']:.1f} ms"],
        ["vLLM's definitions on the proxy's streams", _ms(median(v["ttft"] for v in by["vllm_bench_serve"])),
         _ms(median(pooled)) + " (pooled gaps)", _ms(median(v["tpot"] for v in by["vllm_bench_serve"]))],
        ["GuideLLM 0.8.1, as it saved (its own 8 requests, same sizes)",
         f"{median(r['time_to_first_token_ms'] for r, _ in saved):.1f} ms",
         f"{median(r['inter_token_latency_ms'] for r, _ in saved):.1f} ms (mean per request)",
         f"{median(r['time_per_output_token_ms'] for r, _ in saved):.1f} ms (first token included)"],
        ["GuideLLM 0.8.1's definitions on vllm bench serve's streams", _ms(median(v["ttft"] for v in by["guidellm"])),
         _ms(median(v["itl"] for v in by["guidellm"])) + " (mean per request)",
         _ms(median(v["tpot"] for v in by["guidellm"])) + " (first token included)"],
        ["AIPerf 0.13.0's definitions on the same streams", _ms(median(v["ttft"] for v in by["aiperf"])),
         _ms(median(v["itl"] for v in by["aiperf"])) + f" (mean per request; pooled gaps {_ms(median(icl))})",
         "none (its ITL is this)"],
        ["the site's harness, the same messages (one word in front) straight to the server",
         _ms(bench_definitions.harness_value(d, "ttft")),
         _ms(bench_definitions.harness_value(d, "itl")) + " (mean per request)", "-"],
    ]
    return html.table(["reading (medians)", "TTFT", "ITL", "TPOT"], rows)


def bench_definitions_side_by_side_chart(record) -> charts.Bars:
    """Each tool's per-token figures over one set of streams (vllm bench serve's), and GuideLLM's own run."""
    d = record["data"]
    streams = d["streams"]
    by = {tool: [bench_definitions.by_tool(s, tool) for s in streams] for tool in ("vllm_bench_serve", "guidellm", "aiperf")}
    pooled = [g for v in by["vllm_bench_serve"] for g in v["itl_gaps"]]
    bars = [("bench ITL", median(pooled)),
            ("bench TPOT", median(v["tpot"] for v in by["vllm_bench_serve"])),
            ("AIPerf ITL", median(v["itl"] for v in by["aiperf"])),
            ("GLLM ITL", median(v["itl"] for v in by["guidellm"])),
            ("GLLM TPOT", median(v["tpot"] for v in by["guidellm"])),
            ("GLLM run", median(r["time_per_output_token_ms"] for r, _ in bench_definitions.guidellm_requests(d)) / 1000)]
    return charts.Bars(title="One server, one set of streams: the per-token figure each tool's definition gives "
                             "(medians)",
                       x_label="tool and figure", y_label="milliseconds per token",
                       bars=tuple(charts.Bar(label, v * 1000, f"{v * 1000:.1f}") for label, v in bars), tone=0,
                       note="bench: vllm bench serve (ITL: pooled gaps); GLLM: GuideLLM. All but the last bar: "
                            "definitions applied to the streams of vllm bench serve's requests. GLLM run: GuideLLM's "
                            "own TPOT from its own run.")


def bench_definitions_goodput(record):
    d = record["data"]
    r = d["bench"]["result"]
    every, some, n = bench_definitions.goodput_counts(d)
    rows = [[f"TTFT at most {d['slo_ms']['ttft']} ms and TPOT at most {d['slo_ms']['tpot']} ms", n, every, some,
             f"{r['duration']:.2f} s", f"{r['request_goodput']:.3f} req/s", f"{r['request_throughput']:.3f} req/s"]]
    return html.table(["objectives", "requests", "meet both", "meet at least one",
                       "run duration", "request_goodput", "request_throughput"], rows)


def bench_definitions_timeline_chart(record) -> charts.Timeline:
    """The first three benchmark requests as the proxy saw them: every chunk's arrival on the tool's clock."""
    d = record["data"]
    rows = []
    for i, s in enumerate(d["streams"][:3]):
        times = [t for t, c in bench_definitions.definitions().chunks(bench_definitions.as_stream(s)) if c.get("choices")]
        rows.append(charts.Span(f"request {i + 1}: {len(times)} chunks with choices", 0.0, times[-1], tone=i % 2,
                                events=tuple(times), text=f"TTFT {times[0] * 1000:.0f} ms"))
    return charts.Timeline(title="Three benchmark requests as the recording proxy saw them (0 = the tool sends)",
                           x_label="milliseconds after the tool sent the request", rows=tuple(rows), scale=1000.0)


VIEWS = {
    "bench-definitions": View(
        fragments={"requests": bench_definitions_requests, "definitions": bench_definitions_definitions,
                   "goodput": bench_definitions_goodput},
        charts={"timeline": bench_definitions_timeline_chart, "side-by-side": bench_definitions_side_by_side_chart}),
}
