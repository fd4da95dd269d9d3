"""A server started with adapters: each is a model; does each change greedy output, the same way every time?

The lora variant serves three adapters built by verify/live/adapters.py (attn-a: q and v
projections; attn-b: q, k, v and o; mlp-c: the MLP's three projections). Each model answers the
snippet's prompts REPS times, greedy, one request at a time; /v1/models is read through the
snippet too.
"""

from __future__ import annotations

from verify.config.profiles import LORA_ADAPTERS
from verify.job import Claim, Job, verdict_if
from verify.jobs.lora._answers import BASE, SNIPPET, ask_all, same

REPS = 2
UNKNOWN = "attn-z"  # a name no adapter is served under


def collect(ctx) -> dict:
    from openai import OpenAI

    from verify.measure import capture
    from verify.measure.request import send
    snippet = ctx.snippet(SNIPPET)
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    models = snippet.served(client)
    unknown = send("POST", ctx.base_url + "/chat/completions", json={
        "model": UNKNOWN, "messages": [{"role": "user", "content": snippet.PROMPTS[0]}], "max_tokens": 8})
    return {"models": capture.results("models", list(models), parents=models),
            "answers": ask_all(ctx, (BASE, *LORA_ADAPTERS), REPS), "unknown": unknown}


def answers_by_model(d) -> dict:
    return d["answers"]["by_model"]


def decide_listed(d):
    parents = d["models"]["parents"]
    listed = [a for a in LORA_ADAPTERS if parents.get(a) == BASE]
    return verdict_if(len(listed) == len(LORA_ADAPTERS) and parents.get(BASE) is None,
                      f"/v1/models lists {', '.join(f'{m} (parent {p})' for m, p in parents.items())}")


def decide_changes_output(d):
    by = answers_by_model(d)
    base = by[BASE]
    differ = [(a, p) for a in LORA_ADAPTERS for p in base if by[a][p][0] and base[p][0] and by[a][p][0] != base[p][0]]
    asked = len(LORA_ADAPTERS) * len(base)
    return verdict_if(len(differ) == asked, f"{len(differ)} of {asked} adapter-and-prompt pairs answered differently "
                                             "from the base model")


def decide_repeatable(d):
    by = answers_by_model(d)
    steady = [(m, p) for m in by for p in by[m] if same(by[m][p])]
    asked = sum(len(v) for v in by.values())
    return verdict_if(len(steady) == asked, f"{len(steady)} of {asked} model-and-prompt pairs gave one answer "
                                            f"on all {d['answers']['reps']} repetitions")


def decide_distinct(d):
    by = answers_by_model(d)
    prompts = list(by[BASE])
    distinct = [p for p in prompts if len({by[a][p][0] for a in LORA_ADAPTERS}) == len(LORA_ADAPTERS)]
    return verdict_if(len(distinct) == len(prompts),
                      f"the three adapters gave three different answers to {len(distinct)} of {len(prompts)} prompts")


def decide_unknown(d):
    u = d["unknown"]
    message = str(((u.get("body") or {}).get("error") or {}).get("message", ""))
    return verdict_if(u["status"] == 404 and UNKNOWN in message,
                      f"a request naming {UNKNOWN!r} got HTTP {u['status']}: {message!r}")


JOB = Job(
    id="lora-served",
    title="Adapters served by name",
    question="Is each adapter a model of its own, and does it change greedy output the same way every time?",
    pages=("lora.md",),
    collect=collect,
    variant="lora",
    claims=(
        Claim("lora-served.listed", "Each adapter given with --lora-modules is a model in /v1/models, "
              "with the base model as its parent.", decide_listed),
        Claim("lora-served.changes-output", "A request naming an adapter gets a different greedy answer "
              "from the base model's, for every adapter and prompt asked.", decide_changes_output),
        Claim("lora-served.repeatable", "Asked again, one at a time, every model (base and adapters) gives the "
              "same greedy answer.", decide_repeatable),
        Claim("lora-served.distinct", "The three adapters give three different answers to each prompt.",
              decide_distinct),
        Claim("lora-served.unknown-name", "A request naming a model the server does not serve gets HTTP 404 "
              "naming it.", decide_unknown),
    ),
)
