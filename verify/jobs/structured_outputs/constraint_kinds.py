"""Each way the OpenAI-compatible server accepts to constrain an answer: does every sample fit?

The page's snippet asks each way SAMPLES times at temperature 1.0, where an unconstrained small
model wanders most; the same prompts without the constraint are the control. The requests all go
out at once: no claim here judges timing. One more request
asks for the JSON schema with too few tokens, to see what a cut constrained answer looks like.
"""

from __future__ import annotations

from functools import partial

from verify.job import Claim, Job, verdict_if
from verify.jobs.structured_outputs._validate import SUM_GRAMMAR, fits, parses

SNIPPET = "structured-outputs/constrain.py"
SAMPLES = 5
# The control needs only to show that the prompts alone do not make answers fit.
CONTROL_SAMPLES = 2
# Room for an answer to end by itself; a JSON object with no schema may still run past it.
MAX_TOKENS = 120
# Too few tokens for the person schema's smallest answer ({"name": "..", "age": ..}).
CUT_MAX_TOKENS = 6
# No claim of this job judges timing: its requests all go out at once and the engine batches them
# (one at a time, they took most of the job's time; eight at a time, the unconstrained controls, the
# longest answers, ran last and nearly alone). The controls are sent first.


def _constraint(fields: dict) -> dict:
    """The constraint a way sends: response_format, or the structured_outputs fields."""
    return fields.get("response_format") or fields["extra_body"]["structured_outputs"]


def collect(ctx) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    from openai import OpenAI

    from verify.errors import VerifyError
    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    if snippet.SUM != SUM_GRAMMAR:
        raise VerifyError("the snippet's grammar changed: update SUM_GRAMMAR and SUM_AS_REGEX in _validate.py")
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)

    def constrained(way):
        return dict(zip(("text", "finish_reason"), snippet.ask(client, way, max_tokens=MAX_TOKENS)))

    def unconstrained(prompt):
        r = client.chat.completions.create(model="chat", messages=[{"role": "user", "content": prompt}],
                                           max_tokens=MAX_TOKENS, temperature=1.0)
        return {"text": r.choices[0].message.content, "finish_reason": r.choices[0].finish_reason}

    way = "response_format json_schema"
    with ThreadPoolExecutor(len(snippet.WAYS) * (SAMPLES + CONTROL_SAMPLES) + 1) as pool:
        control = {w: [pool.submit(unconstrained, prompt) for _ in range(CONTROL_SAMPLES)]
                   for w, (prompt, _) in snippet.WAYS.items()}
        asked = {w: [pool.submit(constrained, w) for _ in range(SAMPLES)] for w in snippet.WAYS}
        cut_asked = pool.submit(snippet.ask, client, way, temperature=0, max_tokens=CUT_MAX_TOKENS)
    ways, plain = {}, {}
    for w, (_, fields) in snippet.WAYS.items():
        answers = [f.result() for f in asked[w]]
        ways[w] = capture.results("answers", [a for a in answers if a["text"]], samples=answers,
                                  constraint=_constraint(fields))
        free = [f.result() for f in control[w]]
        plain[w] = capture.results("answers", [a for a in free if a["text"]], samples=free)
    text, finish = cut_asked.result()
    cut = capture.results("answers", [text] if text else [], samples=[{"text": text, "finish_reason": finish}],
                          constraint=_constraint(snippet.WAYS[way][1]), max_tokens=CUT_MAX_TOKENS)
    return {"ways": ways, "unconstrained": plain, "cut": cut}


def decide_way(way: str, d):
    """Every answer the model ended itself fits; an answer cut by max_tokens is the cut claim's subject."""
    w = d["ways"][way]
    ended = [s for s in w["samples"] if s["finish_reason"] == "stop"]
    ok = [fits(s["text"], w["constraint"]) for s in ended]
    because = (f"{sum(ok)} of the {len(ended)} answers that ended by themselves fit the constraint "
               f"({len(w['samples']) - len(ended)} of {len(w['samples'])} cut by max_tokens {MAX_TOKENS})")
    if len(w["samples"]) == SAMPLES and not ended:
        return verdict_if(None, "no answer ended by itself: " + because)
    return verdict_if(len(w["samples"]) == SAMPLES and all(ok), because)


def decide_unconstrained(d):
    fitting = {way: sum(fits(s["text"], d["ways"][way]["constraint"]) for s in c["samples"])
               for way, c in d["unconstrained"].items()}
    total = sum(len(c["samples"]) for c in d["unconstrained"].values())
    # The control shows the constraint does the work: without it, most answers do not fit.
    return verdict_if(total > 0 and sum(fitting.values()) < total / 2,
                      f"without the constraint, {sum(fitting.values())} of {total} answers to the same prompts fit "
                      "it (" + ", ".join(f"{way}: {n}" for way, n in fitting.items()) + ")")


def decide_cut(d):
    s = d["cut"]["samples"][0]
    ok = s["finish_reason"] == "length" and parses(s["text"]) is None
    return verdict_if(ok, f"max_tokens {d['cut']['max_tokens']}: finish_reason {s['finish_reason']!r}, "
                          f"text {s['text']!r}, " + ("which is not valid JSON" if parses(s["text"]) is None
                                                     else "which is valid JSON"))


def _way_claim(name: str, way: str, text: str) -> Claim:
    return Claim(f"constraint-kinds.{name}", text, partial(decide_way, way))


JOB = Job(
    id="constraint-kinds",
    title="Each way to constrain an answer",
    question="Does every sampled answer fit its constraint, for each way the server accepts one, and what does a "
             "constrained answer cut by max_tokens look like?",
    pages=("structured-outputs.md",),
    collect=collect,
    claims=(
        _way_claim("json-schema", "response_format json_schema", "With response_format of type json_schema, every "
                   "answer the model ends itself parses and validates against the schema."),
        _way_claim("json-object", "response_format json_object", "With response_format of type json_object, every "
                   "answer the model ends itself parses as a JSON object."),
        _way_claim("structured-json", "structured_outputs json", "With structured_outputs.json, every answer the "
                   "model ends itself parses and validates against the schema."),
        _way_claim("regex", "structured_outputs regex", "With structured_outputs.regex, every answer the model ends "
                   "itself matches the regular expression in full."),
        _way_claim("choice", "structured_outputs choice", "With structured_outputs.choice, every answer the model "
                   "ends itself is exactly one of the choices."),
        _way_claim("grammar", "structured_outputs grammar", "With structured_outputs.grammar, every answer the model "
                   "ends itself is a sentence of the grammar."),
        Claim("constraint-kinds.unconstrained-misses", "Without the constraint, most answers to the same prompts do "
              "not fit it.", decide_unconstrained),
        Claim("constraint-kinds.cut-is-invalid", "A constrained answer cut by max_tokens ends with finish_reason "
              "length and is not valid JSON.", decide_cut),
    ),
    shares_server=True,
)
