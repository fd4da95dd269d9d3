"""How the evidence of the sampling article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from verify.jobs.sampling import parameter_validation, reproducibility, sampling_behaviour, structured_output
from verify.site import html
from verify.site.views import View


# parameter-validation
def parameter_validation_table(record):
    d = record["data"]
    errors = {n: parameter_validation.error_of(d, n) for n in parameter_validation.CASES}
    rows = [[n, d["cases"][n]["status"], errors[n].get("param") or "", errors[n].get("message", "")[:140]]
            for n in parameter_validation.CASES]
    return html.table(["request", "HTTP status", "error.param", "error.message"], rows)


# reproducibility
def reproducibility_table(record):
    rows = []
    for name in ("greedy", "seeded", "unseeded"):
        x = record["data"][name]
        first = x["in_a_row"][0]
        rows.append([name, ", ".join(f"{k}={v}" for k, v in x["params"].items()),
                     f"{reproducibility.distinct_count(x['in_a_row'])} of {len(x['in_a_row'])}",
                     f"{sum(a == first for a in x['among_others'])} of {len(x['among_others'])}", first])
    return html.table(["sampling", "parameters", "distinct answers in a row", "same answer among others",
                       "first answer"], rows)


# sampling-behaviour
def sampling_behaviour_stop(record):
    d = record["data"]
    rows = [["stop ', 4'", d["stop"]["False"]["text"], d["stop"]["False"]["finish_reason"], d["stop"]["False"]["stop_reason"]],
            ["stop ', 4', include_stop_str_in_output", d["stop"]["True"]["text"], d["stop"]["True"]["finish_reason"],
             d["stop"]["True"]["stop_reason"]]]
    return html.table(["request", "text", "finish_reason", "stop_reason"], rows)


def sampling_behaviour_logprobs(record):
    d = record["data"]
    tops = {t: sampling_behaviour.top_logprobs(d, t) for t in sampling_behaviour.TEMPERATURES}
    tokens = sorted(set().union(*tops.values()), key=lambda tok: -max(x.get(tok, -99) for x in tops.values()))
    rows = [[repr(tok)] + [f"{tops[t][tok]:.4f}" if tok in tops[t] else "" for t in sampling_behaviour.TEMPERATURES]
            for tok in tokens]
    return html.table(["first token"] + [f"logprob at temperature {t}" for t in sampling_behaviour.TEMPERATURES], rows)


# structured-output
def structured_output_samples(record):
    d = record["data"]
    rows = [[way, s["text"], "yes" if structured_output.valid_answer(s["text"]) else "no", s["tokens"],
             f"{s['seconds']:.2f} s"] for way in ("constrained", "unconstrained") for s in d[way]["samples"][:4]]
    return html.table(["request", "answer", "matches the schema", "tokens", "time"], rows)


VIEWS = {
    "parameter-validation": View(fragments={"table": parameter_validation_table}),
    "reproducibility": View(fragments={"table": reproducibility_table}),
    "sampling-behaviour": View(fragments={"stop": sampling_behaviour_stop,
                                          "logprobs": sampling_behaviour_logprobs}),
    "structured-output": View(fragments={"samples": structured_output_samples}),
}
