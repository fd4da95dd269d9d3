"""The evidence of verify/jobs/lora/lora_runtime.py on a page."""

from __future__ import annotations

from verify.jobs.lora import lora_runtime as job
from verify.site import html

STEPS = {
    "load": "load attn-a's folder as attn-a-again", "load_again": "load it again, same name",
    "copy_answer": "ask attn-a-again", "static_answer": "ask attn-a (from --lora-modules)",
    "unload": "unload attn-a-again", "unloaded_answer": "ask attn-a-again", "unload_again": "unload it again",
    "load_missing": "load a folder that does not exist", "load_rank_32": "load a rank-32 adapter (server: 16)",
}


def fragment_steps(record):
    steps = record["data"]["steps"]
    rows = []
    for key, label in STEPS.items():
        a = steps[key]
        said = job.answer_text(a) if key.endswith("answer") and a.get("status") == 200 else \
            (a.get("body_text") if a.get("status") == 200 else job.error_message(a))
        rows.append([label, a.get("status"), said])
    rows.append(["/v1/models at the end", "", ", ".join(steps["models_at_end"]["parents"])])
    return html.table(["step, in order", "HTTP status", "what came back"], rows)


FRAGMENTS = {"steps": fragment_steps}
