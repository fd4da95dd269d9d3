"""KV cache blocks held as tokens arrive, for both max_tokens: the table and the chart."""

from __future__ import annotations

from verify.jobs.kv_cache import kv_reservation as job
from verify.site import charts, html


def figure(record) -> charts.XY:
    """KV cache blocks held against tokens generated, for both max_tokens, with the reservation line."""
    d = record["data"]
    small, large = d["small"], d["large"]
    reserved = job.blocks_needed(d, large["prompt_tokens"], large["max_tokens"])

    def held(readings):
        return tuple((n, job.blocks_at(d, u)) for n, u, *_ in readings)

    return charts.XY(
        title="KV cache blocks a request holds as its tokens arrive, for a small and a large max_tokens",
        x_label="tokens generated", y_label="KV cache blocks held",
        lines=(charts.Line(f"max_tokens {small['max_tokens']}", held(small["readings"][:-1]), tone=0, step=True),
               # the last reading of the small request is taken after it finished
               charts.Line(f"max_tokens {large['max_tokens']} (dashed: the same steps)", held(large["readings"]),
                           tone=4, dashed=True, step=True)),
        rules=(charts.Rule(reserved, f"a reservation up front for max_tokens {large['max_tokens']} would hold "
                                     f"{reserved} blocks", tone=1),),
        x_ticks=tuple(range(0, job.TOKENS + 1, 50)))


def fragment(record):
    d = record["data"]
    rows = []
    for key in ("small", "large"):
        r = d[key]
        levels = sorted({job.blocks_at(d, u) for _, u, *_ in r["readings"]})
        rows.append([r["max_tokens"], r["prompt_tokens"], len(r["readings"]),
                     " → ".join(map(str, levels)), job.blocks_needed(d, r["prompt_tokens"], r["max_tokens"])])
    return html.table([f"max_tokens (block size {d['block_size']}, {d['num_blocks']} blocks)", "prompt tokens",
                       "tokens generated", "blocks held as tokens arrived", "blocks a reservation would hold"], rows)


FRAGMENTS = {"table": fragment}
CHARTS = {"blocks": figure}
