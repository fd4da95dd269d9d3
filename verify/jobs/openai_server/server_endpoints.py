"""What /v1/models returns beyond OpenAI's fields, and where the extra endpoints live."""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

SNIPPET = "openai-server/endpoints.py"
OPENAI_MODEL_FIELDS = {"id", "object", "created", "owned_by"}


def collect(ctx) -> dict:
    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    out = {}
    for name, r in snippet.endpoints(ctx.base_url).items():
        # Whatever the body (/health's is empty, /metrics' is text), the answer is the observation.
        entry = capture.answer(r, "probe", expect_status=[404], content_type=r.headers.get("content-type", ""),
                               text=r.text[:600])
        if (parsed := capture.body(r)) is not None:
            entry["json"] = parsed
        if name == "GET /metrics":  # counted over the whole body: the text kept above is only its start
            samples = [line for line in r.text.splitlines() if line.startswith("vllm:")]
            entry["vllm_samples"], entry["first_vllm_sample"] = len(samples), samples[0][:120] if samples else None
        out[name] = entry
    return {"endpoints": out}


def _ep(d, name) -> dict:
    return d["endpoints"][name]


def decide_models(d):
    model = _ep(d, "GET /v1/models")["json"]["data"][0]
    extra = sorted(set(model) - OPENAI_MODEL_FIELDS)
    ok = "max_model_len" in extra and "root" in extra
    return verdict_if(ok, f"fields beyond OpenAI's {sorted(OPENAI_MODEL_FIELDS)}: {extra}; max_model_len "
                          f"{model.get('max_model_len')}")


def decide_health(d):
    h, v = _ep(d, "GET /health"), _ep(d, "GET /version")
    ok = h["status"] == 200 and h["text"] == "" and v["status"] == 200 and "version" in v.get("json", {})
    return verdict_if(ok, f"/health: HTTP {h['status']}, body {h['text']!r}; /version: HTTP {v['status']}, {v['text']!r}")


def decide_tokenize_root(d):
    root, v1 = _ep(d, "POST /tokenize"), _ep(d, "POST /v1/tokenize")
    det = _ep(d, "POST /detokenize")
    ok = root["status"] == 200 and det["status"] == 200 and v1["status"] == 404
    return verdict_if(ok, f"POST /tokenize: HTTP {root['status']} {root['text'][:60]!r}; POST /detokenize: HTTP "
                          f"{det['status']}; POST /v1/tokenize: HTTP {v1['status']}")


def decide_metrics(d):
    m = _ep(d, "GET /metrics")
    ok = m["status"] == 200 and m["content_type"].startswith("text/plain") and m["vllm_samples"] > 0
    return verdict_if(ok and "# HELP" in m["text"], f"/metrics: HTTP {m['status']}, {m['content_type']}; "
                                                    f"starts {m['text'][:40]!r}; {m['vllm_samples']} vllm: samples, "
                                                    f"the first {m['first_vllm_sample']!r}")


JOB = Job(
    id="server-endpoints",
    title="The endpoints beyond chat and completions",
    question="What does /v1/models return beyond OpenAI's fields, and where do tokenize, detokenize, health, version "
             "and metrics live?",
    pages=("openai-server.md",),
    collect=collect,
    claims=(
        Claim("server-endpoints.models-extra-fields", "/v1/models adds fields OpenAI does not have, among them "
              "max_model_len and root (where the model was loaded from).", decide_models),
        Claim("server-endpoints.health-and-version", "GET /health answers 200 with an empty body; GET /version "
              "returns the vLLM version as JSON.", decide_health),
        Claim("server-endpoints.tokenize-at-root", "/tokenize and /detokenize live at the server's root, not under "
              "/v1.", decide_tokenize_root),
        Claim("server-endpoints.metrics-prometheus", "/metrics serves Prometheus text.", decide_metrics),
    ),
)
