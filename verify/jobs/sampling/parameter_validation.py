"""Which sampling parameters the server rejects, with what error, and which it quietly adjusts."""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

CASES = {
    "n=2 with temperature 0": {"n": 2, "temperature": 0},
    "temperature -1": {"temperature": -1},
    "temperature 3": {"temperature": 3},
    "top_logprobs 30": {"logprobs": True, "top_logprobs": 30},
    "top_logprobs 20": {"logprobs": True, "top_logprobs": 20},
    "max_tokens 0": {"max_tokens": 0},
    "top_p 0": {"top_p": 0},
    "presence_penalty 3": {"presence_penalty": 3},
}


def collect(ctx) -> dict:
    from verify.measure.request import send
    out = {}
    for name, params in CASES.items():
        body = {"model": "chat", "messages": [{"role": "user", "content": "Name a colour."}], "max_tokens": 10, **params}
        out[name] = {**send("POST", ctx.base_url + "/chat/completions", json=body), "params": params}
    return {"cases": out}


def error_of(d, name) -> dict:
    return (d["cases"][name].get("body") or {}).get("error") or {}


def _rejected(d, name) -> bool:
    """HTTP 400 with an OpenAI error object whose message names one of the request's parameters.

    Any other 400 (a broken base body, a refused model) is not this parameter's rejection.
    """
    case = d["cases"][name]
    message = error_of(d, name).get("message") or ""
    return case["status"] == 400 and any(param in message for param in case["params"])


def _line(d, name) -> str:
    c = d["cases"][name]
    return f"{name}: HTTP {c['status']}" + (f" ({error_of(d, name).get('message', '')[:80]})" if c["status"] != 200 else "")


def decide_greedy_n(d):
    return verdict_if(_rejected(d, "n=2 with temperature 0"), _line(d, "n=2 with temperature 0"))


def decide_temperature(d):
    names = ("temperature -1", "temperature 3")
    return verdict_if(all(_rejected(d, n) for n in names), "; ".join(_line(d, n) for n in names))


def decide_logprobs(d):
    ok = _rejected(d, "top_logprobs 30") and d["cases"]["top_logprobs 20"]["status"] == 200
    return verdict_if(ok, "; ".join(_line(d, n) for n in ("top_logprobs 30", "top_logprobs 20")))


def decide_names_parameter(d):
    rejected = [n for n in CASES if _rejected(d, n)]
    if not rejected:
        return verdict_if(None, "no request was rejected with an error naming its parameter: nothing to judge")
    named = [n for n in rejected if error_of(d, n).get("param")]
    return verdict_if(len(named) == len(rejected), f"{len(named)} of {len(rejected)} rejections name the "
                      f"parameter in error.param; without it: {', '.join(n for n in rejected if n not in named) or 'none'}")


JOB = Job(
    id="parameter-validation",
    title="Sampling parameters the server refuses",
    question="Which combinations does the server reject, and with what error?",
    pages=("sampling.md",),
    collect=collect,
    shares_server=True,  # reads only what the API answers
    claims=(
        Claim("parameter-validation.greedy-n-rejected", "Asking for several choices with temperature 0 is refused with "
              "HTTP 400: greedy choices would all be the same.", decide_greedy_n),
        Claim("parameter-validation.temperature-range", "A temperature outside 0 to 2 is refused with HTTP 400.",
              decide_temperature),
        Claim("parameter-validation.logprobs-capped", "top_logprobs above 20 is refused with HTTP 400; 20 is accepted.",
              decide_logprobs),
        Claim("parameter-validation.error-names-parameter", "Every refusal names the offending parameter in "
              "error.param.", decide_names_parameter),
    ),
)
