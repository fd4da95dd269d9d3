"""What the chunks of a chat stream look like, over many prompts."""

from __future__ import annotations

from verify.site import html as render
from verify.measure import transcript
from verify.job import INCONCLUSIVE, Claim, Job, Verdict, verdict_if

PROMPTS = {
    "short": "Say hi.",
    "count": "Count to five.",
    "long": "Write a long story about a dragon who learns to cook.",
    "list": "List ten fruits, one per line.",
    "accents": "Écris une phrase en français: « Où est la bibliothèque, s'il vous plaît ? »",
    "cjk": "Translate to Japanese: good morning, thank you, goodbye.",
    "emoji": "Reply with three emoji that describe the sea 🌊 and nothing else.",
}


def collect(ctx) -> dict:
    from verify.measure.sse import capture
    streams = {}
    for name, prompt in PROMPTS.items():
        body = {"model": "chat", "messages": [{"role": "user", "content": prompt}],
                "max_tokens": 80, "temperature": 0, "stream": True}
        streams[name] = capture(ctx.base_url + "/chat/completions", body)
    return {"streams": streams}


def _shape(stream) -> dict:
    chunks = [c for c in transcript.chunks(stream["lines"]) if c.get("choices")]
    first = chunks[0]["choices"][0]["delta"]
    finish_idx = next(i for i, c in enumerate(chunks) if c["choices"][0].get("finish_reason"))
    texts = [c["choices"][0]["delta"].get("content") for c in chunks]
    empty_mid = [i for i in range(1, finish_idx) if not texts[i]]
    return {"first_role": first.get("role"), "first_content": first.get("content", "<absent>"),
            "finish_idx": finish_idx, "n_chunks": len(chunks),
            "finish_text": texts[finish_idx], "finish_reason": chunks[finish_idx]["choices"][0]["finish_reason"],
            "finish_is_last": finish_idx == len(chunks) - 1, "empty_mid": empty_mid}


def decide_first(d):
    shapes = {k: _shape(s) for k, s in d["streams"].items()}
    ok = all(s["first_role"] == "assistant" and not s["first_content"] for s in shapes.values())
    contents = sorted({repr(s["first_content"]) for s in shapes.values()})
    return verdict_if(ok, f"in all {len(shapes)} streams the first chunk has role 'assistant'; its content is "
                          f"{' / '.join(contents)} (an empty string, not null)" if ok else
                      f"first chunks: {[(k, s['first_role'], s['first_content']) for k, s in shapes.items()]}")


def decide_finish_on_content(d):
    shapes = {k: _shape(s) for k, s in d["streams"].items()}
    by_reason: dict[str, list[str]] = {}
    for s in shapes.values():
        by_reason.setdefault(s["finish_reason"], []).append("with text" if s["finish_text"] else "empty")
    summary = "; ".join(f"finish_reason {r}: chunk {', '.join(sorted(set(v)))} in {len(v)} streams"
                        for r, v in sorted(by_reason.items()))
    with_text = [k for k, s in shapes.items() if s["finish_text"]]
    return verdict_if(len(with_text) == len(shapes), summary)


def decide_empty_mid(d):
    shapes = {k: _shape(s) for k, s in d["streams"].items()}
    seen = {k: s["empty_mid"] for k, s in shapes.items() if s["empty_mid"]}
    if seen:
        return Verdict("confirmed", "chunks with empty text appeared mid-stream in: " +
                       ", ".join(f"{k} (chunk {v[:5]})" for k, v in seen.items()))
    return Verdict(INCONCLUSIVE, f"no empty chunk between the first chunk and the finish chunk in {len(shapes)} streams")


def fragment_table(record):
    rows = []
    for name, stream in record["data"]["streams"].items():
        s = _shape(stream)
        rows.append([name, s["n_chunks"], repr(s["first_content"]), s["finish_reason"],
                     repr(s["finish_text"]), "yes" if s["finish_is_last"] else "no",
                     ", ".join(map(str, s["empty_mid"])) or "none"])
    return render.table(["prompt", "chunks", "first chunk content", "finish_reason", "text on the finish chunk",
                         "finish chunk is last", "empty chunks mid-stream (index)"], rows)


JOB = Job(
    id="chunk-shapes",
    title="Chunk shapes over many prompts",
    question="Does the first chunk always carry the role and no text? Where does finish_reason appear? "
             "Do chunks without text appear mid-stream?",
    pages=("streaming.md",),
    collect=collect,
    claims=(
        Claim("chunk-shapes.first-chunk-role", "The first chunk carries the role and no text.", decide_first),
        Claim("chunk-shapes.finish-on-last-text", "The last chunk with text also carries finish_reason.",
              decide_finish_on_content),
        Claim("chunk-shapes.empty-mid-stream", "Chunks with no text can appear in the middle of a stream.",
              decide_empty_mid),
    ),
    fragments={"table": fragment_table},
)
