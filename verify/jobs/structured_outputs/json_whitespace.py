"""Whitespace inside constrained JSON, and the request option that is meant to remove it.

The JSON grammar lets any whitespace stand between tokens, so a model may keep writing newlines
and spaces until max_tokens cuts the answer. structured_outputs accepts a disable_any_whitespace
option in the request; whether it changes anything is read from the answers. The same schema and
prompt, without and with it, SAMPLES times each: the SAMPLES requests of a way are sent at once
(independent samples; no claim is about their order), the way without the option first, then the
way with it, so no batch mixes the two.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if
from verify.jobs.structured_outputs._validate import fits, whitespace_between_tokens

SNIPPET = "structured-outputs/constrain.py"
DEFAULT, OPTION = "structured_outputs json", "structured_outputs json, no whitespace"
SAMPLES = 6
MAX_TOKENS = 60


def collect(ctx) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import httpx
    from openai import OpenAI

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    # A connection of its own for each request: a pooled one left idle while the batch's longest answer runs
    # can be closed by the server's keep-alive timeout just as the next request takes it ("Server disconnected
    # without sending a response").
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0,
                    http_client=httpx.Client(timeout=120, limits=httpx.Limits(max_keepalive_connections=0)))

    def one(way):
        return dict(zip(("text", "finish_reason"), snippet.ask(client, way, max_tokens=MAX_TOKENS)))

    out = {}
    for way in (DEFAULT, OPTION):
        with ThreadPoolExecutor(SAMPLES) as pool:
            answers = list(pool.map(one, [way] * SAMPLES))
        out[way] = capture.results("answers", [a for a in answers if a["text"]], samples=answers,
                                   constraint=snippet.WAYS[way][1]["extra_body"]["structured_outputs"])
    return {"ways": out, "max_tokens": MAX_TOKENS}


def counts(w: dict) -> dict:
    """Answers cut by max_tokens, answers with whitespace between JSON tokens, answers that fit, all answers."""
    s = w["samples"]
    return {"cut": sum(a["finish_reason"] == "length" for a in s),
            "spaced": sum(whitespace_between_tokens(a["text"]) > 0 for a in s),
            "fit": sum(fits(a["text"], w["constraint"]) for a in s), "all": len(s)}


def _share(text: str) -> float:
    return whitespace_between_tokens(text) / len(text) if text else 0.0


def decide_spaced(d):
    c = counts(d["ways"][DEFAULT])
    shares = [_share(a["text"]) for a in d["ways"][DEFAULT]["samples"]]
    return verdict_if(c["all"] == SAMPLES and c["spaced"] >= SAMPLES / 2,
                      f"{c['spaced']} of {c['all']} answers hold whitespace between JSON tokens "
                      f"({', '.join(f'{s:.0%}' for s in shares)} of each text); {c['cut']} cut by max_tokens "
                      f"({d['max_tokens']}); {c['fit']} of {c['all']} fit the schema")


def decide_request_option(d):
    """Whitespace in any answer shows the option did not remove it. Without whitespace, an answer cut by
    max_tokens shows only its start (whitespace could have followed), and fewer samples than asked are
    not the run the sentence is about: neither shows that every answer closes."""
    c = counts(d["ways"][OPTION])
    because = (f"with disable_any_whitespace in the request: {c['spaced']} of {c['all']} answers hold whitespace "
               f"between JSON tokens, {c['cut']} cut by max_tokens ({d['max_tokens']}), {c['fit']} fit the schema")
    if c["spaced"]:
        return verdict_if(False, because)
    if c["all"] != SAMPLES:
        return verdict_if(None, because + f" ({c['all']} answers of the {SAMPLES} asked)")
    if c["cut"]:
        return verdict_if(None, because + " (a cut answer shows only its start)")
    return verdict_if(True, because)


JOB = Job(
    id="json-whitespace",
    title="Whitespace in constrained JSON",
    question="Does a small model at temperature 1.0 run out of tokens in the whitespace constrained JSON allows, "
             "and does disable_any_whitespace in the request stop it?",
    pages=("structured-outputs.md",),
    collect=collect,
    claims=(
        Claim("json-whitespace.spaced", "With the default JSON grammar, most answers at temperature 1.0 hold "
              "whitespace between JSON tokens, which the grammar allows.",
              decide_spaced),
        Claim("json-whitespace.request-option", "disable_any_whitespace in the request's structured_outputs leaves "
              "no whitespace between JSON tokens, so every answer closes.", decide_request_option),
    ),
    shares_server=True,
)
