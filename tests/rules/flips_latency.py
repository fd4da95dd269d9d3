"""Latency article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

import json
from typing import Callable

from tests.rules._records import json_lines


def role_chunk_a_step_ahead(d: dict) -> None:
    """bench-definitions.empty-chunk-with-first-token: the server sends the empty role chunk one token
    step (the stream's own next gap) before the first token's chunk."""
    for s in d["streams"]:
        (role, _), (first, _), (second, _) = json_lines(s)[:3]
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
    for s in d["natural"]:
        line, chunk = [(x, c) for x, c in json_lines(s) if c.get("choices")][-1]
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
    _, some, _ = job.goodput_counts(d)
    d["bench"]["result"]["request_goodput"] = some / d["bench"]["result"]["duration"]


def tool_times_a_later_chunk(d: dict) -> None:
    """bench-definitions.ttft-first-chunk: a tool whose TTFT runs on to a later token's chunk, the next chunk
    with text that reached the proxy apart from the first one (more than FIRST_CHUNK_S after it): each TTFT is
    that chunk's arrival at the proxy plus the hop the record shows (the tool's TTFT after the first chunk with
    choices). In most streams that is the second chunk with text, a token's gap later; a stream whose first
    tokens reached the proxy together, in one read (recorded on cpu: 16 chunks within 2 ms), has no token's gap
    between them, so its clock runs on to the first chunk that came after that burst."""
    from verify.jobs.latency import bench_definitions as job
    r = d["bench"]["result"]
    for i in job._ok(d):
        s = d["streams"][i]
        events = [(x, c) for x, c in json_lines(s) if c.get("choices")]
        role = events[0][0]
        texts = [x for x, c in events if c["choices"][0].get("delta", {}).get("content")]
        later = next(x for x in texts[1:] if x["t"] - texts[0]["t"] > job.FIRST_CHUNK_S)
        hop = r["ttfts"][i] - role["t"]
        r["ttfts"][i] = later["t"] + hop


def guidellm_stops_at_the_empty_chunk(d: dict) -> None:
    """bench-definitions.guidellm-ttft: a GuideLLM whose TTFT ends at the first chunk it reads, the empty one:
    each request's TTFT is its own first iteration's time after its start."""
    for r in d["guidellm"]["result"]["requests"]:
        t = r["timings"]
        r["time_to_first_token_ms"] = (t["first_request_iteration"] - t["request_start"]) * 1000


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "bench-definitions.ttft-first-chunk": tool_times_a_later_chunk,
    "bench-definitions.guidellm-ttft": guidellm_stops_at_the_empty_chunk,
    "bench-definitions.goodput-every-objective": tool_counts_any_objective,
    "bench-definitions.itl-gap-per-token": tool_saves_gaps_between_text_chunks,
    "bench-definitions.guidellm-usage": guidellm_counts_one_more,
    "bench-definitions.empty-chunk-with-first-token": role_chunk_a_step_ahead,
    "bench-definitions.mean-itl-below-tpot": tool_saves_one_gap_fewer,
    "bench-definitions.server-usage-counts": tool_counts_with_its_own_tokenizer,
    "bench-definitions.guidellm-forces-length": guidellm_leaves_the_length_to_the_model,
    "bench-definitions.aiperf-itl-ends-at-text": stop_chunk_carries_text,
}
