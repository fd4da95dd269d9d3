"""The evidence of verify/jobs/offline/offline_vs_server.py on a page."""

from __future__ import annotations

from verify.jobs.offline import offline_vs_server as job
from verify.measure.stats import summary
from verify.site import html


def fragment(record) -> str:
    d = record["data"]
    off, srv = d["offline"], d["server"]
    o, s = summary([job.throughput(t, d) for t in off["trials"]]), summary([job.throughput(t, d) for t in srv["trials"]])
    rows = [
        ["sequence limit; requests running at once",
         f"limit {off['limits']['max_num_seqs']} (the engine's configuration; running count not observed)",
         f"at most {max(t['peak_running'] for t in srv['trials']):.0f} running, "
         f"up to {max(t['peak_waiting'] for t in srv['trials']):.0f} waiting (observed)"],
        [f"throughput, tokens/s (median of {job.trials_text(d)}; min to max)", f"{o['median']:.0f} ({o['min']:.0f} to {o['max']:.0f})",
         f"{s['median']:.0f} ({s['min']:.0f} to {s['max']:.0f})"],
        ["start-up from a fresh process, s (the run's own starts)",
         f"{job.span_text(off['starts_s'])} ({len(off['starts_s'])} start), launch to constructed" if off["starts_s"] else "not timed",
         f"{job.span_text(srv['starts_s'])} ({len(srv['starts_s'])} starts), launch to healthy" if srv["starts_s"] else "not timed"],
    ]
    return html.table([f"{d['prompts']} prompts x {d['max_tokens']} tokens", "vllm.LLM, one generate()",
                       "server, every request at once"], rows)


FRAGMENTS = {"table": fragment}
