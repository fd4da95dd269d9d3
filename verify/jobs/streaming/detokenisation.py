"""Multi-byte text across chunk boundaries: what the server sends, and what clients make of it."""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if
from verify.measure import transcript

SNIPPETS = ("streaming/reassemble.py",)
# Structured output forces the model to produce exactly this text, token by token:
# accents, CJK and emoji, several of which the tokenizer splits across tokens.
TARGET = "Voilà: café, 日本語, 🌊🐟!"
RAW_PIECE_BYTES = 7  # a client reading the raw body in small fixed-size pieces
REPLACEMENT = "\ufffd"


def _body(stream=True):
    return {"model": "chat", "messages": [{"role": "user", "content": f"Write exactly: {TARGET}"}],
            "max_tokens": 60, "temperature": 0, "stream": stream, "return_token_ids": True,
            "structured_outputs": {"choice": [TARGET]}}


def collect(ctx) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from verify.measure import capture, sse
    url = ctx.base_url + "/chat/completions"
    snippet = ctx.snippet(SNIPPETS[0])

    def raw():
        # The same request read as raw bytes in small pieces.
        with httpx.Client(timeout=60) as c, c.stream("POST", url, json=_body()) as r:
            return list(r.iter_raw(chunk_size=RAW_PIECE_BYTES)), r.status_code

    # The choice constraint allows only the target text, so the three requests answer alike however the
    # engine batches them: they go out at once.
    with ThreadPoolExecutor(3) as pool:
        streamed, raw_read = pool.submit(sse.capture, url, _body()), pool.submit(raw)
        non_streamed_sent = pool.submit(httpx.post, url, json=_body(stream=False), timeout=60)
    stream, (pieces, raw_status), response = streamed.result(), raw_read.result(), non_streamed_sent.result()
    raw_body = capture.results("raw-body", [p for p in pieces if p], statuses=[raw_status])
    per_chunk = [{"content": c["choices"][0]["delta"].get("content"), "token_ids": c["choices"][0].get("token_ids"),
                  "finish_reason": c["choices"][0].get("finish_reason")}
                 for c in transcript.chunks(stream["lines"]) if c.get("choices")]
    with httpx.Client(timeout=60) as client:
        # Each generated token decoded on its own, by the server's own tokenizer.
        token_ids = [t for c in per_chunk for t in (c["token_ids"] or [])]
        per_token = [client.post(ctx.server.url + "/detokenize", json={"model": "chat", "tokens": [t]}).json()["prompt"]
                     for t in token_ids]
        decoded = iter(per_token)
        for c in per_chunk:
            c["tokens_decoded_alone"] = [next(decoded) for _ in (c["token_ids"] or [])]
    def sse_text(body_text):
        lines = [{"line": line} for line in body_text.splitlines()]
        return snippet.by_concatenation([transcript.chunk_text(c) for c in transcript.chunks(lines)])
    answer = capture.body(response) or {}
    # An error answer has no choices: its capture (its status) fails, and nothing is concluded.
    non_streamed = answer["choices"][0]["message"]["content"] if isinstance(answer, dict) and answer.get("choices") \
        else None
    return {
        "stream": stream, "raw_body": raw_body,
        "non_streamed_request": capture.response(response),
        "target": TARGET, "chunks": per_chunk, "non_streamed": non_streamed,
        "results": {
            "concatenated strings": snippet.by_concatenation([c["content"] for c in per_chunk]),
            "each token decoded on its own": "".join(per_token),
            f"raw body, {RAW_PIECE_BYTES}-byte pieces, incremental decoder": sse_text(snippet.by_incremental_decoder(pieces)),
            f"raw body, {RAW_PIECE_BYTES}-byte pieces, each decoded on its own": sse_text(snippet.by_decoding_each_piece(pieces)),
        },
    }


def held_back(chunk) -> bool:
    """A chunk whose token is only part of a character: no text sent, and the token alone is not whole text.

    The end-of-sequence token also comes with no text, but it decodes alone to a
    special token, not to a broken character, so it is not counted."""
    return (bool(chunk["token_ids"]) and not chunk["content"]
            and any(REPLACEMENT in t for t in chunk.get("tokens_decoded_alone", [])))


def decide_server(d):
    held = [i for i, c in enumerate(d["chunks"]) if held_back(c)]
    broken = [c["content"] for c in d["chunks"] if c["content"] and REPLACEMENT in c["content"]]
    whole = d["results"]["concatenated strings"] == d["target"] == d["non_streamed"]
    return verdict_if(whole and not broken and bool(held),
                      f"{len(held)} chunks carried a token but no text (a character's first bytes, held back until it "
                      f"was complete); no chunk contained a replacement character; the concatenation "
                      f"{'equals' if whole else 'differs from'} the non-streamed text")


def decide_clients(d):
    r = d["results"]
    garbled = {k: v.count(REPLACEMENT) for k, v in r.items() if REPLACEMENT in v}
    exact = [k for k, v in r.items() if v == d["target"]]
    piecewise_broken = any("on its own" in k for k in garbled)
    return verdict_if(piecewise_broken and "concatenated strings" in exact,
                      "exact: " + ", ".join(exact) + "; garbled: " +
                      (", ".join(f"{k} ({n} replacement characters)" for k, n in garbled.items()) or "none"))


JOB = Job(
    id="detokenisation",
    title="Multi-byte characters across chunks",
    question="How does the server handle a character split across tokens, and what do clients that decode "
             "pieces on their own produce?",
    pages=("streaming.md",),
    collect=collect,
    shares_server=True,  # reads only what the API answers
    claims=(
        Claim("detokenisation.server-whole-characters", "The server only sends whole characters: a character split "
              "across tokens is held back until complete.", decide_server),
        Claim("detokenisation.piecewise-decoding-garbles", "Concatenating the streamed strings is exact; decoding "
              "pieces of bytes on their own garbles multi-byte characters.", decide_clients),
    ),
)
