"""What the chunks of a chat stream look like, over many prompts.

Each request asks for the token ids of every chunk and for usage, so a rule can
tell which generated token each chunk carries: the finish chunk's token is
decoded on its own by the server's /detokenize to see why its text is empty.
"""

from __future__ import annotations

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
MAX_TOKENS = 80
REPLACEMENT = "\ufffd"  # what a byte sequence that is not a whole character decodes to


def collect(ctx) -> dict:
    import httpx

    from verify.measure import capture, sse
    streams = {}
    for name, prompt in PROMPTS.items():
        body = {"model": "chat", "messages": [{"role": "user", "content": prompt}],
                "max_tokens": MAX_TOKENS, "temperature": 0, "stream": True, "return_token_ids": True,
                "stream_options": {"include_usage": True}}
        streams[name] = sse.capture(ctx.base_url + "/chat/completions", body)
    # What the token on each finish chunk is, decoded alone by the server's tokenizer.
    finish_tokens = {}
    with httpx.Client(timeout=30) as client:
        for name, stream in streams.items():
            finishing = [c for c in transcript.chunks(stream["lines"])
                         if c.get("choices") and c["choices"][0].get("finish_reason")]
            ids = finishing[-1]["choices"][0].get("token_ids") or [] if finishing else []
            r = client.post(ctx.server.url + "/detokenize", json={"model": "chat", "tokens": ids})
            answer = capture.body(r)
            finish_tokens[name] = capture.response(
                r, token_ids=ids, decoded_alone=answer.get("prompt") if r.is_success and isinstance(answer, dict) else None)
    return {"streams": streams, "finish_tokens": finish_tokens}


def chunk_shape(stream) -> dict:
    chunks = [c for c in transcript.chunks(stream["lines"]) if c.get("choices")]
    first = chunks[0]["choices"][0]["delta"]
    finish_idx = next(i for i, c in enumerate(chunks) if c["choices"][0].get("finish_reason"))
    texts = [c["choices"][0]["delta"].get("content") for c in chunks]
    empty_mid = [i for i in range(1, finish_idx) if not texts[i]]
    usage = next((c["usage"] for c in transcript.chunks(stream["lines"]) if c.get("usage")), {})
    return {"first_role": first.get("role"), "first_content": first.get("content", "<absent>"),
            "token_chunks": sum(len(c["choices"][0].get("token_ids") or []) for c in chunks),
            "completion_tokens": usage.get("completion_tokens"),
            "finish_idx": finish_idx, "n_chunks": len(chunks),
            "finish_text": texts[finish_idx], "finish_reason": chunks[finish_idx]["choices"][0]["finish_reason"],
            "finish_is_last": finish_idx == len(chunks) - 1, "empty_mid": empty_mid}


def decide_first(d):
    shapes = {k: chunk_shape(s) for k, s in d["streams"].items()}
    # An empty string exactly: absent or null content would contradict the page.
    ok = all(s["first_role"] == "assistant" and s["first_content"] == "" for s in shapes.values())
    contents = sorted({repr(s["first_content"]) for s in shapes.values()})
    return verdict_if(ok, f"in all {len(shapes)} streams the first chunk has role 'assistant'; its content is "
                          f"{' / '.join(contents)} (an empty string, not null)" if ok else
                      f"first chunks: {[(k, s['first_role'], s['first_content']) for k, s in shapes.items()]}")


def decide_finish_on_content(d):
    shapes = {k: chunk_shape(s) for k, s in d["streams"].items()}
    by_reason: dict[str, list[str]] = {}
    for s in shapes.values():
        by_reason.setdefault(s["finish_reason"], []).append("with text" if s["finish_text"] else "empty")
    summary = "; ".join(f"finish_reason {r} in {len(v)} stream(s): its chunk "
                        + ", ".join(f"{kind} in {v.count(kind)}" for kind in sorted(set(v)))
                        for r, v in sorted(by_reason.items()))
    with_text = [k for k, s in shapes.items() if s["finish_text"]]
    return verdict_if(len(with_text) == len(shapes), summary)


def decide_empty_mid(d):
    shapes = {k: chunk_shape(s) for k, s in d["streams"].items()}
    seen = {k: s["empty_mid"] for k, s in shapes.items() if s["empty_mid"]}
    if seen:
        return Verdict("confirmed", "chunks with empty text appeared mid-stream in: " +
                       ", ".join(f"{k} (chunk {v[:5]})" for k, v in seen.items()))
    return Verdict(INCONCLUSIVE, f"no empty chunk between the first chunk and the finish chunk in {len(shapes)} streams")


def decide_one_token_per_chunk(d):
    shapes = {k: chunk_shape(s) for k, s in d["streams"].items()}
    off = {k: (s["token_chunks"], s["completion_tokens"]) for k, s in shapes.items()
           if s["token_chunks"] != s["completion_tokens"] or s["n_chunks"] - 1 != s["completion_tokens"]}
    return verdict_if(not off, f"in all {len(shapes)} streams every chunk after the first carried one generated token, "
                               "and their number equals usage.completion_tokens" if not off else
                      f"token ids on chunks against completion_tokens differ in: {off}")


def decide_finish_token(d):
    shapes = {k: chunk_shape(s) for k, s in d["streams"].items()}
    found = []
    for name, s in shapes.items():
        token = d["finish_tokens"][name]
        if s["finish_reason"] == "length":
            # The finish chunk carries the last token counted; no text means that token ends mid-character.
            ok = (s["finish_idx"] == MAX_TOKENS and (bool(s["finish_text"]) or REPLACEMENT in (token["decoded_alone"] or "")))
        else:
            ok = not s["finish_text"] and s["finish_idx"] == s["completion_tokens"]
        found.append((name, s["finish_reason"], token["decoded_alone"], s["finish_text"], ok))
    empty_length = [f for f in found if f[1] == "length" and not f[3]]
    summary = "; ".join(f"{n}: {r}, token {t!r}, text {x!r}" for n, r, t, x, _ in found)
    if not all(f[4] for f in found):
        return Verdict("refuted", summary)
    if not empty_length:
        return Verdict(INCONCLUSIVE, "no stream cut by length ended mid-character; " + summary)
    return Verdict("confirmed", summary)


JOB = Job(
    id="chunk-shapes",
    title="Chunk shapes over many prompts",
    question="Does the first chunk always carry the role and no text? Where does finish_reason appear? "
             "Do chunks without text appear mid-stream?",
    pages=("streaming.md",),
    collect=collect,
    # Not shares_server: how tokens fall into chunks depends on how busy the API server is (seen:
    # run side by side with other jobs, chunks carried more than one token).
    claims=(
        Claim("chunk-shapes.first-chunk-role", "The first chunk carries the role and no text.", decide_first),
        Claim("chunk-shapes.finish-on-last-text", "The last chunk with text also carries finish_reason.",
              decide_finish_on_content),
        Claim("chunk-shapes.one-token-per-chunk", "After the first chunk, each chunk carries exactly one generated "
              "token, the last one included.", decide_one_token_per_chunk, timing=True),
        Claim("chunk-shapes.finish-token", "finish_reason rides on the chunk of the last generated token: for stop "
              "the end-of-sequence token, which has no text; for length the last token, whose text is empty when it "
              "ends in the middle of a character.", decide_finish_token, timing=True),
        Claim("chunk-shapes.empty-mid-stream", "Chunks with no text can appear in the middle of a stream.",
              decide_empty_mid),
    ),
)
