"""Loading and unloading an adapter while the server runs, through vLLM's own endpoints.

On the lora variant (VLLM_ALLOW_RUNTIME_LORA_UPDATING=True in the server's environment): the
folder of attn-a, already served from --lora-modules, is loaded again under a new name; the copy
is asked the first prompt and compared with attn-a; it is loaded a second time under the same
name, unloaded, asked again, and unloaded again. A folder that does not exist and an adapter of
rank 32 (the server allows 16) are loaded too. Folders are recorded as `<adapters>/<name>-<key>`.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if
from verify.jobs.lora._answers import SNIPPET as ASK

SNIPPET = "lora/runtime.py"
COPY = "attn-a-again"
MISSING = "/nonexistent/adapter"
# A refusal the server answers with HTTP 500 (the worker's error, passed on): expected, beside the
# client errors, for that load alone, so its message is read instead of the run calling the capture
# failed; any other 5xx (a server that is down behind a proxy, say) still fails it.
REFUSAL_5XX = [500]


def _redacted(value):
    """The recorded steps with the adapters' cache folder written as `<adapters>` (it varies by machine)."""
    import json

    from verify.config.adapters import ADAPTERS_ROOT_PLACEHOLDER
    from verify.live.adapters import adapters_root
    return json.loads(json.dumps(value).replace(str(adapters_root()), ADAPTERS_ROOT_PLACEHOLDER))


def _recorded(r, sent: dict, expect=None) -> dict:
    """One answer of the runtime endpoints (a plain-text 200, or a JSON error) and what was sent;
    `expect`: the statuses that are observations (the client errors unless given)."""
    from verify.measure import capture
    from verify.measure.request import CLIENT_ERRORS  # imported here: `verify list` runs on the standard library
    return capture.answer(r, "request", expect_status=CLIENT_ERRORS if expect is None else expect, sent=sent,
                          body=capture.body(r), body_text=r.text[:2000])


def collect(ctx) -> dict:
    from openai import OpenAI

    from verify.live.adapters import prepare_adapters
    from verify.measure import capture
    from verify.measure.request import CLIENT_ERRORS, send
    runtime, ask = ctx.snippet(SNIPPET), ctx.snippet(ASK)
    runtime.SERVER = ctx.server.url  # what the snippet reads from $SERVER
    folders = prepare_adapters(("attn-a", "rank-32"), progress=lambda m: None)
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    prompt = ask.PROMPTS[0]

    def load(name, path, expect=None):
        return _recorded(runtime.load(name, str(path)), {"lora_name": name, "lora_path": str(path)}, expect)

    def unload(name):
        return _recorded(runtime.unload(name), {"lora_name": name})

    def models():
        listed = ask.served(client)
        return capture.results("models", list(listed), parents=listed)

    def chat(model):
        return send("POST", ctx.base_url + "/chat/completions", json={
            "model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0, "max_tokens": 24})

    steps = {}
    steps["load"] = load(COPY, folders["attn-a"])
    steps["models_after_load"] = models()
    steps["copy_answer"] = chat(COPY)
    steps["static_answer"] = chat("attn-a")
    steps["load_again"] = load(COPY, folders["attn-a"])
    steps["unload"] = unload(COPY)
    steps["models_after_unload"] = models()
    steps["unloaded_answer"] = chat(COPY)
    steps["unload_again"] = unload(COPY)
    steps["load_missing"] = load("missing", MISSING)
    steps["load_rank_32"] = load("rank-32", folders["rank-32"], expect=[*CLIENT_ERRORS, *REFUSAL_5XX])
    steps["models_at_end"] = models()
    return {"steps": _redacted(steps), "copy": COPY, "prompt": prompt}


def error_message(a: dict) -> str:
    body = a.get("body")
    if isinstance(body, dict):
        return str((body.get("error") or {}).get("message", body))
    return str(a.get("body_text", ""))


def answer_text(a: dict) -> str | None:
    body = a.get("body") or {}
    try:
        return body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None


def _said(a: dict) -> str:
    return (f"HTTP {a['status']}: {error_message(a)!r}" if a.get("status") != 200
            else f"HTTP 200: {(a.get('body_text') or error_message(a))!r}")


def decide_load(d):
    s = d["steps"]
    listed = s["models_after_load"]["parents"]
    return verdict_if(s["load"]["status"] == 200 and listed.get(d["copy"]) is not None,
                      f"load: {_said(s['load'])}; then /v1/models lists {', '.join(listed)}")


def decide_same_as_static(d):
    s = d["steps"]
    copy, static = answer_text(s["copy_answer"]), answer_text(s["static_answer"])
    return verdict_if(copy is not None and copy == static,
                      f"the copy loaded at run time answered {copy!r}; attn-a from --lora-modules answered {static!r}")


def decide_load_twice(d):
    a = d["steps"]["load_again"]
    return verdict_if(a["status"] == 400 and "already" in error_message(a), f"a second load under the same name: {_said(a)}")


def decide_unload(d):
    s = d["steps"]
    listed = s["models_after_unload"]["parents"]
    return verdict_if(s["unload"]["status"] == 200 and d["copy"] not in listed,
                      f"unload: {_said(s['unload'])}; then /v1/models lists {', '.join(listed)}")


def decide_unloaded_404(d):
    s = d["steps"]
    asked, again = s["unloaded_answer"], s["unload_again"]
    return verdict_if(asked["status"] == 404 and again["status"] == 404,
                      f"a request naming the unloaded adapter: {_said(asked)}; unloading it again: {_said(again)}")


def decide_missing(d):
    s = d["steps"]
    a = s["load_missing"]
    return verdict_if(a["status"] == 404 and "missing" not in s["models_at_end"]["parents"],
                      f"loading a folder that does not exist: {_said(a)}")


def decide_rank_refused(d):
    s = d["steps"]
    a = s["load_rank_32"]
    message = error_message(a).lower()
    return verdict_if(a["status"] not in (None, 200) and "rank" in message and "32" in message
                      and "rank-32" not in s["models_at_end"]["parents"],
                      f"loading a rank-32 adapter on a server started with --max-lora-rank 16: {_said(a)}; "
                      f"then /v1/models lists {', '.join(s['models_at_end']['parents'])}")


def decide_rank_client_error(d):
    """Only a refusal can say what kind of error a refusal is: a 2xx (the load went through) or no answer
    says nothing, nor does an error whose message is not about the rank. A 4xx is a client error; a 5xx
    is the server's."""
    a = d["steps"]["load_rank_32"]
    status, message = a.get("status"), error_message(a).lower()
    because = f"the rank-32 load's answer: {_said(a) if status is not None else 'no answer'}"
    if status is None or not 400 <= status < 600:
        return verdict_if(None, because + " (not a refusal)")
    if "rank" not in message or "32" not in message:
        return verdict_if(None, because + " (an error that does not name the rank: not the rank's refusal)")
    return verdict_if(status < 500, because)


JOB = Job(
    id="lora-runtime",
    title="Loading and unloading adapters at run time",
    question="With runtime updating switched on, what do /v1/load_lora_adapter and /v1/unload_lora_adapter do, "
             "and what does a request naming an unloaded adapter get?",
    pages=("lora.md",),
    collect=collect,
    variant="lora",
    claims=(
        Claim("lora-runtime.load", "POST /v1/load_lora_adapter with a name and a folder answers 200, and the "
              "adapter is then a model in /v1/models.", decide_load),
        Claim("lora-runtime.same-as-static", "An adapter loaded at run time answers exactly as the same folder "
              "served from --lora-modules.", decide_same_as_static),
        Claim("lora-runtime.load-twice", "Loading a name that is already loaded gets HTTP 400, saying it is "
              "already loaded.", decide_load_twice),
        Claim("lora-runtime.unload", "POST /v1/unload_lora_adapter answers 200 and the adapter leaves /v1/models.",
              decide_unload),
        Claim("lora-runtime.unloaded-404", "A request naming an unloaded adapter gets HTTP 404, as does "
              "unloading it again.", decide_unloaded_404),
        Claim("lora-runtime.missing-folder", "Loading a folder that does not exist gets HTTP 404, and nothing "
              "is served under its name.", decide_missing),
        Claim("lora-runtime.rank-refused", "An adapter of a higher rank than --max-lora-rank is refused at load, "
              "with a message naming its rank, and is not served.", decide_rank_refused),
        Claim("lora-runtime.rank-client-error", "That refusal is a client error, an HTTP 4xx status.",
              decide_rank_client_error),
    ),
)
