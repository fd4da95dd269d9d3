"""Token usage in streams: absent by default, a final chunk when asked for, and equal to the non-streamed counts."""

from __future__ import annotations

import json

from verify.job import INCONCLUSIVE, Claim, Job, Verdict, verdict_if
from verify.measure.transcript import chunks

SNIPPETS = ("streaming/usage_in_stream.py",)
# max_tokens well above the answer's length: both requests must stop by themselves, or the counts
# would be equal by construction (both cut at max_tokens) and the comparison would prove nothing.
REQUEST = {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 200, "temperature": 0}


def collect(ctx) -> dict:
    from openai import OpenAI
    from verify.measure.sse import capture
    url = ctx.base_url + "/chat/completions"
    base = {"model": "chat", **REQUEST}
    data = {"raw_without": capture(url, {**base, "stream": True}),
            "raw_with": capture(url, {**base, "stream": True, "stream_options": {"include_usage": True}})}
    non_streamed = OpenAI(base_url=ctx.base_url, api_key="EMPTY").chat.completions.create(model="chat", **REQUEST)
    data["non_streaming_usage"] = non_streamed.usage.model_dump()
    data["non_streaming_finish_reason"] = non_streamed.choices[0].finish_reason
    # The page's snippet, run as shown.
    snippet = ctx.snippet(SNIPPETS[0])
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY")
    for include in (False, True):
        _, usage = snippet.streamed_usage(client, REQUEST["messages"], include,
                                          max_tokens=REQUEST["max_tokens"], temperature=0)
        data[f"snippet_usage_{'with' if include else 'without'}"] = usage.model_dump() if usage else None
    return data


def decide_absent(d):
    with_usage = [c for c in chunks(d["raw_without"]["lines"]) if c.get("usage")]
    return verdict_if(not with_usage and d["snippet_usage_without"] is None,
                      "no chunk carries usage without stream_options" if not with_usage
                      else f"{len(with_usage)} chunks carry usage without being asked")


def decide_final_chunk(d):
    streamed = chunks(d["raw_with"]["lines"])
    last = streamed[-1]
    with_usage = [c for c in streamed if c.get("usage")]
    ok = (len(with_usage) == 1 and last.get("usage") and last.get("choices") == []
          and d["raw_with"]["lines"][-2]["line"] == "data: [DONE]")
    keys = sorted(k for k, v in (last.get("usage") or {}).items() if v is not None)
    return verdict_if(bool(ok), f"the last chunk before [DONE] has choices [] and usage with {', '.join(keys)}; "
                                f"no other chunk carries usage" if ok else f"last chunk: {json.dumps(last)[:200]}")


def decide_matches(d):
    streamed_chunks = chunks(d["raw_with"]["lines"])
    streamed = streamed_chunks[-1]["usage"]
    plain = d["non_streaming_usage"]
    finishes = {c["choices"][0]["finish_reason"] for c in streamed_chunks
                if c.get("choices") and c["choices"][0].get("finish_reason")}
    keys = ("prompt_tokens", "completion_tokens", "total_tokens")
    counts = ("streamed " + ", ".join(f"{k}={streamed[k]}" for k in keys) +
              "; non-streamed " + ", ".join(f"{k}={plain[k]}" for k in keys))
    if finishes != {"stop"} or d["non_streaming_finish_reason"] != "stop":
        return Verdict(INCONCLUSIVE, f"a request did not stop by itself (streamed: {sorted(finishes)}, non-streamed: "
                                     f"{d['non_streaming_finish_reason']}), so equal counts would prove nothing; {counts}")
    same = all(streamed[k] == plain[k] for k in keys)
    return verdict_if(same, "both stopped by themselves (finish_reason stop); " + counts)


JOB = Job(
    id="usage-in-stream",
    title="Token usage in streams",
    question="Does vLLM support stream_options.include_usage, what is the exact shape of the usage chunk, "
             "and do its counts match the non-streaming response?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("usage-in-stream.absent-by-default", "Without stream_options, a stream carries no token counts.", decide_absent),
        Claim("usage-in-stream.final-chunk", "With include_usage, one extra final chunk (empty choices) carries usage, "
              "just before [DONE].", decide_final_chunk),
        Claim("usage-in-stream.matches-non-streaming", "The streamed counts equal those of the same request "
              "made without streaming.", decide_matches),
    ),
)
