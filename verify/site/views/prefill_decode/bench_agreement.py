"""The harness against vllm bench serve: their medians side by side."""

from __future__ import annotations

from verify.jobs.prefill_decode import bench_agreement as job
from verify.site import html


def fragment(record):
    f = job.figures(record["data"])
    return html.table(["", "prompt tokens (median)", "TTFT (median)", "ITL (median)"], [
        ["this site's harness", f"{f['harness_prompt_tokens']:.0f}", html.ms(f["harness_ttft"]), html.ms(f["harness_itl"])],
        ["vllm bench serve", f"{f['bench_prompt_tokens']:.0f}", html.ms(f["bench_ttft"]), html.ms(f["bench_itl"])]])


FRAGMENTS = {"table": fragment}
