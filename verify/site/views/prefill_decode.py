"""How the evidence of the prefill and decode article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from verify.jobs.prefill_decode import _stall, batching, bench_agreement, prompt_length_sweep
from verify.site import charts, html
from verify.site.views import View


# prefill-stall and prefill-stall-chunked (verify/jobs/prefill_decode/_stall.py), shown the same way: how a
# long prefill meets a decoding stream.
def prefill_stall_table(record):
    a = _stall.analyse(record["data"])
    return html.table(["long prompt", "its time (sent to answered)", "stream's median gap",
                       "stream's largest gap", "stream tokens during the long prompt"],
                      [[f"{a['prompt_tokens']} tokens", f"{a['long_prompt_s']:.2f} s", html.ms(a["median_gap"]),
                        f"{a['largest_gap']:.2f} s", a["tokens_during_prefill"]]])


def prefill_stall_chart(record) -> charts.Timeline:
    """When the stream's tokens arrived, against the long prompt's time from sent to answered."""
    d = record["data"]
    a = _stall.analyse(d)
    times = tuple(x["t"] for x in d["stream"]["lines"] if x["line"].startswith("data: "))
    start, end = a["window"]
    return charts.Timeline(
        title="When a decoding stream's tokens arrived while a long prompt was prefilled",
        x_label="seconds",
        rows=(charts.Span(f"long prompt ({a['prompt_tokens']} tokens): sent to answered", start, end - start, tone=4,
                          text=f"{a['long_prompt_s']:.2f} s"),
              charts.Span("stream: each dot is a token arriving", times[0], times[-1] - times[0], tone=0, events=times,
                          text=f"largest gap {a['largest_gap']:.2f} s")))


PREFILL_STALL = View(fragments={"table": prefill_stall_table}, charts={"stall": prefill_stall_chart})


# batching: throughput and one request's latency by concurrency.
def batching_table(record):
    rows = [[r["concurrency"], f"{r['throughput']:.0f}", f"{r['itl'] * 1000:.1f} ms",
             f"{r['itl_min'] * 1000:.1f} to {r['itl_max'] * 1000:.1f} ms", r["rounds"]]
            for r in batching.by_concurrency(record["data"])]
    return html.table(["requests at once", "output tokens/s (all requests)", "ITL per request (median)",
                       "ITL (min to max)", "rounds"], rows)


def batching_chart(record) -> charts.XY:
    """Throughput of all requests (left axis) and one request's inter-token latency (right axis) by concurrency."""
    rows = batching.by_concurrency(record["data"])
    return charts.XY(
        title="Throughput of all requests and each request's inter-token latency, by requests at once",
        x_label="requests at once", y_label="output tokens/s, all requests", y2_label="ITL per request, ms",
        lines=(charts.Line("output tokens per second (median round; left axis)",
                           tuple((i, r["throughput"]) for i, r in enumerate(rows)), tone=1, markers=True,
                           values="{:.0f}"),
               charts.Line("ITL per request, ms (median, whiskers: min to max; right axis)",
                           tuple((i, r["itl"] * 1000) for i, r in enumerate(rows)), tone=0, markers=True,
                           values="{:.0f}", right_axis=True,
                           spread=tuple((r["itl_min"] * 1000, r["itl_max"] * 1000) for r in rows))),
        x_categories=tuple(str(r["concurrency"]) for r in rows))


# bench-agreement: the harness against vllm bench serve: their medians side by side.
def bench_agreement_table(record):
    f = bench_agreement.figures(record["data"])
    return html.table(["", "prompt tokens (median)", "TTFT (median)", "ITL (median)"], [
        ["this site's harness", f"{f['harness_prompt_tokens']:.0f}", html.ms(f["harness_ttft"]), html.ms(f["harness_itl"])],
        ["vllm bench serve", f"{f['bench_prompt_tokens']:.0f}", html.ms(f["bench_ttft"]), html.ms(f["bench_itl"])]])


# prompt-length-sweep: TTFT and ITL against prompt length.
def prompt_length_sweep_table(record):
    rows = [[r["prompt_tokens"], f"{r['ttft'] * 1000:.0f} ms",
             f"{r['ttft_min'] * 1000:.0f} to {r['ttft_max'] * 1000:.0f} ms",
             f"{r['prefill'] * 1000:.0f} ms", f"{r['itl'] * 1000:.1f} ms", f"{r['server_itl'] * 1000:.1f} ms", r["n"]]
            for r in prompt_length_sweep.by_length(record["data"])]
    return html.table(["prompt tokens", "TTFT (median)", "TTFT (min to max)", "server prefill (median)",
                       "ITL (median)", "server ITL (median)", "trials"], rows)


def prompt_length_sweep_chart(record) -> charts.XY:
    """Client TTFT (median, with its range) and ITL (median) against the prompt's length in tokens."""
    rows = prompt_length_sweep.by_length(record["data"])
    return charts.XY(
        title="Time to first token and inter-token latency by prompt length",
        x_label="prompt tokens", y_label="ms",
        lines=(charts.Line("TTFT (median; whiskers: min to max)",
                           tuple((r["prompt_tokens"], r["ttft"] * 1000) for r in rows), tone=1, markers=True,
                           values="{:.0f}", spread=tuple((r["ttft_min"] * 1000, r["ttft_max"] * 1000) for r in rows)),
               charts.Line("ITL (median)", tuple((r["prompt_tokens"], r["itl"] * 1000) for r in rows), tone=0,
                           markers=True, values="{:.0f}")),
        x_ticks=tuple(r["prompt_tokens"] for r in rows))


VIEWS = {
    "batching": View(fragments={"table": batching_table}, charts={"batching": batching_chart}),
    "bench-agreement": View(fragments={"table": bench_agreement_table}),
    "prefill-stall": PREFILL_STALL,
    "prefill-stall-chunked": PREFILL_STALL,
    "prompt-length-sweep": View(fragments={"table": prompt_length_sweep_table},
                                charts={"sweep": prompt_length_sweep_chart}),
}
