"""The evidence of verify/jobs/lora/lora_served.py on a page."""

from __future__ import annotations

from verify.jobs.lora import lora_served as job
from verify.jobs.lora._answers import same
from verify.site import html


def fragment_answers(record):
    d = record["data"]
    parents = d["models"]["parents"]
    rows = []
    for model, by_prompt in job.answers_by_model(d).items():
        for prompt, answers in by_prompt.items():
            rows.append([model, parents.get(model) or "(base model)", prompt, answers[0],
                         f"yes, {len(answers)} of {len(answers)}" if same(answers) else "no"])
    return html.table(["model", "parent in /v1/models", "prompt", "greedy answer (24 tokens at most)",
                       "same every time"], rows)


FRAGMENTS = {"answers": fragment_answers}
