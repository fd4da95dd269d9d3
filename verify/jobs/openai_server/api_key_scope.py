"""Which endpoints --api-key protects, on a server started with a key (the api-key variant)."""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

SNIPPET = "openai-server/which_need_a_key.py"


def collect(ctx) -> dict:
    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    # The variant's key, read from the command line the server was started with (never recorded).
    key = "" if ctx.server.api_key == "EMPTY" else ctx.server.api_key
    codes = snippet.statuses(ctx.base_url, key)
    # Per endpoint, the two statuses that came back are its events; the capture's status is the one with the key.
    return {"endpoints": {name: capture.results("probe", list(c.values()), statuses=[c["with key"]],
                                                expect_status=[401, 404, 405], **c) for name, c in codes.items()},
            "server_has_key": bool(key)}


def _open(d) -> list[str]:
    return [n for n, c in d["endpoints"].items() if c["without key"] < 400]


def decide_v1(d):
    v1 = {n: c for n, c in d["endpoints"].items() if " /v1/" in n}
    ok = d["server_has_key"] and all(c["without key"] == 401 and c["with key"] == 200 for c in v1.values())
    return verdict_if(ok, "; ".join(f"{n}: {c['without key']} without the key, {c['with key']} with it" for n, c in v1.items()))


GENERATES = "POST /invocations"  # outside /v1, answers with a chat completion


def decide_open(d):
    others = {n: c for n, c in d["endpoints"].items() if " /v1/" not in n and n != GENERATES}
    open_ = [n for n, c in others.items() if c["without key"] == 200]
    return verdict_if(d["server_has_key"] and len(open_) == len(others),
                      f"answered without the key: {', '.join(open_) or 'none'}; of {', '.join(others)}")


def decide_generates_open(d):
    c = d["endpoints"].get(GENERATES)
    if c is None:
        return verdict_if(None, f"{GENERATES} was not asked")
    return verdict_if(d["server_has_key"] and c["without key"] == 200 and c["with key"] == 200,
                      f"{GENERATES}, a one-token chat request: {c['without key']} without the key, "
                      f"{c['with key']} with it")


JOB = Job(
    id="api-key-scope",
    title="What --api-key protects",
    question="Which endpoints does --api-key protect, and which stay open?",
    pages=("openai-server.md",),
    variant="api-key",
    collect=collect,
    claims=(
        Claim("api-key-scope.v1-protected", "With --api-key, every /v1 endpoint asked (models, chat completions, "
              "completions) answers 401 without the key.", decide_v1),
        Claim("api-key-scope.rest-open", "With --api-key, /health, /version, /metrics and /tokenize still answer "
              "without the key.", decide_open),
        Claim("api-key-scope.invocations-generates", "With --api-key, POST /invocations answers a chat request "
              "with 200 without the key: text generation stays open outside /v1.", decide_generates_open),
    ),
)
