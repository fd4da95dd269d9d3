"""The runtime endpoints on a server started without VLLM_ALLOW_RUNTIME_LORA_UPDATING.

On the lora-attention-only variant (LoRA on, runtime updating left off, as by default), the
page's snippet loads attn-a's folder under a new name and unloads it.
"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if
from verify.jobs.lora._answers import SNIPPET as ASK

SNIPPET = "lora/runtime.py"
NAME = "attn-a-again"


def collect(ctx) -> dict:
    from openai import OpenAI

    from verify.jobs.lora.lora_runtime import _recorded, _redacted
    from verify.live.adapters import prepare_adapters
    from verify.measure import capture
    runtime, ask = ctx.snippet(SNIPPET), ctx.snippet(ASK)
    runtime.SERVER = ctx.server.url
    folder = str(prepare_adapters(("attn-a",), progress=lambda m: None)["attn-a"])
    load = _recorded(runtime.load(NAME, folder), {"lora_name": NAME, "lora_path": folder})
    unload = _recorded(runtime.unload(NAME), {"lora_name": NAME})
    listed = ask.served(OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0))
    return _redacted({"load": load, "unload": unload, "models": capture.results("models", list(listed), parents=listed)})


# What the HTTP framework answers for a path no route serves (an endpoint's own 404 says more).
NO_ROUTE = {"detail": "Not Found"}


def decide_not_found(d):
    statuses = (d["load"]["status"], d["unload"]["status"])
    no_route = [k for k in ("load", "unload") if d[k].get("body") == NO_ROUTE]
    return verdict_if(statuses == (404, 404) and len(no_route) == 2 and NAME not in d["models"]["parents"],
                      f"load: HTTP {statuses[0]}, unload: HTTP {statuses[1]}; {len(no_route)} of 2 with the body of a "
                      f"path no route serves ({NO_ROUTE}); /v1/models then lists {', '.join(d['models']['parents'])}")


JOB = Job(
    id="lora-runtime-off",
    title="Runtime loading, switched off",
    question="What do the runtime endpoints answer on a server started without VLLM_ALLOW_RUNTIME_LORA_UPDATING?",
    pages=("lora.md",),
    collect=collect,
    variant="lora-attention-only",
    claims=(
        Claim("lora-runtime-off.not-found", "Without VLLM_ALLOW_RUNTIME_LORA_UPDATING=True in the server's "
              "environment, /v1/load_lora_adapter and /v1/unload_lora_adapter are not served: HTTP 404 as for any "
              "unknown path, even with --enable-lora, and nothing is loaded.", decide_not_found),
    ),
)
