"""The server-wide option that removes whitespace from constrained JSON: does every answer close?

The server is started with --structured-outputs-config '{"backend": "xgrammar", "disable_any_whitespace": true}';
the page's snippet asks for the same schema and prompt as json-whitespace, SAMPLES times, each with a
seed of its own.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if
from verify.jobs.structured_outputs.json_whitespace import DEFAULT, MAX_TOKENS, SAMPLES, SNIPPET, counts

SEEDS = tuple(range(SAMPLES))


def collect(ctx) -> dict:
    from openai import OpenAI

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    # The server may share its start with the bearer-token variant (verify/config/profiles.py): send its key.
    client = OpenAI(base_url=ctx.base_url, api_key=ctx.server.api_key, max_retries=0)
    # Seeded: the verdict is about these answers, and a run on the same release gives them again.
    answers = [dict(zip(("text", "finish_reason"), snippet.ask(client, DEFAULT, max_tokens=MAX_TOKENS, seed=seed)))
               for seed in SEEDS]
    return {"answers": capture.results("answers", [a for a in answers if a["text"]], samples=answers,
                                       constraint=snippet.WAYS[DEFAULT][1]["extra_body"]["structured_outputs"]),
            "max_tokens": MAX_TOKENS, "seeds": list(SEEDS)}


def decide_closes(d):
    c = counts(d["answers"])
    return verdict_if(c["all"] == SAMPLES and c["spaced"] == 0 and c["cut"] == 0 and c["fit"] == c["all"],
                      f"{c['spaced']} of {c['all']} answers (temperature 1.0, seeds {_seeds(d)}) hold whitespace "
                      f"between JSON tokens, {c['cut']} cut by max_tokens ({d['max_tokens']}), {c['fit']} of "
                      f"{c['all']} fit the schema")


def _seeds(d) -> str:
    seeds = d.get("seeds") or []
    return f"{seeds[0]} to {seeds[-1]}" if seeds else "none"


JOB = Job(
    id="json-compact",
    title="Compact JSON, set on the server",
    question="On a server started with disable_any_whitespace in --structured-outputs-config, does every answer "
             "close, with no whitespace between its JSON tokens?",
    pages=("structured-outputs.md",),
    collect=collect,
    claims=(
        Claim("json-compact.closes", "On a server started with disable_any_whitespace, every answer holds no "
              "whitespace between JSON tokens, closes before max_tokens and fits the schema.", decide_closes),
    ),
    variant="compact-json",
    shares_server=True,
)
