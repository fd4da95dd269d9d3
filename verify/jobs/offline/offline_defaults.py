"""The offline engine's defaults: what SamplingParams() gives a reader who sets nothing, and result order.

Runs vllm.LLM in-process (in the offline engine's child process), with the
profile's model and engine arguments.
"""

from __future__ import annotations

from verify.job import OFFLINE, Claim, Job, verdict_if

SNIPPET = "offline/forgot_max_tokens.py"
DOCUMENTED_DEFAULT = 16
# Prompts of very different lengths, so a batch that reordered by length would show it.
PROMPTS = [
    "Write a long story about the sea.",
    "Hi",
    "List every country in Europe with its capital, one per line, and a sentence about each.",
    "Count from one to one hundred in words.",
    "Explain how a steam engine works, step by step, in detail.",
    "Say yes.",
    "Describe your favourite city: its streets, its food, its people and its history.",
    "Translate to French: the cat sleeps on the warm windowsill every afternoon.",
]


def collect(ctx) -> dict:
    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    llm = ctx.llm()
    params, outputs = snippet.generate_with_defaults(llm, PROMPTS)
    results = [{"prompt": o.prompt, "text": o.outputs[0].text, "tokens": len(o.outputs[0].token_ids),
                "finish_reason": o.outputs[0].finish_reason} for o in outputs]
    model_defaults = llm.get_default_sampling_params()
    # One event per answer that holds a token: an empty output is nothing received.
    return {"generate": capture.results("offline-generate", [r for r in results if r["tokens"]], results=results),
            "prompts": PROMPTS,
            "sampling_params_default": {"max_tokens": params.max_tokens, "temperature": params.temperature},
            "model_default_max_tokens": model_defaults.max_tokens}


def decide_default(d):
    got = d["sampling_params_default"]["max_tokens"]
    return verdict_if(got == DOCUMENTED_DEFAULT, f"SamplingParams().max_tokens is {got}")


def decide_cut(d):
    results = d["generate"]["results"]
    longest = max(r["tokens"] for r in results)
    capped = [r for r in results if r["finish_reason"] == "length"]
    cap = DOCUMENTED_DEFAULT
    ok = longest <= cap and bool(capped) and all(r["tokens"] == cap for r in capped)
    return verdict_if(ok, f"{len(capped)} of {len(results)} answers were cut with finish_reason length at "
                          f"{cap} tokens; the longest answer is {longest} tokens")


def decide_order(d):
    results = d["generate"]["results"]
    same = [r["prompt"] for r in results] == d["prompts"]
    return verdict_if(same, f"{len(results)} prompts of different lengths: outputs came back "
                            f"{'in input order' if same else 'in another order'}")


JOB = Job(
    id="offline-defaults",
    title="SamplingParams() defaults and result order in the offline engine",
    question="What output length does SamplingParams() give when max_tokens is not set, and do results of "
             "generate() come back in input order?",
    pages=("offline.md",),
    engine=OFFLINE,
    collect=collect,
    claims=(
        Claim("offline-defaults.max-tokens-16", "SamplingParams() without max_tokens allows 16 output tokens.",
              decide_default),
        Claim("offline-defaults.answers-cut", "With default SamplingParams(), every answer not finished by 16 tokens "
              "is cut there, with finish_reason length and no error.", decide_cut),
        Claim("offline-defaults.input-order", "generate() returns its outputs in the order of the prompts.",
              decide_order),
    ),
)
