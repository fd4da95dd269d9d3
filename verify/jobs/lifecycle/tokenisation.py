"""Where the prompt is tokenised: what the server bills against what /tokenize says, and what the template adds."""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

SNIPPET = "lifecycle/count_prompt_tokens.py"
MESSAGES = {
    "short": [{"role": "user", "content": "Say hi."}],
    "longer": [{"role": "user", "content": "Explain in two sentences why the sky is blue."}],
    "with system": [{"role": "system", "content": "You answer in French."},
                    {"role": "user", "content": "What is the capital of Italy?"}],
}


def collect(ctx) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    root = ctx.server.url
    # A connection of its own for each request: a pooled one left idle while the batch's longest answer runs
    # can be closed by the server's keep-alive timeout just as the next request takes it ("Server disconnected
    # without sending a response").
    with httpx.Client(timeout=60, limits=httpx.Limits(max_keepalive_connections=0)) as client:
        def one(messages):
            counts = snippet.count_prompt_tokens(ctx.base_url, messages)
            r = client.post(ctx.base_url + "/chat/completions",
                            json={"model": "chat", "messages": messages, "max_tokens": 12, "temperature": 0,
                                  "return_token_ids": True})
            # A non-JSON or empty answer gives an empty body here and a failed capture, not a crash.
            body = capture.body(r) or {}
            choice = (body.get("choices") or [{}])[0]
            ids = choice.get("token_ids") or []
            def detokenize(token_ids):
                answer = client.post(root + "/detokenize", json={"model": "chat", "tokens": token_ids})
                return (capture.body(answer) or {}).get("prompt")
            return capture.response(r, counts=counts, usage=body.get("usage"),
                                    text=(choice.get("message") or {}).get("content"),
                                    finish_reason=choice.get("finish_reason"), completion_token_ids=ids,
                                    detokenized=detokenize(ids), last_token_alone=detokenize(ids[-1:]))
        # Each prompt's counts, answer and detokenisation are its own: the prompts go out at once (the job
        # shares its server with others anyway, so no answer here was ever alone).
        with ThreadPoolExecutor(len(MESSAGES)) as pool:
            sent = {name: pool.submit(one, messages) for name, messages in MESSAGES.items()}
        out = {name: f.result() for name, f in sent.items()}
        # What the model really reads for the shortest prompt: the template's output, detokenised.
        ids = client.post(root + "/tokenize", json={"model": "chat", "messages": MESSAGES["short"],
                                                   "add_generation_prompt": True}).json()["tokens"]
        templated = client.post(root + "/detokenize", json={"model": "chat", "tokens": ids}).json()["prompt"]
    return {"requests": out, "templated_short_prompt": templated}


def decide_billed(d):
    rows = [(k, r["usage"]["prompt_tokens"], r["counts"]["with_chat_template"]) for k, r in d["requests"].items()]
    return verdict_if(all(a == b for _, a, b in rows),
                      "; ".join(f"{k}: billed {a}, /tokenize {b}" for k, a, b in rows))


def decide_template(d):
    rows = [(k, r["counts"]["with_chat_template"] - r["counts"]["text_alone"]) for k, r in d["requests"].items()]
    return verdict_if(all(extra > 0 for _, extra in rows),
                      "tokens the chat template adds to the text: " + "; ".join(f"{k}: {x}" for k, x in rows))


def decide_detok(d):
    rows = []
    for k, r in d["requests"].items():
        if r["text"] == r["detokenized"]:
            rows.append((k, True, f"{len(r['completion_token_ids'])} token ids detokenise to exactly the text"))
        else:
            # A stop on the end-of-turn token: the token is generated (and counted) but not shown.
            held = r["finish_reason"] == "stop" and r["detokenized"] == r["text"] + r["last_token_alone"]
            rows.append((k, held, f"the text is the token ids detokenised minus the last one, "
                                  f"{r['last_token_alone']!r}, which ended the turn" if held else
                                  f"the text differs from the detokenised ids: {r['detokenized']!r}"))
    return verdict_if(all(ok for _, ok, _ in rows), "; ".join(f"{k}: {why}" for k, _, why in rows))


JOB = Job(
    id="tokenisation",
    title="Tokenisation: what a prompt costs",
    question="Does the server bill the prompt as /tokenize counts it with the chat template, how many tokens does the "
             "template add, and is the output text the detokenised token ids?",
    pages=("lifecycle.md",),
    collect=collect,
    shares_server=True,  # reads only what the API answers
    claims=(
        Claim("tokenisation.billed-equals-tokenize", "usage.prompt_tokens equals what /tokenize counts for the same "
              "messages with the chat template applied.", decide_billed),
        Claim("tokenisation.template-adds-tokens", "The chat template adds tokens of its own to every prompt, and they "
              "are billed.", decide_template),
        Claim("tokenisation.detokenised-text", "The text a response carries is its generated token ids, detokenised, "
              "except the end-of-turn token that stopped it: that one is counted but not shown.", decide_detok),
    ),
)
