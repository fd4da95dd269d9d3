"""Base-model and adapter requests at once: does each get its answer alone? And with --max-loras 1?

On the lora variant (at most one adapter in a batch, two kept in memory). Every request is a
greedy stream; answers alone are asked first, one at a time. Then TRIALS times each:
- mixed: attn-a asked the second prompt and the base model asked the first, 0.1 s apart (the
  order alternates), so both decode at once;
- control: the base model asked both prompts, 0.1 s apart;
- three adapters: attn-a, attn-b and mlp-c asked the first prompt at the same moment;
- one adapter: attn-a asked the first prompt three times at the same moment.
The streams' arrival times show which requests decoded at the same time (TOGETHER says how much
two spans must share to count).
"""

from __future__ import annotations

from itertools import combinations

from verify.job import Claim, Job, verdict_if
from verify.jobs.lora._answers import BASE, SNIPPET
from verify.jobs.lora._together import body, shared, span, text, together

TRIALS = 3
STAGGER_S = 0.1
ADAPTERS = ("attn-a", "attn-b", "mlp-c")
# Two requests decoded together when they share more than this share of the shorter one's span: arrival
# times at the client lag behind the engine when the API server is busy, so a touch is not a batch.
TOGETHER = 0.5


def collect(ctx) -> dict:
    from verify.measure import capture
    prompts = ctx.snippet(SNIPPET).PROMPTS
    x, y = prompts
    url = ctx.base_url + "/chat/completions"
    alone_cases = {"base:x": (BASE, x), "base:y": (BASE, y), **{f"{a}:x": (a, x) for a in ADAPTERS},
                   "attn-a:y": ("attn-a", y)}
    alone = {k: together(url, [body(*mp)])[0] for k, mp in alone_cases.items()}
    trials = []
    for i in range(TRIALS):
        mixed_order = [("base:x", BASE, x), ("attn-a:y", "attn-a", y)]
        if i % 2:
            mixed_order.reverse()
        trials.append({
            "mixed": _labelled(mixed_order, together(url, [body(m, p) for _, m, p in mixed_order], STAGGER_S)),
            "control": _labelled([("base:x", BASE, x), ("base:y", BASE, y)],
                                 together(url, [body(BASE, x), body(BASE, y)], STAGGER_S)),
            "three_adapters": _labelled([(f"{a}:x", a, x) for a in ADAPTERS],
                                        together(url, [body(a, x) for a in ADAPTERS])),
            "one_adapter": _labelled([("attn-a:x", "attn-a", x)] * 3, together(url, [body("attn-a", x)] * 3)),
        })
    every = list(alone.values()) + [s for t in trials for group in t.values() for s in group]
    return {"alone": alone, "trials": trials,
            "streams": capture.results("streams", [s for s in every if text(s)],
                                       statuses=[s["stream"]["status"] for s in every])}


def _labelled(cases: list[tuple[str, str, str]], sent: list[dict]) -> list[dict]:
    return [{"case": case, "model": model, **s} for (case, model, _), s in zip(cases, sent)]


def _vs_alone(d, group: str, model_filter) -> tuple[int, int, int]:
    """(equal to alone, differing, decoded together with another of its group) over the trials, for the
    requests of `group` whose model passes model_filter; requests that did not decode together are left out."""
    equal = differ = together_ = 0
    for t in d["trials"]:
        sent = t[group]
        for s in sent:
            if not model_filter(s["model"]):
                continue
            if not any(shared(span(s), span(o)) > TOGETHER for o in sent if o is not s):
                continue
            together_ += 1
            if text(s) == text(d["alone"][s["case"]]):
                equal += 1
            else:
                differ += 1
    return equal, differ, together_


def decide_adapter_unchanged(d):
    equal, differ, n = _vs_alone(d, "mixed", lambda m: m != BASE)
    return verdict_if(n > 0 and equal == n if n else None,
                      f"{equal} of {n} adapter requests decoded beside a base-model request answered as alone")


def decide_base_changed(d):
    equal, differ, n = _vs_alone(d, "mixed", lambda m: m == BASE)
    c_equal, c_differ, c_n = _vs_alone(d, "control", lambda m: True)
    if not n or not c_n:
        return verdict_if(None, "no base-model request decoded together with another request")
    return verdict_if(differ == n and c_equal == c_n,
                      f"{differ} of {n} base-model requests decoded beside an adapter request answered differently "
                      f"from alone; beside another base-model request, {c_equal} of {c_n} answered as alone")


def _pairs_sharing(sent: list[dict]) -> int:
    """Pairs of a group that decoded together: they share more than TOGETHER of the shorter one's span."""
    return sum(shared(span(a), span(b)) > TOGETHER for a, b in combinations(sent, 2))


def decide_one_adapter_at_a_time(d):
    pairs = sum(len(list(combinations(t["three_adapters"], 2))) for t in d["trials"])
    different = sum(_pairs_sharing(t["three_adapters"]) for t in d["trials"])
    same = sum(_pairs_sharing(t["one_adapter"]) for t in d["trials"])
    same_pairs = sum(len(list(combinations(t["one_adapter"], 2))) for t in d["trials"])
    all_spans = all(span(s) for t in d["trials"] for g in ("three_adapters", "one_adapter") for s in t[g])
    return verdict_if(different == 0 and same == same_pairs if all_spans else None,
                      f"requests for three different adapters sent at once: {different} of {pairs} pairs decoded "
                      f"together; three requests for one adapter: {same} of {same_pairs} pairs did (together: sharing "
                      f"more than {TOGETHER:.0%} of the shorter one's first-to-last-token span)")


def decide_swapped_answers_kept(d):
    sent = [s for t in d["trials"] for s in t["three_adapters"]]
    equal = sum(text(s) is not None and text(s) == text(d["alone"][s["case"]]) for s in sent)
    return verdict_if(equal == len(sent) if sent else None,
                      f"{equal} of {len(sent)} requests for three adapters at once (two fit in memory) answered as alone")


JOB = Job(
    id="lora-batching",
    title="Adapters and the base model in one batch",
    question="Does a request answer the same beside requests for other adapters or the base model as alone, and "
             "how many adapters decode at once with --max-loras 1?",
    pages=("lora.md",),
    collect=collect,
    variant="lora",
    claims=(
        Claim("lora-batching.adapter-unchanged", "An adapter request decoded in the same batch as a base-model "
              "request gets its answer alone.", decide_adapter_unchanged),
        Claim("lora-batching.base-changed", "On the CPU build, a base-model request decoded in the same batch as "
              "an adapter request gets a different answer from its answer alone; beside another base-model "
              "request it does not.", decide_base_changed),
        Claim("lora-batching.one-adapter-at-a-time", "With --max-loras 1, requests for different adapters sent at "
              "once decode one after another; requests for one adapter decode together.",
              decide_one_adapter_at_a_time),
        Claim("lora-batching.swapped-answers-kept", "Requests for three adapters at once, on a server that keeps "
              "two in memory (--max-cpu-loras 2), each get their answer alone.", decide_swapped_answers_kept),
    ),
)
