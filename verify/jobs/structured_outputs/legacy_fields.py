"""The guided_* request fields of older releases, sent to this one: honoured, refused, or ignored?

Each request runs alone, with the server's log read around it: the request log line shows the
sampling parameters the server really used, so whether a constraint reached the engine is read
there, not guessed from the answer. The new field is the control.
"""

from __future__ import annotations

import re

from verify.job import Claim, Job, verdict_if
from verify.jobs.structured_outputs._validate import fits

SNIPPET = "structured-outputs/legacy_fields.py"
KINDS = {"guided_json": "json", "guided_regex": "regex", "guided_choice": "choice", "guided_grammar": "grammar"}
NEW = "structured_outputs choice"
SAMPLES = 2


def collect(ctx) -> dict:
    from openai import OpenAI

    from verify.measure import capture
    legacy = ctx.snippet(SNIPPET)
    kinds = ctx.snippet("structured-outputs/constrain.py")
    values = {"json": kinds.PERSON, "regex": kinds.DATE, "choice": kinds.COLOURS, "grammar": kinds.SUM}
    cases = {old: {old: values[kind]} for old, kind in KINDS.items()}
    cases["guided_choice"] = legacy.OLD  # the page's own pair
    cases[NEW] = legacy.NEW
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    out = {}
    for name, fields in cases.items():
        answers, logs = [], []
        for _ in range(SAMPLES):
            mark = ctx.server.log_size()
            answers.append({"text": legacy.colour(client, fields)})
            read, lines = ctx.server.log_capture(mark)
            logs.append({"read": read, "lines": [line for line in lines if re.search(
                r"Received request .*params:|guided|ignored", line)]})
        out[name] = {"fields": fields, "answers": capture.results("answers", [a for a in answers if a["text"]],
                                                                  samples=answers), "logs": logs}
    return {"cases": out}


def logged_params(log: dict) -> str:
    """The sampling parameters the server logged for the request ("" when no such line was read)."""
    return next((line for line in log["lines"] if "Received request" in line), "")


def _constrained(log: dict) -> bool:
    return "structured_outputs=StructuredOutputsParams(" in logged_params(log)


def _asked(name: str, case: dict) -> dict:
    """The constraint a case's field asked for, in the new field's words."""
    return case["fields"]["structured_outputs"] if name == NEW else {KINDS[name]: case["fields"][name]}


def decide_not_constrained(d):
    old = {n: c for n, c in d["cases"].items() if n in KINDS}
    if not all(logged_params(log) for c in d["cases"].values() for log in c["logs"]):
        # Without the request's logged parameters, nothing says whether a constraint reached the engine.
        return verdict_if(None, "a request's sampling parameters were not found in the server's log")
    unconstrained = [n for n, c in old.items() if len(c["logs"]) == SAMPLES and not any(map(_constrained, c["logs"]))]
    control = all(map(_constrained, d["cases"][NEW]["logs"]))
    return verdict_if(len(old) == len(KINDS) and len(unconstrained) == len(old) and control,
                      f"every request answered (the client raises on an error status); sampling parameters logged without a constraint for "
                      f"{len(unconstrained)} of {len(old)} old fields ({', '.join(unconstrained) or 'none'}); "
                      f"with {NEW}: " + ("constrained" if control else "not constrained either"))


def decide_answers_miss(d):
    counts = {n: (sum(fits(a["text"], _asked(n, c)) for a in c["answers"]["samples"]), len(c["answers"]["samples"]))
              for n, c in d["cases"].items()}
    old = [counts[n] for n in KINDS]
    fit, total = sum(f for f, _ in old), sum(t for _, t in old)
    new_fit, new_total = counts[NEW]
    return verdict_if(total > 0 and fit < total / 2 and new_fit == new_total,
                      f"{fit} of {total} answers fit what the old fields asked for (" +
                      ", ".join(f"{n}: {counts[n][0]} of {counts[n][1]}" for n in KINDS) +
                      f"); with {NEW}: {new_fit} of {new_total}")


def decide_warned(d):
    # The server warns once per process and field, so the first request of each field is the one to read.
    warned = [n for n in KINDS if any(n in line and "ignored" in line and "WARNING" in line
                                      for line in d["cases"][n]["logs"][0]["lines"])]
    return verdict_if(len(warned) == len(KINDS),
                      f"a WARNING naming the ignored field logged for {len(warned)} of {len(KINDS)} old fields"
                      + (f" ({', '.join(warned)})" if warned else ""))


JOB = Job(
    id="legacy-fields",
    title="The guided_* fields of older releases",
    question="Are guided_json, guided_regex, guided_choice and guided_grammar honoured, refused, or ignored, and "
             "does the server say so?",
    pages=("structured-outputs.md",),
    collect=collect,
    claims=(
        Claim("legacy-fields.ignored", "A request with guided_json, guided_regex, guided_choice or guided_grammar "
              "is answered, not refused, and the server runs it without a constraint.", decide_not_constrained),
        Claim("legacy-fields.answers-miss", "Most answers to those requests do not fit what the old field asked for; "
              "with structured_outputs, every one does.", decide_answers_miss),
        Claim("legacy-fields.warned", "The server logs a warning naming each ignored field.", decide_warned),
    ),
)
