"""Model output is untrusted text: the server passes markup through as it is.

Structured output forces the model to write a line full of HTML and Markdown;
the stream shows the server sends it unchanged, so whatever displays it must
escape it. The page renders the captured stream, which the browser test checks
is shown as text.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if
from verify.measure.transcript import streamed_text

MARKUP = '<b>bold</b> <img src=x onerror="alert(1)"> **not bold** `code` &amp;'


def collect(ctx) -> dict:
    from verify.measure.sse import capture
    body = {"model": "chat", "messages": [{"role": "user", "content": "Write some HTML."}],
            "max_tokens": 60, "temperature": 0, "stream": True, "structured_outputs": {"choice": [MARKUP]}}
    return {"forced": MARKUP, "stream": capture(ctx.base_url + "/chat/completions", body)}


def streamed_text_of(d) -> str:
    return streamed_text(d["stream"]["lines"])


def decide(d):
    text = streamed_text_of(d)
    return verdict_if(text == d["forced"], f"the streamed text is {'exactly' if text == d['forced'] else 'not'} "
                                           f"the markup the model wrote ({len(text)} characters, no escaping)")


JOB = Job(
    id="untrusted-output",
    title="Markup in model output",
    question="Does the server escape or alter HTML and Markdown in model output, or pass it through unchanged?",
    pages=("streaming.md",),
    collect=collect,
    shares_server=True,  # reads only what the API answers
    claims=(Claim("untrusted-output.passed-through", "The server passes markup in model output through unchanged: "
                  "whatever displays it must escape it.", decide),),
)
