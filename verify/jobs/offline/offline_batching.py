"""One generate() over many prompts against one call per prompt, over batch sizes.

Runs the page's snippet with vllm.LLM in-process (the offline engine's child
process): for each batch size, the same greedy prompts as one call, timed; then
the largest batch's prompts one at a time, each call timed. The prompts of a
smaller batch are the first ones of the largest, so its loop is the first calls
of that one loop: a loop over 4 prompts is the same four calls, one after the
other, whether or not 12 more follow (running them again would time the same
calls twice). The outputs of each batch size are compared with its loop's.
"""

from __future__ import annotations

from verify.headline import TIMING_TOLERANCE, TIMING_WHY, Headline
from verify.job import OFFLINE, Claim, Job, verdict_if

SNIPPET = "offline/batch_vs_loop.py"
SIZES = (1, 4, 16)
MAX_TOKENS = 32
# "Much faster": one call for 16 prompts at least this many times faster than a loop.
SPEEDUP_AT_16 = 3.0


def collect(ctx) -> dict:
    from vllm import SamplingParams

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    llm = ctx.llm()
    params = SamplingParams(max_tokens=MAX_TOKENS, temperature=0, ignore_eos=True)
    snippet.one_call(llm, ["Warm up."], params)  # the first call pays one-off costs; keep them out of the timing
    prompts = _prompts(SIZES[-1])
    batches = {k: snippet.timed(snippet.one_call, llm, prompts[:k], params) for k in SIZES}
    # The loop, one call per prompt, each waiting for the previous one: the page's one_at_a_time,
    # timed call by call (one prompt each), so the loop over the first k prompts is its first k calls.
    calls = [snippet.timed(snippet.one_at_a_time, llm, [p], params) for p in prompts]
    looped = [out[0] for _, out in calls]
    sizes = {}
    for k in SIZES:
        t_batch, batched = batches[k]
        # One event per output of the one call that generated something.
        generated = [o for o in batched if o.outputs and o.outputs[0].token_ids]
        sizes[str(k)] = capture.results(
            "offline-generate", generated, batch_seconds=round(t_batch, 3),
            loop_seconds=round(sum(t for t, _ in calls[:k]), 3),
            tokens=sum(len(o.outputs[0].token_ids) for o in batched),
            same_outputs=[a.outputs[0].text for a in batched] == [b.outputs[0].text for b in looped[:k]])
    return {"sizes": sizes, "loop_call_seconds": [round(t, 3) for t, _ in calls]}


def _prompts(k: int) -> list[str]:
    return [f"Write a short story about the number {i}." for i in range(k)]


def speedup(x: dict) -> float:
    return x["loop_seconds"] / x["batch_seconds"]


def decide_faster(d):
    x = d["sizes"][str(SIZES[-1])]
    return verdict_if(speedup(x) >= SPEEDUP_AT_16,
                      f"{SIZES[-1]} prompts: one call {x['batch_seconds']:.1f} s, one at a time {x['loop_seconds']:.1f} s "
                      f"({speedup(x):.1f}x; threshold {SPEEDUP_AT_16:.0f}x)")


def decide_grows(d):
    s = [speedup(d["sizes"][str(k)]) for k in SIZES]
    return verdict_if(all(b > a for a, b in zip(s, s[1:])),
                      "speed-up of one call over a loop: " + ", ".join(f"{k} prompts {v:.1f}x" for k, v in zip(SIZES, s)))


def decide_same(d):
    same = [k for k, x in d["sizes"].items() if x["same_outputs"]]
    return verdict_if(len(same) == len(SIZES), f"greedy outputs identical in one call and one at a time for "
                                               f"{len(same)} of {len(SIZES)} batch sizes")


# --- headline figures

_LARGEST = str(SIZES[-1])

HEADLINE = Headline({
    "one generate() call, 1 prompt (s)": lambda d: d["sizes"]["1"]["batch_seconds"],
    f"one generate() call, {_LARGEST} prompts (s)": lambda d: d["sizes"][_LARGEST]["batch_seconds"],
    f"one call per prompt, {_LARGEST} prompts (s)": lambda d: d["sizes"][_LARGEST]["loop_seconds"],
    f"speed-up of one call over a loop, {_LARGEST} prompts (x)": lambda d: speedup(d["sizes"][_LARGEST]),
}, TIMING_TOLERANCE, TIMING_WHY)


JOB = Job(
    id="offline-batching",
    title="One generate() call against a loop",
    question="How much faster is one generate() over many prompts than one call per prompt, and do the outputs "
             "change?",
    pages=("offline.md",),
    engine=OFFLINE,
    collect=collect,
    claims=(
        Claim("offline-batching.one-call-faster", f"One generate() call over {SIZES[-1]} prompts is several times "
              "faster than calling it once per prompt.", decide_faster, timing=True),
        Claim("offline-batching.speedup-grows", "The speed-up grew with each larger batch measured ("
              f"{', '.join(str(k) for k in SIZES)} prompts).", decide_grows, timing=True),
        Claim("offline-batching.same-outputs", "Greedy outputs were the same in one call and in one call per prompt, "
              "at every batch size measured.", decide_same),
    ),
    headline=HEADLINE,
)
