"""With --max-loras 2: how many adapters decode at once, and what a second slot changes for answers.

On the lora-max-2 variant (two adapters in a batch, all three kept in memory, so nothing is
swapped). Every request is a greedy stream; answers alone are asked first, one at a time. Then
TRIALS times each, in this order:
- three adapters: attn-a, attn-b and mlp-c asked the first prompt at the same moment;
- two adapters: attn-a and attn-b asked the first prompt at the same moment (their answers alone
  differ, so one answering as the other would show);
- mixed: attn-a asked the second prompt and the base model the first, 0.1 s apart (the order
  alternates), as in lora-batching on the one-slot server.
Which requests decoded at the same time is read from the streams' arrival times, by the rule of
lora-batching (TOGETHER).
"""

from __future__ import annotations

from itertools import combinations

from verify.job import Claim, Job, verdict_if
from verify.jobs.lora._answers import BASE, SNIPPET
from verify.jobs.lora._together import body, shared, span, text, together
from verify.jobs.lora.lora_batching import STAGGER_S, TOGETHER

TRIALS = 3
ADAPTERS = ("attn-a", "attn-b", "mlp-c")
SLOTS = 2  # --max-loras of the variant
# The third request "starts once both of the pair finished": its first token comes no earlier than this
# before the later of the pair's last tokens (1-2 ms after it in the records; arrivals at the client, so a
# busy API server may deliver one stream's first token a little before another's last). The pair's two
# ends lie 0.40-0.59 s apart; a trial whose pair ended closer together than twice this cannot tell "after
# both" from "after one".
AFTER_BOTH_S = 0.05
# Trials whose pair finished far enough apart to tell "after both" from "after one" that the verdict needs.
TELLING_TRIALS = 2
# "Sent at once" means every request of a trial was sent before any of them finished (the sends
# spread over a few tenths of a second as the client's threads start; on a busy machine once over a
# second): a request sent after another one finished finds a slot free, and the order of service
# then says nothing about slots.


def collect(ctx) -> dict:
    from verify.measure import capture
    x, y = ctx.snippet(SNIPPET).PROMPTS
    url = ctx.base_url + "/chat/completions"
    alone_cases = {"base:x": (BASE, x), **{f"{a}:x": (a, x) for a in ADAPTERS}, "attn-a:y": ("attn-a", y)}
    alone = {k: together(url, [body(*mp)])[0] for k, mp in alone_cases.items()}
    trials = []
    for i in range(TRIALS):
        three = [(f"{a}:x", a, x) for a in ADAPTERS]
        two = [("attn-a:x", "attn-a", x), ("attn-b:x", "attn-b", x)]
        mixed = [("base:x", BASE, x), ("attn-a:y", "attn-a", y)]
        if i % 2:
            mixed.reverse()
        trials.append({
            "three_adapters": _labelled(three, together(url, [body(m, p) for _, m, p in three])),
            "two_adapters": _labelled(two, together(url, [body(m, p) for _, m, p in two])),
            "mixed": _labelled(mixed, together(url, [body(m, p) for _, m, p in mixed], STAGGER_S)),
        })
    every = list(alone.values()) + [s for t in trials for group in t.values() for s in group]
    return {"alone": alone, "trials": trials, "slots": SLOTS,
            "streams": capture.results("streams", [s for s in every if text(s)],
                                       statuses=[s["stream"]["status"] for s in every])}


def _labelled(cases: list[tuple[str, str, str]], sent: list[dict]) -> list[dict]:
    return [{"case": case, "model": model, **s} for (case, model, _), s in zip(cases, sent)]


def _beside_another(s: dict, group: list[dict]) -> bool:
    return any(shared(span(s), span(o)) > TOGETHER for o in group if o is not s)


GROUP_SIZES = {"three_adapters": 3, "two_adapters": 2, "mixed": 2}


def _complete(d) -> bool:
    """Every capture answered: each answer alone, and every stream of every trial with text. A failed
    capture makes the claims inconclusive, never the verdict the page expects."""
    return (len(d["trials"]) == TRIALS and all(text(s) for s in d["alone"].values())
            and all(set(t) == set(GROUP_SIZES) and all(len(t[g]) == n for g, n in GROUP_SIZES.items())
                    for t in d["trials"])
            and all(text(s) and span(s) for t in d["trials"] for group in t.values() for s in group))


def pairs_together(group: list[dict]) -> int:
    return sum(shared(span(a), span(b)) > TOGETHER for a, b in combinations(group, 2))


def third_waited_s(group: list[dict]) -> tuple[float, float] | None:
    """For three requests of which exactly one pair decoded together: how long after the first, and after
    the last, of the pair finished the third's first token came (negative: before). None otherwise."""
    pairs = [(a, b) for a, b in combinations(group, 2) if shared(span(a), span(b)) > TOGETHER]
    if len(pairs) != 1:
        return None
    third = next(s for s in group if all(s is not x for x in pairs[0]))
    ends = sorted(span(x)[1] for x in pairs[0])
    return span(third)[0] - ends[0], span(third)[0] - ends[1]


def decide_two_at_a_time(d):
    if not _complete(d):
        return verdict_if(None, "a capture failed (an error status or a stream without text)")
    per_trial = [pairs_together(t["three_adapters"]) for t in d["trials"]]
    two = [pairs_together(t["two_adapters"]) for t in d["trials"]]
    waited = [third_waited_s(t["three_adapters"]) for t in d["trials"]]
    because = (f"three different adapters sent at once: pairs that decoded together in each trial {per_trial} of 3; "
               "the third's first token after the first and the last of the pair finished: " +
               ", ".join("n/a" if w is None else f"{w[0] * 1000:+.0f} ms and {w[1] * 1000:+.0f} ms" for w in waited) +
               f" (no earlier than {AFTER_BOTH_S * 1000:.0f} ms before the last required); two different adapters sent "
               f"at once: {two} of 1 pair decoded together")
    apart = [max(x["started_s"] for x in t["three_adapters"]) - min(span(x)[1] for x in t["three_adapters"])
             for t in d["trials"]]
    if any(a >= 0 for a in apart):
        return verdict_if(None, because + "; the three were not all sent before the first of them finished in every "
                          "trial (last send after the first end: " + ", ".join(f"{a:+.2f} s" for a in apart) + ")")
    if not (all(n == 1 for n in per_trial) and all(n == 1 for n in two)):
        return verdict_if(False, because)
    # Three requests with two slots: one pair decodes together, the third once both of them have finished.
    # A trial whose pair finished together cannot tell "after both" from "after one" (it still must not
    # have the third start before them); the verdict needs at least TELLING_TRIALS trials that can.
    telling = [w for w in waited if w[0] - w[1] > 2 * AFTER_BOTH_S]
    if not all(w[1] >= -AFTER_BOTH_S for w in waited):
        return verdict_if(False, because)
    if len(telling) < TELLING_TRIALS:
        return verdict_if(None, because + f"; only {len(telling)} trial(s) had the pair finish more than "
                                          f"{2 * AFTER_BOTH_S * 1000:.0f} ms apart, so whether the third waited for one or "
                                          f"for both cannot be told ({TELLING_TRIALS} needed)")
    return verdict_if(True, because + f"; {len(telling)} of {len(waited)} trials tell both from one")


def _vs_alone(d, groups: tuple[str, ...], model_filter) -> tuple[int, int]:
    """(answered as alone, decoded beside another request of its group) over the trials."""
    equal = n = 0
    for t in d["trials"]:
        for g in groups:
            for s in t[g]:
                if model_filter(s["model"]) and _beside_another(s, t[g]):
                    n += 1
                    equal += text(s) is not None and text(s) == text(d["alone"][s["case"]])
    return equal, n


def decide_adapters_apart(d):
    if not _complete(d):
        return verdict_if(None, "a capture failed (an error status or a stream without text)")
    equal, n = _vs_alone(d, ("three_adapters", "two_adapters"), lambda m: m != BASE)
    return verdict_if(equal == n if n else None,
                      f"{equal} of {n} adapter requests decoded beside a request for another adapter answered "
                      "as alone")


def base_answers(d) -> list[dict]:
    """Each base-model request of the mixed groups that decoded beside the adapter request: whether it
    answered as alone, and which adapter's answer alone (to the same prompt) it equals, if any."""
    out = []
    for i, t in enumerate(d["trials"], 1):
        for s in t["mixed"]:
            if s["model"] != BASE or not _beside_another(s, t["mixed"]):
                continue
            got = text(s)
            like = [a for a in ADAPTERS if got is not None and got == text(d["alone"][f"{a}:x"])]
            out.append({"trial": i, "as_alone": got is not None and got == text(d["alone"]["base:x"]),
                        "like": like})
    return out


def decide_base_changed(d):
    if not _complete(d):
        return verdict_if(None, "a capture failed (an error status or a stream without text)")
    rows = base_answers(d)
    changed = sum(not r["as_alone"] for r in rows)
    like = {a: sum(a in r["like"] for r in rows) for a in ADAPTERS}
    return verdict_if(changed == len(rows) if rows else None,
                      f"{changed} of {len(rows)} base-model requests decoded beside an attn-a request answered "
                      "differently from alone" + "".join(f"; {n} of them as {a} answers alone"
                                                         for a, n in like.items() if n))


JOB = Job(
    id="lora-max-loras",
    title="Two adapters in a batch",
    question="With --max-loras 2, how many different adapters decode at once, do their answers stay their own, "
             "and does the base model beside an adapter answer as alone?",
    pages=("lora.md",),
    collect=collect,
    variant="lora-max-2",
    claims=(
        # A timing claim: which requests decode together depends on their arriving together; measured beside a
        # second engine, the client's sends spread out and the verdict flipped (two of three trials told nothing).
        Claim("lora-max-loras.two-at-a-time", "With --max-loras 2, of three requests for different adapters "
              "sent at once two decode together and the third starts only once both of them have finished; two "
              "such requests decode together.",
              decide_two_at_a_time, timing=True),
        Claim("lora-max-loras.adapters-apart", "Requests for different adapters decoded in one batch each get "
              "their answer alone.", decide_adapters_apart),
        Claim("lora-max-loras.base-changed", "With --max-loras 2, a base-model request decoded beside an adapter "
              "request still gets a different answer from its answer alone (CPU build).", decide_base_changed),
    ),
)
