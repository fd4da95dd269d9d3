"""How the evidence of the structured outputs article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

import json
import re

from verify.jobs.structured_outputs import (constraint_errors, grammar_compile, legacy_fields, tool_calls,
                                            tool_choice_no_parser)
from verify.jobs.structured_outputs._validate import fits, whitespace_between_tokens
from verify.site import html
from verify.site.views import View


# constraint-errors
def constraint_errors_table(record):
    rows = []
    for name, case in record["data"]["cases"].items():
        a = case["answer"]
        rows.append([name, json.dumps(case["sent"]) if case["sent"] else "(no constraint)", a["status"],
                     constraint_errors.error_message(a)[:200] or "(an answer)"])
    return html.table(["request", "fields sent", "HTTP status", "error.message"], rows)


# constraint-kinds
def constraint_kinds_samples(record):
    d = record["data"]
    rows = []
    for way, w in d["ways"].items():
        for s in w["samples"]:
            rows.append([way, s["text"], s["finish_reason"], "yes" if fits(s["text"], w["constraint"]) else "no"])
    return html.table(["way", "answer (temperature 1.0)", "finish_reason", "fits"], rows)


def constraint_kinds_control(record):
    d = record["data"]
    rows = []
    for way, c in d["unconstrained"].items():
        s = c["samples"][0]
        n = sum(fits(x["text"], d["ways"][way]["constraint"]) for x in c["samples"])
        rows.append([way, s["text"], f"{n} of {len(c['samples'])}"])
    return html.table(["same prompt, no constraint", "first answer", "answers that would fit"], rows)


def constraint_kinds_cut(record):
    c = record["data"]["cut"]
    s = c["samples"][0]
    return html.table(["request", "answer", "finish_reason"],
                      [[f"response_format json_schema, max_tokens {c['max_tokens']}", s["text"], s["finish_reason"]]])


# grammar-compile
def grammar_compile_table(record):
    d = record["data"]
    rows = []
    for n, p in enumerate(d["pairs"]):
        first, second = grammar_compile.first_token_s(p["first"]), grammar_compile.first_token_s(p["second"])
        rows.append(["the server's first constrained request" if n == 0 else f"new schema {n}",
                     html.ms(first), html.ms(second), f"{(first - second) * 1000:+.0f} ms"])
    return html.table(["schema", "first request: time to first token", "next request, same schema",
                       "extra wait"], rows)


# json-whitespace and json-compact: JSON answers and the whitespace between their tokens.
def _json_answers_table(ways: dict) -> str:
    rows = []
    for way, w in ways.items():
        for s in w["samples"]:
            rows.append([way, s["text"], s["finish_reason"], whitespace_between_tokens(s["text"])])
    return html.table(["request", "answer", "finish_reason", "whitespace between JSON tokens (characters)"], rows)


def json_whitespace_table(record):
    return _json_answers_table(record["data"]["ways"])


def json_compact_table(record):
    return _json_answers_table({"structured_outputs json, compact server": record["data"]["answers"]})


# legacy-fields
def _legacy_fields_logged_constraint(log: dict) -> str:
    m = re.search(r"structured_outputs=(None|StructuredOutputsParams\([^)]{0,60})", legacy_fields.logged_params(log))
    return m.group(1) + ("...)" if m and m.group(1) != "None" else "") if m else "(not found)"


def legacy_fields_table(record):
    rows = []
    for name, case in record["data"]["cases"].items():
        for answer, log in zip(case["answers"]["samples"], case["logs"]):
            rows.append([name, answer["text"], _legacy_fields_logged_constraint(log)])
    return html.table(["field sent", "answer (temperature 1.0)", "structured_outputs, as the server logged it"], rows)


def legacy_fields_log(record):
    lines = [line for case in record["data"]["cases"].values() for line in case["logs"][0]["lines"]
             if "WARNING" in line or "ignored" in line]
    return html.pre(lines or ["(no warning logged)"], "the server's log: warnings about the fields")


# tool-calls
def tool_calls_answers(record):
    d = record["data"]
    rows = []
    for name in ("named", "required", "auto"):
        for m in d[name]["samples"]:
            calls = "; ".join(f"{c['name']}({c['arguments']})" for c in m["tool_calls"]) or "none"
            rows.append([name if name != "named" else "named (get_weather)", calls, m["content"] or "",
                         m["finish_reason"]])
    m = d["cut"]["samples"][0]
    rows.append([f"required, max_tokens {d['cut']['max_tokens']}", "; ".join(c["name"] for c in m["tool_calls"]) or "none",
                 m["content"] or "", m["finish_reason"]])
    return html.table(["tool_choice", "tool_calls (name and arguments)", "content", "finish_reason"], rows)


def tool_calls_stream(record):
    return html.timed_transcript(record["data"]["stream"]["lines"],
                                 "a streamed named call (temperature 0): each line with its arrival time", limit=40)


def tool_calls_deltas(record):
    rows = [[i, json.dumps(tc)] for i, tc in enumerate(tool_calls.tool_deltas(record["data"]))]
    return html.table(["delta", "choices[0].delta.tool_calls[0]"], rows)


# tool-choice-no-parser
def tool_choice_no_parser_table(record):
    d = record["data"]
    rows = []
    for name, a in d["cases"].items():
        choice = json.dumps(d["tool_choice"][name]) if name in d["tool_choice"] else "(left out)"
        content = (((a.get("body") or {}).get("choices") or [{}])[0].get("message") or {}).get("content") or ""
        rows.append([choice, a["status"], tool_choice_no_parser.error_message(a) or content[:160]])
    return html.table(["tool_choice", "HTTP status", "error.message, or the answer's content"], rows)


VIEWS = {
    "constraint-errors": View(fragments={"table": constraint_errors_table}),
    "constraint-kinds": View(fragments={"samples": constraint_kinds_samples, "control": constraint_kinds_control,
                                        "cut": constraint_kinds_cut}),
    "grammar-compile": View(fragments={"table": grammar_compile_table}),
    "json-compact": View(fragments={"table": json_compact_table}),
    "json-whitespace": View(fragments={"table": json_whitespace_table}),
    "legacy-fields": View(fragments={"table": legacy_fields_table, "log": legacy_fields_log}),
    "tool-calls": View(fragments={"answers": tool_calls_answers, "stream": tool_calls_stream,
                                  "deltas": tool_calls_deltas}),
    "tool-choice-no-parser": View(fragments={"table": tool_choice_no_parser_table}),
}
