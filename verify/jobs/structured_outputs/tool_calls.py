"""Tool calls on a server started with a tool-call parser: named, required and auto tool_choice.

The model is a 135M one: these rules settle whether a call is well formed (it parses and matches
the tool's schema) and where it lands, never whether calling that tool was a good idea.

The seeded samples of the three tool_choice values are sent at once (every request of that batch
seeded: the older CPU sampler drops all seeds of a batch that holds an unseeded request); then the
greedy ones, the cut call and the named call streamed twice, at once. No claim is about the order.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if
from verify.jobs.structured_outputs._validate import parses, schema_errors
from verify.measure.transcript import chunks

SNIPPET = "structured-outputs/tools.py"
STREAM_SNIPPET = "structured-outputs/stream_tool_call.py"
SAMPLES = 4
# Too few tokens for a whole call: what a cut forced call comes back as.
CUT_MAX_TOKENS = 8


def _message(m, finish) -> dict:
    return {"content": m.content, "finish_reason": finish,
            "tool_calls": [{"id": c.id, "type": c.type, "name": c.function.name, "arguments": c.function.arguments}
                           for c in m.tool_calls or []]}


def collect(ctx) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import httpx
    from openai import OpenAI

    from verify.measure import capture, sse
    tools = ctx.snippet(SNIPPET)
    streaming = ctx.snippet(STREAM_SNIPPET)
    # A connection of its own for each request: a pooled one left idle while the batch's longest answer runs
    # can be closed by the server's keep-alive timeout just as the next request takes it ("Server disconnected
    # without sending a response").
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0,
                    http_client=httpx.Client(timeout=120, limits=httpx.Limits(max_keepalive_connections=0)))
    out = {"tools": {t["function"]["name"]: t["function"]["parameters"] for t in tools.TOOLS}}
    choices = (("named", tools.NAMED), ("required", "required"), ("auto", "auto"))
    # Seeded: each verdict is about these answers, and a run on the same release gives them again.
    # Independent samples, all seeded, sent at once; no unseeded or greedy request joins their batch.
    with ThreadPoolExecutor(len(choices) * SAMPLES) as pool:
        asked = {name: [pool.submit(tools.call, client, choice, seed=seed) for seed in range(SAMPLES)]
                 for name, choice in choices}
    for name, choice in choices:
        answers = [_message(*f.result()) for f in asked[name]]
        out[name] = capture.results("answers", answers, samples=answers, tool_choice=choice, seeds=list(range(SAMPLES)))

    def cut():
        return client.chat.completions.create(
            model="chat", messages=[{"role": "user", "content": tools.QUESTION}], tools=tools.TOOLS,
            tool_choice="required", max_tokens=CUT_MAX_TOKENS, temperature=0)

    # The greedy requests at once: the cut call, and the streamed named call twice: raw, as it came
    # over the wire, and through the page's snippet.
    with ThreadPoolExecutor(3) as pool:
        cut_asked = pool.submit(cut)
        raw = pool.submit(sse.capture, ctx.base_url + "/chat/completions", {
            "model": "chat", "messages": [{"role": "user", "content": tools.QUESTION}], "tools": tools.TOOLS,
            "tool_choice": tools.NAMED, "max_tokens": 80, "temperature": 0, "stream": True})
        through_snippet = pool.submit(streaming.stream_call, client, tools.TOOLS, tools.NAMED, tools.QUESTION)
    c = cut_asked.result()
    cut_answer = [_message(c.choices[0].message, c.choices[0].finish_reason)]
    out["cut"] = capture.results("answers", cut_answer, samples=cut_answer, max_tokens=CUT_MAX_TOKENS)
    out["stream"] = raw.result()
    deltas, calls = through_snippet.result()
    out["snippet_stream"] = capture.results("tool calls", calls, deltas=len(deltas), calls=calls)
    return out


def _valid_call(d, call: dict) -> bool:
    value = parses(call["arguments"])
    return call["name"] in d["tools"] and isinstance(value, dict) and not schema_errors(value, d["tools"][call["name"]])


def _seeds(answers: dict) -> str:
    seeds = answers.get("seeds") or []
    return f"seeds {seeds[0]} to {seeds[-1]}" if seeds else "unseeded"


def decide_named(d):
    s = d["named"]["samples"]
    ok = [len(m["tool_calls"]) == 1 and m["tool_calls"][0]["name"] == "get_weather" and _valid_call(d, m["tool_calls"][0])
          for m in s]
    return verdict_if(len(s) == SAMPLES and all(ok),
                      f"{sum(ok)} of {len(s)} answers (temperature 1.0, {_seeds(d['named'])}) hold one call of get_weather whose arguments "
                      f"parse and match its schema; arguments: " + "; ".join(
                          m["tool_calls"][0]["arguments"] if m["tool_calls"] else "none" for m in s))


def decide_named_finish(d):
    reasons = [m["finish_reason"] for m in d["named"]["samples"] if m["tool_calls"]]
    return verdict_if(bool(reasons) and all(r == "stop" for r in reasons),
                      f"finish_reason of the answers that hold a named call: {', '.join(reasons) or 'none'}")


def decide_required(d):
    ended = [m for m in d["required"]["samples"] if m["finish_reason"] != "length"]
    ok = [bool(m["tool_calls"]) and all(_valid_call(d, c) for c in m["tool_calls"]) and m["finish_reason"] == "tool_calls"
          for m in ended]
    return verdict_if(bool(ended) and all(ok),
                      f"{sum(ok)} of {len(ended)} answers that ended by themselves hold one call or more, each of an "
                      f"offered tool with arguments that match its schema, and end with finish_reason tool_calls "
                      f"({len(d['required']['samples']) - len(ended)} of {len(d['required']['samples'])} cut by "
                      f"max_tokens); calls per answer: {', '.join(str(len(m['tool_calls'])) for m in ended)}")


def decide_cut(d):
    m = d["cut"]["samples"][0]
    return verdict_if(m["finish_reason"] == "length" and not m["tool_calls"] and not m["content"],
                      f"max_tokens {d['cut']['max_tokens']}: finish_reason {m['finish_reason']!r}, "
                      f"{len(m['tool_calls'])} tool calls, content {m['content']!r}")


def decide_auto_text(d):
    s = d["auto"]["samples"]
    not_calls = [m for m in s if not m["tool_calls"]]
    in_content = [m for m in not_calls if m["content"]]
    return verdict_if(len(s) == SAMPLES and bool(not_calls) and len(in_content) == len(not_calls),
                      f"{len(not_calls)} of {len(s)} answers with tool_choice auto were not read as calls; "
                      f"{len(in_content)} of them carry the model's text in content; first: "
                      f"{((not_calls or [{}])[0].get('content') or '')[:120]!r}")


def tool_deltas(d) -> list[dict]:
    return [tc for c in chunks(d["stream"]["lines"]) for ch in c.get("choices", [])
            for tc in (ch.get("delta") or {}).get("tool_calls") or []]


def decide_stream_name_first(d):
    deltas = tool_deltas(d)
    first, rest = (deltas[0], deltas[1:]) if deltas else ({}, [])
    fn = first.get("function") or {}
    fragments = [(x.get("function") or {}).get("arguments") for x in rest]
    ok = (bool(first.get("id")) and fn.get("name") == "get_weather"
          and all(not x.get("id") and not (x.get("function") or {}).get("name") for x in rest)
          and all(isinstance(f, str) for f in fragments) and sum(bool(f) for f in fragments) >= 2
          and all(x.get("index") == 0 for x in deltas))
    return verdict_if(ok, f"{len(deltas)} tool-call deltas; the first carries id {first.get('id')!r} and name "
                          f"{fn.get('name')!r}; {sum(bool(x.get('id') or (x.get('function') or {}).get('name')) for x in rest)} "
                          f"of the {len(rest)} after it carry an id or a name")


def decide_stream_reassembles(d):
    deltas = tool_deltas(d)
    arguments = "".join((x.get("function") or {}).get("arguments") or "" for x in deltas)
    finish = [ch.get("finish_reason") for c in chunks(d["stream"]["lines"]) for ch in c.get("choices", [])
              if ch.get("finish_reason")]
    snippet_calls = d["snippet_stream"]["calls"]
    ok = (_valid_call(d, {"name": "get_weather", "arguments": arguments}) and len(snippet_calls) == 1
          and snippet_calls[0]["arguments"] == arguments)
    return verdict_if(ok, f"the fragments joined: {arguments!r}; the snippet's reassembly: "
                          f"{snippet_calls[0]['arguments'] if snippet_calls else None!r}; finish_reason {finish}")


JOB = Job(
    id="tool-calls",
    title="Tool calls with a tool-call parser",
    question="With named, required and auto tool_choice on a server started with a tool-call parser, is each call "
             "well formed, how does it end, and what does a streamed call look like?",
    pages=("structured-outputs.md",),
    collect=collect,
    claims=(
        Claim("tool-calls.named-valid", "With a named tool_choice, every answer holds one call of that tool whose "
              "arguments parse and match its schema.", decide_named),
        Claim("tool-calls.named-finish-stop", "A named tool call ends with finish_reason stop, not tool_calls.",
              decide_named_finish),
        Claim("tool-calls.required-valid", "With tool_choice required, every answer that ends by itself holds at least "
              "one call of an offered tool, with arguments that match its schema, and ends with finish_reason "
              "tool_calls.", decide_required),
        Claim("tool-calls.cut-loses-call", "A required call cut by max_tokens comes back with no tool call and empty "
              "content.", decide_cut),
        Claim("tool-calls.auto-text", "With tool_choice auto, an answer the parser does not read as a call comes back "
              "as text in content, with no tool calls.", decide_auto_text),
        Claim("tool-calls.stream-name-first", "A streamed call sends its id and name once, in its first delta; every "
              "later delta carries only a fragment of the arguments.", decide_stream_name_first),
        Claim("tool-calls.stream-reassembles", "Joined in order, the streamed fragments are the arguments: they parse "
              "and match the tool's schema.", decide_stream_reassembles),
    ),
    variant="tool-parser",
    shares_server=True,
)
