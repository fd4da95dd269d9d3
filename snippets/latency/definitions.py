"""TTFT, ITL and TPOT of one streamed chat request, by each tool's own definition.

A stream is the moment the request was sent and every SSE line with the moment it arrived
(seconds on one clock). `output_tokens` is the server's usage.completion_tokens.
"""

import json


def chunks(stream):
    """(arrival, parsed chunk) for every data line except the closing [DONE]."""
    return [(t, json.loads(line[6:])) for t, line in stream["lines"] if line.startswith("data: {")]


def text_of(chunk) -> str:
    choices = chunk.get("choices") or [{}]
    return choices[0].get("delta", {}).get("content") or ""


def vllm_bench_serve(stream, output_tokens):
    """vllm bench serve: the first chunk with choices ends TTFT, even one with no text; ITL is the
    list of gaps between those chunks (pooled over all requests); TPOT leaves the first token out."""
    times = [t for t, c in chunks(stream) if c.get("choices")]
    ttft, e2e = times[0] - stream["sent"], times[-1] - stream["sent"]
    return {"ttft": ttft, "itl_gaps": [b - a for a, b in zip(times, times[1:])],
            "tpot": (e2e - ttft) / (output_tokens - 1), "e2e": e2e}


def guidellm(stream, output_tokens):
    """GuideLLM 0.8: the first chunk with text ends TTFT; its ITL is one mean per request over
    n - 1 gaps; its TPOT counts the first token in: (last token - sent) / n."""
    times = [t for t, c in chunks(stream) if text_of(c)]
    first, last = times[0] - stream["sent"], times[-1] - stream["sent"]
    return {"ttft": first, "itl": (last - first) / (output_tokens - 1), "tpot": last / output_tokens}


def aiperf(stream, output_tokens):
    """AIPerf 0.13: the first chunk with text ends TTFT; its ITL is vLLM's TPOT (one mean per
    request, first token left out); inter_chunk_latency is the pooled gaps between text chunks."""
    times = [t for t, c in chunks(stream) if text_of(c)]
    ttft, latency = times[0] - stream["sent"], times[-1] - stream["sent"]
    return {"ttft": ttft, "itl": (latency - ttft) / (output_tokens - 1),
            "inter_chunk_gaps": [b - a for a, b in zip(times, times[1:])]}
