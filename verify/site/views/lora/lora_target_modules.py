"""The evidence of verify/jobs/lora/lora_target_modules.py on a page."""

from __future__ import annotations

from verify.jobs.lora import lora_target_modules as job
from verify.site import html


def fragment_answers(record):
    d = record["data"]
    base = job.first_answers(d, job.BASE)
    rows = [[model, prompt, answer, "(the base model)" if model == job.BASE else ("yes" if answer == base[prompt] else "no")]
            for model in (job.BASE, "attn-a", "mlp-c") for prompt, answer in job.first_answers(d, model).items()]
    return html.table(["model", "prompt", "greedy answer", "same as the base model"], rows)


def fragment_log(record):
    lines = record["data"]["log"]["lines"]
    return html.pre(lines or ["(no WARNING or ERROR line mentions LoRA, mlp-c or the MLP's modules)"],
                    "the server's log, from its start: WARNING and ERROR lines about LoRA")


FRAGMENTS = {"answers": fragment_answers, "log": fragment_log}
