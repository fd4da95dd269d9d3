"""The server-wide option that removes whitespace from constrained JSON: does every answer close?

The server is started with --structured-outputs-config '{"backend": "xgrammar", "disable_any_whitespace": true}';
the page's snippet asks for the same schema and prompt as json-whitespace, SAMPLES times.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if
from verify.jobs.structured_outputs.json_whitespace import DEFAULT, MAX_TOKENS, SAMPLES, SNIPPET, counts


def collect(ctx) -> dict:
    from openai import OpenAI

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    answers = [dict(zip(("text", "finish_reason"), snippet.ask(client, DEFAULT, max_tokens=MAX_TOKENS)))
               for _ in range(SAMPLES)]
    return {"answers": capture.results("answers", [a for a in answers if a["text"]], samples=answers,
                                       constraint=snippet.WAYS[DEFAULT][1]["extra_body"]["structured_outputs"]),
            "max_tokens": MAX_TOKENS}


def decide_closes(d):
    c = counts(d["answers"])
    return verdict_if(c["all"] == SAMPLES and c["spaced"] == 0 and c["cut"] == 0 and c["fit"] == c["all"],
                      f"{c['spaced']} of {c['all']} answers hold whitespace between JSON tokens, {c['cut']} cut by "
                      f"max_tokens ({d['max_tokens']}), {c['fit']} of {c['all']} fit the schema")


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
