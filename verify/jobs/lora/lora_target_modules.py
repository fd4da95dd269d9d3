"""An adapter for modules the server does not apply LoRA to: refused, or served as the base model?

The lora-attention-only variant restricts LoRA to q_proj and v_proj (--lora-target-modules) and
serves attn-a (q_proj, v_proj) and mlp-c (gate_proj, up_proj, down_proj). Each model answers the
snippet's prompts, greedy, one at a time; the server's log is read from its start for what it
says about mlp-c or its modules.
"""

from __future__ import annotations

import re

from verify.job import Claim, Job, verdict_if
from verify.jobs.lora._answers import BASE, SNIPPET, ask_all

MLP = ("gate_proj", "up_proj", "down_proj")


def collect(ctx) -> dict:
    from openai import OpenAI

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    models = snippet.served(client)
    answers = ask_all(ctx, (BASE, "attn-a", "mlp-c"), reps=1)
    read, lines = ctx.server.log_capture(0)
    said = [line for line in lines if re.search(r"WARNING|ERROR", line) and
            re.search(r"mlp-c|lora|LoRA|" + "|".join(MLP), line)]
    # The read (a capture counting every line read) and the WARNING and ERROR lines about LoRA in it.
    return {"models": capture.results("models", list(models), parents=models), "answers": answers,
            "log": {"read": read, "lines": said}}


def first_answers(d, model: str) -> dict:
    return {p: a[0] for p, a in d["answers"]["by_model"][model].items()}


def decide_mlp_as_base(d):
    base, mlp = first_answers(d, BASE), first_answers(d, "mlp-c")
    same = [p for p in base if base[p] and base[p] == mlp[p]]
    listed = d["models"]["parents"].get("mlp-c") == BASE
    return verdict_if(listed and len(same) == len(base),
                      f"mlp-c is {'listed' if listed else 'not listed'} in /v1/models; it answered as the base model "
                      f"to {len(same)} of {len(base)} prompts")


def decide_attention_applies(d):
    base, attn = first_answers(d, BASE), first_answers(d, "attn-a")
    differ = [p for p in base if base[p] and attn[p] and base[p] != attn[p]]
    return verdict_if(len(differ) == len(base), f"attn-a answered differently from the base model to "
                                                f"{len(differ)} of {len(base)} prompts")


def decide_silent(d):
    # The kept lines are WARNING and ERROR lines that mention LoRA, mlp-c or the MLP's modules; those
    # about LoRA in general (the tokenizer notice) are not about this adapter.
    about = [line for line in d["log"]["lines"] if "mlp-c" in line or any(m in line for m in MLP)]
    return verdict_if(not about, f"{len(about)} WARNING or ERROR lines of the server's log name mlp-c or "
                                 f"{', '.join(MLP)}" + (f": {about[0][-160:]!r}" if about else ""))


JOB = Job(
    id="lora-target-modules",
    title="An adapter for modules the server leaves out",
    question="On a server that applies LoRA to the attention projections only, what does an adapter of the MLP do?",
    pages=("lora.md",),
    collect=collect,
    variant="lora-attention-only",
    claims=(
        Claim("lora-target-modules.mlp-as-base", "With --lora-target-modules q_proj v_proj, an adapter of the MLP "
              "projections is served and listed, and answers exactly as the base model.", decide_mlp_as_base),
        Claim("lora-target-modules.attention-applies", "On the same server, an adapter of q_proj and v_proj "
              "changes the answers.", decide_attention_applies),
        Claim("lora-target-modules.silent", "The server logs no warning or error naming that adapter or its "
              "modules.", decide_silent),
    ),
)
