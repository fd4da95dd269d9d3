"""Tools offered to a server started without a tool-call parser: which tool_choice values it serves."""

from __future__ import annotations

from functools import partial

from verify.job import Claim, Job, verdict_if

SNIPPET = "structured-outputs/tools.py"
OMITTED = "tools, tool_choice left out"


def collect(ctx) -> dict:
    from verify.measure.request import send
    tools = ctx.snippet(SNIPPET)
    base = {"model": "chat", "messages": [{"role": "user", "content": tools.QUESTION}], "tools": tools.TOOLS,
            "max_tokens": 40, "temperature": 0}
    choices = {"named": tools.NAMED, "required": "required", "auto": "auto", "none": "none"}
    cases = {name: send("POST", ctx.base_url + "/chat/completions", json={**base, "tool_choice": choice})
             for name, choice in choices.items()}
    cases[OMITTED] = send("POST", ctx.base_url + "/chat/completions", json=base)
    return {"cases": cases, "tool_choice": choices}


def error_message(a: dict) -> str:
    return str(((a.get("body") or {}).get("error") or {}).get("message", ""))


def decide_refused(name: str, d, flags: tuple[str, ...] = ("--tool-call-parser",)):
    a = d["cases"][name]
    return verdict_if(a["status"] == 400 and all(f in error_message(a) for f in flags),
                      f"HTTP {a['status']}: {error_message(a) or 'no error message'}")


def decide_omitted(d):
    a, auto = d["cases"][OMITTED], d["cases"]["auto"]
    return verdict_if(a["status"] == 400 and a["status"] == auto["status"] and bool(error_message(a))
                      and error_message(a) == error_message(auto),
                      f"HTTP {a['status']}: {error_message(a) or 'no error message'}; with tool_choice auto: HTTP "
                      f"{auto['status']}, " + ("the same message" if error_message(a) == error_message(auto) else
                                               f"another message: {error_message(auto)}"))


def decide_none(d):
    a = d["cases"]["none"]
    m = ((a.get("body") or {}).get("choices") or [{}])[0].get("message") or {}
    return verdict_if(a["status"] == 200 and not m.get("tool_calls") and bool(m.get("content")),
                      f"HTTP {a['status']}; tool_calls {m.get('tool_calls')!r}; content {str(m.get('content'))[:120]!r}")


def _refused(name: str, case: str, text: str, flags: tuple[str, ...] = ("--tool-call-parser",)) -> Claim:
    return Claim(f"tool-choice-no-parser.{name}", text, partial(decide_refused, case, flags=flags))


JOB = Job(
    id="tool-choice-no-parser",
    title="Tools on a server without a tool-call parser",
    question="Which tool_choice values does a server started without --enable-auto-tool-choice and "
             "--tool-call-parser serve, and what do the others get?",
    pages=("structured-outputs.md",),
    collect=collect,
    claims=(
        _refused("auto-refused", "auto", "tool_choice auto is refused with HTTP 400, naming the flags it needs.",
                 flags=("--enable-auto-tool-choice", "--tool-call-parser")),
        Claim("tool-choice-no-parser.omitted-refused", "Tools sent without a tool_choice are refused the same way, "
              "with the same message: the server takes the missing tool_choice as auto.", decide_omitted),
        _refused("named-refused", "named", "A named tool_choice is refused with HTTP 400 too: it needs "
                 "--tool-call-parser."),
        _refused("required-refused", "required", "tool_choice required is refused with HTTP 400 too: it needs "
                 "--tool-call-parser."),
        Claim("tool-choice-no-parser.none-answers", "tool_choice none is served: the answer is text in content, "
              "with no tool calls.", decide_none),
    ),
    shares_server=True,
)
