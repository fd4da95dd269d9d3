"""Stop strings, logprobs and temperature, min_tokens, and what a request that sets nothing gets."""

from __future__ import annotations

import re

from verify.job import Claim, Job, verdict_if

STOP_SNIPPET = "sampling/stop_strings.py"
TEMPERATURES = (0.3, 1.0, 1.8)
MIN_TOKENS = 30
PENALTIES = (1.0, 1.8)
# Seconds the request that sets nothing may take: the whole context at a few tokens per second.
NOTHING_SET_TIMEOUT_S = 600.0


def collect(ctx) -> dict:
    from verify.measure import capture
    from verify.measure.request import send
    stops = ctx.snippet(STOP_SNIPPET)
    url = ctx.base_url + "/chat/completions"
    data = {"stop": {}}
    for inc in (False, True):
        answer = stops.count_with_stop(ctx.base_url, inc)
        # The snippet keeps the answer's choice, not its HTTP status: one event when the answer holds text.
        data["stop"][str(inc)] = capture.results("answer", [t for t in [answer.get("text")] if t], **answer)
    data["logprobs"] = {}
    for t in TEMPERATURES:
        body = {"model": "chat", "messages": [{"role": "user", "content": "Name a colour."}], "max_tokens": 1,
                "temperature": t, "seed": 1, "logprobs": True, "top_logprobs": 5}
        data["logprobs"][str(t)] = send("POST", url, json=body)
    say_hi = {"model": "chat", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 60, "temperature": 0}
    data["min_tokens"] = {"without": send("POST", url, json=say_hi),
                          "with": send("POST", url, json={**say_hi, "min_tokens": MIN_TOKENS})}
    repeat = {"model": "chat", "messages": [{"role": "user", "content": "Write the word apple twenty times."}],
              "max_tokens": 40, "temperature": 0}
    data["repetition"] = {str(p): send("POST", url, json={**repeat, "repetition_penalty": p}) for p in PENALTIES}
    # A request that sets no sampling parameter at all; the server logs what it applied. With no
    # max_tokens it may run to the end of the context (2048 tokens, over 100 s here), so it gets
    # longer than the usual 120 s to answer.
    mark = ctx.server.log_size()
    data["nothing_set"] = send("POST", url, json={"model": "chat", "messages": [{"role": "user", "content": "Hi."}]},
                               timeout=NOTHING_SET_TIMEOUT_S)
    rid = (data["nothing_set"].get("body") or {}).get("id", "")
    data["nothing_set_log"] = [line for line in ctx.server.log_since(mark) if rid and rid in line and "params:" in line]
    data["managed"] = ctx.server.managed
    data["model_generation_config"] = _generation_config(ctx.server)
    return data


SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty")


def _generation_config(server) -> dict | None:
    """The served model folder's generation_config.json (None for a server given by URL)."""
    import json
    from pathlib import Path
    if not server.managed or "--model" not in server.argv:
        return None
    path = Path(server.argv[server.argv.index("--model") + 1]) / "generation_config.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def decide_stop_text(d):
    off, on = d["stop"]["False"], d["stop"]["True"]
    ok = not off["text"].endswith(", 4") and on["text"].endswith(", 4") and on["text"].startswith(off["text"])
    return verdict_if(ok, f"stop ', 4': text {off['text']!r}; with include_stop_str_in_output: {on['text']!r}")


def decide_stop_reason(d):
    both = list(d["stop"].values())
    ok = all(x["finish_reason"] == "stop" and x["stop_reason"] == ", 4" for x in both)
    return verdict_if(ok, "; ".join(f"finish_reason {x['finish_reason']!r}, stop_reason {x['stop_reason']!r}" for x in both))


def top_logprobs(d, t):
    content = d["logprobs"][str(t)]["body"]["choices"][0]["logprobs"]["content"][0]
    return {x["token"]: x["logprob"] for x in content["top_logprobs"]}


def decide_raw_logprobs(d):
    tops = {t: top_logprobs(d, t) for t in TEMPERATURES}
    common = set.intersection(*(set(x) for x in tops.values()))
    same = all(len({round(tops[t][tok], 6) for t in TEMPERATURES}) == 1 for tok in common)
    sample = sorted(common, key=lambda tok: -tops[TEMPERATURES[0]][tok])[:2]
    return verdict_if(bool(common) and same, "log-probabilities at temperature " + ", ".join(map(str, TEMPERATURES)) +
                      ": " + "; ".join(f"{tok!r}: " + " / ".join(f"{tops[t][tok]:.4f}" for t in TEMPERATURES)
                                       for tok in sample))


def decide_min_tokens(d):
    without = d["min_tokens"]["without"]["body"]["usage"]["completion_tokens"]
    with_ = d["min_tokens"]["with"]["body"]["usage"]["completion_tokens"]
    return verdict_if(without < MIN_TOKENS <= with_, f"'Say hi.' stops by itself after {without} tokens; with "
                                                     f"min_tokens={MIN_TOKENS} after {with_}")


def _most_repeated(text: str) -> tuple[str, int]:
    words = re.findall(r"\w+", text.lower())
    # Ties go to the alphabetically first word, so the verdict's text is the same on every recomputation.
    return min(((w, words.count(w)) for w in set(words)), key=lambda x: (-x[1], x[0]), default=("", 0))


def decide_repetition(d):
    counts = {p: _most_repeated(d["repetition"][str(p)]["body"]["choices"][0]["message"]["content"]) for p in PENALTIES}
    low, high = counts[PENALTIES[0]][1], counts[PENALTIES[-1]][1]
    return verdict_if(high < low, "most repeated word, asked to write 'apple' twenty times: " + "; ".join(
        f"repetition_penalty {p}: {w!r} x{n}" for p, (w, n) in counts.items()))


def _applied(d) -> dict:
    line = d["nothing_set_log"][0]
    return {k: v for k, v in re.findall(r"(temperature|top_p|top_k|max_tokens|repetition_penalty)=([^,)]+)", line)}


def decide_defaults(d):
    if not d["managed"]:
        return verdict_if(None, "the log of a server given by URL is not readable here")
    a = _applied(d)
    usage = d["nothing_set"]["body"]["usage"]
    # The claim's second half: the model's own generation config sets no sampling field.
    model_sets = sorted(set(d["model_generation_config"]) & set(SAMPLING_FIELDS))
    ok = a.get("temperature") == "1.0" and a.get("top_p") == "1.0" and not model_sets
    return verdict_if(ok, "logged for a request that set nothing: " + ", ".join(f"{k}={v}" for k, v in a.items()) +
                      f" (the prompt took {usage['prompt_tokens']} of the 2048-token context); the model's "
                      f"generation_config.json sets {', '.join(model_sets) or 'no sampling field'}")


JOB = Job(
    id="sampling-behaviour",
    title="Stop strings, logprobs, min_tokens and defaults",
    question="Do stop strings appear in the text and what do finish_reason and stop_reason say? Are logprobs taken "
             "before or after temperature? Does min_tokens hold? What does a request that sets nothing get?",
    pages=("sampling.md",),
    collect=collect,
    claims=(
        Claim("sampling-behaviour.stop-string-not-in-text", "A stop string is left out of the text, unless "
              "include_stop_str_in_output is set.", decide_stop_text),
        Claim("sampling-behaviour.stop-reason-names-it", "A stop string ends the answer with finish_reason stop and "
              "stop_reason set to the string that matched.", decide_stop_reason),
        Claim("sampling-behaviour.logprobs-before-temperature", "Returned logprobs are the model's own, taken before "
              "temperature: they are the same at every temperature.", decide_raw_logprobs),
        Claim("sampling-behaviour.min-tokens-holds", "min_tokens keeps the model from stopping early.", decide_min_tokens),
        Claim("sampling-behaviour.repetition-penalty-reduces-repeats", "repetition_penalty above 1 makes the model "
              "repeat itself less, even when asked to repeat.", decide_repetition),
        Claim("sampling-behaviour.defaults-when-unset", "A request that sets no sampling parameter gets temperature 1.0 "
              "and top_p 1.0: the embedded model's generation config sets none.", decide_defaults),
    ),
)
