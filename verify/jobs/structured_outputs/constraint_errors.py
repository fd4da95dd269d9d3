"""What a constraint the server cannot use gets back, and whether the server serves on afterwards."""

from __future__ import annotations

from functools import partial

from verify.job import Claim, Job, verdict_if

BASE = {"model": "chat", "messages": [{"role": "user", "content": "Answer."}], "max_tokens": 20}
CASES = {
    "JSON schema with an unknown type": {"response_format": {"type": "json_schema", "json_schema": {
        "name": "broken", "schema": {"type": "object", "properties": {"a": {"type": "nonsense"}}}}}},
    "regex that does not compile": {"structured_outputs": {"regex": "(unclosed"}},
    "grammar naming an undefined rule": {"structured_outputs": {"grammar": 'root ::= "a" missing'}},
    "two constraints at once": {"structured_outputs": {"regex": "[a-z]+", "choice": ["yes", "no"]}},
}
AFTER = "a plain request afterwards"
# What a broken constraint may get back as an observation: a client error, or the generic server
# error some releases answer with (any other 5xx, or no answer, is a failed capture).
REFUSALS = [*range(400, 500), 500]


def collect(ctx) -> dict:
    import httpx

    from verify.measure import capture
    url = ctx.base_url + "/chat/completions"
    cases = {}
    with httpx.Client(timeout=120) as client:
        for name, fields in CASES.items():
            r = client.post(url, json={**BASE, **fields})
            cases[name] = {"sent": fields, "answer": capture.response(r, "probe", expect_status=REFUSALS,
                                                                      body=capture.body(r))}
        # Sent last: a constraint that broke the engine would show here.
        r = client.post(url, json=BASE)
        cases[AFTER] = {"sent": {}, "answer": capture.response(r, "probe", body=capture.body(r))}
    return {"cases": cases}


def _answer(d, name) -> dict:
    return d["cases"][name]["answer"]


def error_message(answer: dict) -> str:
    return str(((answer.get("body") or {}).get("error") or {}).get("message", ""))


def decide_refused(name: str, d):
    a = _answer(d, name)
    return verdict_if(a["status"] == 400 and bool(error_message(a)),
                      f"HTTP {a['status']}: {error_message(a)[:300] or 'no error message'}")


def decide_serves_on(d):
    statuses = [_answer(d, n)["status"] for n in CASES]
    a = _answer(d, AFTER)
    text = ((a.get("body") or {}).get("choices") or [{}])[0].get("message", {}).get("content")
    return verdict_if(len(statuses) == len(CASES) and a["status"] == 200 and bool(text),
                      f"the broken constraints got HTTP {', '.join(map(str, statuses))}; the plain request after "
                      f"them: HTTP {a['status']}, {text!r}")


def _refused_claim(name: str, case: str, text: str) -> Claim:
    return Claim(f"constraint-errors.{name}", text, partial(decide_refused, case))


JOB = Job(
    id="constraint-errors",
    title="Constraints the server cannot use",
    question="What do an invalid JSON schema, a regex that does not compile, a broken grammar and two constraints "
             "at once get back, and does the server serve on afterwards?",
    pages=("structured-outputs.md",),
    collect=collect,
    claims=(
        _refused_claim("bad-schema", "JSON schema with an unknown type",
                       "A JSON schema with an unknown type is refused with HTTP 400 and a message."),
        _refused_claim("bad-regex", "regex that does not compile",
                       "A regular expression that does not compile is refused with HTTP 400 and a message."),
        _refused_claim("bad-grammar", "grammar naming an undefined rule",
                       "A grammar that names an undefined rule is refused with HTTP 400 and a message."),
        _refused_claim("two-at-once", "two constraints at once",
                       "Two constraints in one request (a regex and a choice) are refused with HTTP 400."),
        Claim("constraint-errors.serves-on", "After them, the server answers the next request as usual.",
              decide_serves_on),
    ),
    shares_server=True,
)
