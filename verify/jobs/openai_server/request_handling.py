"""Unknown fields, context overflow, options that need server flags, and the shape of errors."""

from __future__ import annotations

import re

from verify.job import Claim, Job, verdict_if

OPENAI_ERROR_KEYS = {"message", "type", "param", "code"}
BASE = {"model": "chat", "messages": [{"role": "user", "content": "Name a colour."}], "max_tokens": 10}
CASES = {
    "unknown field": {"foo": 1},
    "legacy functions": {"functions": [{"name": "f", "parameters": {"type": "object"}}]},
    "priority, default scheduling": {"priority": 5},
    "tool_choice auto, no tool flags": {"tools": [{"type": "function", "function": {"name": "f", "parameters":
                                                   {"type": "object"}}}], "tool_choice": "auto"},
    "prompt + max_tokens over the context": {"messages": [{"role": "user", "content": "word " * 1900}],
                                             "max_tokens": 500, "ignore_eos": True, "temperature": 0},
    "unknown model": {"model": "no-such-model"},
    "seed not a number": {"seed": "x"},
    "temperature 3": {"temperature": 3},
}


def collect(ctx) -> dict:
    from verify.measure.request import send
    mark = ctx.server.log_size()
    out = {name: send("POST", ctx.base_url + "/chat/completions", json={**BASE, **params})
           for name, params in CASES.items()}
    log_read, log = ctx.server.log_capture(mark) if ctx.server.managed else (None, [])
    return {"cases": out, "managed": ctx.server.managed, **({"log_read": log_read} if log_read else {}),
            "log_mentions": [line for line in log if re.search(r"\bfoo\b|functions|but ignored|unrecognized|not supported",
                                                                line, re.I)]}


def case_of(d, name) -> dict:
    return d["cases"][name]


def error_of(d, name) -> dict:
    return (case_of(d, name).get("body") or {}).get("error") or {}


def decide_unknown(d):
    ok = case_of(d, "unknown field")["status"] == 200 and case_of(d, "legacy functions")["status"] == 200
    logged = "" if not d["managed"] else (f"; log lines mentioning them: {len(d['log_mentions'])}")
    return verdict_if(ok and (not d["managed"] or not d["log_mentions"]),
                      f"unknown field: HTTP {case_of(d, 'unknown field')['status']}; legacy 'functions': HTTP "
                      f"{case_of(d, 'legacy functions')['status']}{logged}")


def decide_priority(d):
    c = case_of(d, "priority, default scheduling")
    return verdict_if(c["status"] == 200, f"priority=5 on a server with the default (fcfs) policy: HTTP {c['status']}")


def decide_tools(d):
    c = case_of(d, "tool_choice auto, no tool flags")
    return verdict_if(c["status"] == 400,
                      f"HTTP {c['status']}: {error_of(d, 'tool_choice auto, no tool flags').get('message', '')}")


def decide_overflow(d):
    c = case_of(d, "prompt + max_tokens over the context")
    body = c.get("body") or {}
    usage = body.get("usage") or {}
    ok = c["status"] == 200 and usage.get("total_tokens") == 2048 and body["choices"][0]["finish_reason"] == "length"
    return verdict_if(ok, f"prompt {usage.get('prompt_tokens')} tokens with max_tokens 500 (context 2048): HTTP "
                          f"{c['status']}, {usage.get('completion_tokens')} tokens generated, finish_reason "
                          f"{(body.get('choices') or [{}])[0].get('finish_reason')}")


def decide_shape(d):
    errors = {n: error_of(d, n)
              for n in ("unknown model", "seed not a number", "temperature 3", "tool_choice auto, no tool flags")}
    ok = all(set(e) == OPENAI_ERROR_KEYS for e in errors.values())
    return verdict_if(ok, "error objects: " + "; ".join(f"{n}: HTTP {case_of(d, n)['status']}, keys {sorted(e)}"
                                                        for n, e in errors.items()))


def decide_types(d):
    types = {n: error_of(d, n).get("type") for n in ("unknown model", "seed not a number", "temperature 3")}
    # Every request must have come back with an error type at all: no error object decides nothing.
    if not all(isinstance(t, str) and t for t in types.values()):
        return verdict_if(None, "error.type missing: " + "; ".join(f"{n}: {t!r}" for n, t in types.items()))
    ok = not any(t in ("invalid_request_error", "not_found_error") for t in types.values())
    return verdict_if(ok, "error.type: " + "; ".join(f"{n}: {t!r}" for n, t in types.items()) +
                      " (OpenAI's own API uses 'invalid_request_error')")


JOB = Job(
    id="request-handling",
    title="What the server accepts, adjusts and refuses",
    question="Are unknown or legacy fields rejected or ignored? What happens when prompt plus max_tokens exceed the "
             "context? What do options that need server flags get? What shape do errors have?",
    pages=("openai-server.md",),
    collect=collect,
    claims=(
        Claim("request-handling.unknown-fields-ignored", "Unknown fields, and the legacy 'functions' field, are "
              "accepted and ignored without a word, in the response or in the log.", decide_unknown),
        Claim("request-handling.priority-ignored", "A request's priority is accepted by a server that does not "
              "schedule by priority.", decide_priority),
        Claim("request-handling.tool-choice-needs-flags", "tool_choice 'auto' is refused with HTTP 400 unless the "
              "server was started with its tool-calling flags.", decide_tools),
        Claim("request-handling.max-tokens-shrunk", "When prompt plus max_tokens exceed the context, the server "
              "generates only what fits and ends with finish_reason length, instead of refusing.", decide_overflow),
        Claim("request-handling.openai-error-shape", "Errors have OpenAI's shape: an error object with message, type, "
              "param and code.", decide_shape),
        Claim("request-handling.error-types-differ", "The error types are not OpenAI's: a client that matches on "
              "error.type == 'invalid_request_error' never matches.", decide_types),
    ),
)
