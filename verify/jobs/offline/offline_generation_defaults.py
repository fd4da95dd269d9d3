"""The model's generation defaults against an explicit SamplingParams, offline and on the server.

The embedded model's generation_config.json sets no sampling field, so the job
gives a copy of the model folder (the same weights, linked) a generation config
with the sampling fields chat models commonly ship (MODEL_DEFAULTS, written into
the record). The page's snippet then generates with no SamplingParams and with
SamplingParams(temperature=0) and with the model's defaults with temperature
changed; a server started on the same copy answers a chat request that sets only
temperature, and one that also sets max_tokens, for each prompt (the six requests sent at once).
"""

from __future__ import annotations

from verify.job import OFFLINE, Claim, Job, verdict_if

SNIPPET = "offline/generation_defaults.py"
# The sampling fields written into the copy's generation_config.json.
MODEL_DEFAULTS = {"temperature": 0.6, "top_p": 0.9, "top_k": 20, "repetition_penalty": 1.05, "max_new_tokens": 24}
PROMPTS = ["Write a long story about a lighthouse keeper.", "Explain in detail how bread is made.",
           "Describe a busy city market, at length."]
SERVER_MAX_TOKENS = 40  # a request's own max_tokens, above the model's max_new_tokens
SAMPLING_PARAMS_MAX_TOKENS = 16  # vLLM's documented default for SamplingParams(max_tokens=...)
# The server's chat requests, each sent once per prompt: what a request sets beyond the messages and temperature 0.
SERVER_REQUESTS = (("temperature only", {}), ("temperature and max_tokens", {"max_tokens": SERVER_MAX_TOKENS}))


def _model_copy(source: str, folder: str) -> str:
    import json
    from pathlib import Path
    folder = Path(folder)
    for f in Path(source).iterdir():
        if f.name != "generation_config.json":
            (folder / f.name).symlink_to(f)
    config = json.loads((Path(source) / "generation_config.json").read_text())
    (folder / "generation_config.json").write_text(json.dumps({**config, **MODEL_DEFAULTS}, indent=2))
    return str(folder)


def _outputs(outputs) -> list[dict]:
    """Per output, one event per token generated."""
    from verify.measure import capture
    return [capture.results("offline-generate", o.outputs[0].token_ids, tokens=len(o.outputs[0].token_ids),
                            finish_reason=o.outputs[0].finish_reason) for o in outputs]


def collect(ctx) -> dict:
    import tempfile
    with tempfile.TemporaryDirectory(prefix="model-with-defaults-") as folder:
        return _collect(ctx, _model_copy(ctx.model_path, folder))


def _collect(ctx, model: str) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    llm = ctx.llm(model=model)
    ways = snippet.three_ways(llm, PROMPTS)
    data = {"model_defaults": MODEL_DEFAULTS,
            "ways": {name: {"settings": snippet.settings(params), "outputs": _outputs(outs)}
                     for name, (params, outs) in ways.items()},
            "server": {}}
    with ctx.server(model=model) as srv:
        name = httpx.get(srv.api + "/models", timeout=10).json()["data"][0]["id"]

        def answer(extra: dict, prompt: str) -> dict:
            r = httpx.post(srv.api + "/chat/completions", timeout=120, json={
                "model": name, "messages": [{"role": "user", "content": prompt}], "temperature": 0, **extra})
            body = (capture.body(r) or {}) if r.status_code == 200 else {}
            tokens = (body.get("usage") or {}).get("completion_tokens")
            return capture.response(r, tokens=tokens,
                                    finish_reason=(body.get("choices") or [{}])[0].get("finish_reason"))

        # Every request at once: the job reads where each answer stopped and why, which its own request
        # and the model's defaults decide, not what else the server runs, so none waits for another.
        requests = [(label, extra, prompt) for label, extra in SERVER_REQUESTS for prompt in PROMPTS]
        with ThreadPoolExecutor(max_workers=len(requests)) as pool:
            answers = list(pool.map(lambda r: answer(r[1], r[2]), requests))
        for label, extra in SERVER_REQUESTS:
            data["server"][label] = {"request": extra,
                                     "answers": [a for (lab, _, _), a in zip(requests, answers) if lab == label]}
    return data


def _cut_at(outputs: list[dict], n: int) -> bool | None:
    """Every answer stopped at n tokens or earlier, and those cut by length have exactly n (None: none was cut)."""
    cut = [o for o in outputs if o["finish_reason"] == "length"]
    if not cut:
        return None
    return all(o["tokens"] <= n for o in outputs) and all(o["tokens"] == n for o in cut)


def lengths_text(outputs: list[dict]) -> str:
    return ", ".join(f"{o['tokens']} ({o['finish_reason']})" for o in outputs)


def _both(a: bool | None, b: bool) -> bool | None:
    return None if a is None else a and b


NO_PARAMS, NEW, CHANGED = "no SamplingParams", "SamplingParams(temperature=0)", "model defaults, temperature=0"


def decide_no_params(d):
    way, m = d["ways"][NO_PARAMS], d["model_defaults"]
    getter = all(way["settings"][k] == m[k] for k in ("temperature", "top_p", "top_k", "repetition_penalty"))
    return verdict_if(_both(_cut_at(way["outputs"], m["max_new_tokens"]), getter),
                      f"llm.get_default_sampling_params(): {way['settings']}; generate() with no SamplingParams, "
                      f"answer lengths: {lengths_text(way['outputs'])}")


def decide_explicit(d):
    way, m = d["ways"][NEW], d["model_defaults"]
    return verdict_if(_both(_cut_at(way["outputs"], SAMPLING_PARAMS_MAX_TOKENS), m["max_new_tokens"] != 16),
                      f"SamplingParams(temperature=0), answer lengths: {lengths_text(way['outputs'])} (the model's "
                      f"max_new_tokens: {m['max_new_tokens']}; SamplingParams' own default: {SAMPLING_PARAMS_MAX_TOKENS})")


def decide_changed(d):
    way, m = d["ways"][CHANGED], d["model_defaults"]
    return verdict_if(_both(_cut_at(way["outputs"], m["max_new_tokens"]), way["settings"]["temperature"] == 0),
                      f"the model's defaults with temperature=0: {way['settings']}; answer lengths: "
                      f"{lengths_text(way['outputs'])}")


def decide_server(d):
    only_t = d["server"]["temperature only"]["answers"]
    with_max = d["server"]["temperature and max_tokens"]["answers"]
    cut = _cut_at(only_t, d["model_defaults"]["max_new_tokens"])
    longer = any(a["tokens"] > d["model_defaults"]["max_new_tokens"] for a in with_max) and \
        all(a["tokens"] <= SERVER_MAX_TOKENS for a in with_max)
    return verdict_if(_both(cut, longer),
                      f"temperature only: {lengths_text(only_t)}; "
                      f"with max_tokens {SERVER_MAX_TOKENS}: {lengths_text(with_max)}")


JOB = Job(
    id="offline-generation-defaults",
    title="The model's generation defaults against an explicit SamplingParams",
    question="When do the sampling fields of a model's generation_config.json apply, offline and on the server?",
    pages=("offline.md",),
    engine=OFFLINE,
    starts_own_engine=True,  # an engine and a server on its own copy of the model
    collect=collect,
    claims=(
        Claim("offline-generation-defaults.no-params-follow-model", "With no SamplingParams, generate() uses the "
              "model's defaults: llm.get_default_sampling_params() holds the model's temperature, top_p, top_k and "
              "repetition_penalty, and the answers stop at its max_new_tokens.", decide_no_params),
        Claim("offline-generation-defaults.explicit-replaces-all", "A new SamplingParams replaces the model's "
              "defaults, also for fields it does not set: SamplingParams(temperature=0) stops answers at "
              "SamplingParams' own 16 tokens, not at the model's max_new_tokens.", decide_explicit),
        Claim("offline-generation-defaults.start-from-defaults", "Changing one field of "
              "llm.get_default_sampling_params() keeps the model's other defaults: with temperature set to 0, "
              "answers still stop at the model's max_new_tokens.", decide_changed),
        Claim("offline-generation-defaults.server-fills-gaps", "On the server, a request that sets temperature "
              "but not max_tokens stops at the model's max_new_tokens; a request's own max_tokens wins where it "
              "sets one.", decide_server),
    ),
)
