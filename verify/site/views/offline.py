"""How the evidence of the offline article looks on its page: its jobs' views, by job id."""

from __future__ import annotations

from verify.jobs.offline import offline_batching, offline_generation_defaults, offline_vs_server
from verify.measure.stats import summary
from verify.site import charts, html
from verify.site.views import View


# offline-batching
def offline_batching_speedup_chart(record) -> charts.Bars:
    """How many times faster one generate() call over all the prompts is than a loop of one call per prompt."""
    d = record["data"]
    speedups = [(k, offline_batching.speedup(d["sizes"][str(k)])) for k in offline_batching.SIZES]
    return charts.Bars(
        title="How many times faster one generate() call is than one call per prompt, by number of prompts",
        x_label=f"prompts ({offline_batching.MAX_TOKENS} tokens each)", y_label="speed-up of one call over a loop",
        bars=tuple(charts.Bar(str(k), s, f"{s:.1f}x") for k, s in speedups), tone=0)


def offline_batching_table(record):
    rows = [[k, f"{x['batch_seconds']:.2f} s", f"{x['loop_seconds']:.2f} s", f"{offline_batching.speedup(x):.1f}x",
             "identical" if x["same_outputs"] else "different"] for k, x in record["data"]["sizes"].items()]
    return html.table([f"prompts ({offline_batching.MAX_TOKENS} tokens each)", "one generate() call",
                       "one call per prompt", "speed-up", "greedy outputs"], rows)


# offline-chat
def offline_chat_table(record):
    d = record["data"]
    return html.table(["call", "prompt tokens", "greedy answer"], [
        ["llm.chat()", len(d["chat"]["prompt_token_ids"]), d["chat"]["text"]],
        ["llm.generate()", len(d["generate"]["prompt_token_ids"]), d["generate"]["text"]],
    ]) + html.pre(d["chat"]["prompt"].splitlines(), "the prompt chat() sent, decoded")


# offline-defaults
def offline_defaults_outputs(record):
    rows = [[i, r["prompt"], r["tokens"], r["finish_reason"], r["text"]]
            for i, r in enumerate(record["data"]["generate"]["results"])]
    return html.table(["#", "prompt", "tokens", "finish_reason", "text"], rows)


# offline-generation-defaults
def offline_generation_defaults_settings(record) -> str:
    d = record["data"]
    fields = ("temperature", "top_p", "top_k", "repetition_penalty", "max_tokens")
    model = {**d["model_defaults"], "max_tokens": d["model_defaults"]["max_new_tokens"]}
    ways = list(d["ways"])
    rows = [[k, str(model[k]), *(str(d["ways"][w]["settings"][k]) for w in ways)] for k in fields]
    rows.append(["answer lengths, tokens (finish reason)", "",
                 *(offline_generation_defaults.lengths_text(d["ways"][w]["outputs"]) for w in ways)])
    return html.table(["field", "the copy's generation_config.json", *ways], rows)


def offline_generation_defaults_server(record) -> str:
    rows = [[label, offline_generation_defaults.lengths_text(x["answers"])]
            for label, x in record["data"]["server"].items()]
    return html.table(["chat request sets", "completion tokens (finish reason), per prompt"], rows)


# offline-vs-server
def offline_vs_server_table(record) -> str:
    d = record["data"]
    off, srv = d["offline"], d["server"]
    o = summary([offline_vs_server.throughput(t, d) for t in off["trials"]])
    s = summary([offline_vs_server.throughput(t, d) for t in srv["trials"]])
    rows = [
        ["sequence limit; requests running at once",
         f"limit {off['limits']['max_num_seqs']} (the engine's configuration; running count not observed)",
         f"at most {max(t['peak_running'] for t in srv['trials']):.0f} running, "
         f"up to {max(t['peak_waiting'] for t in srv['trials']):.0f} waiting (observed)"],
        [f"throughput, tokens/s (median of {offline_vs_server.trials_text(d)}; min to max)",
         f"{o['median']:.0f} ({o['min']:.0f} to {o['max']:.0f})", f"{s['median']:.0f} ({s['min']:.0f} to {s['max']:.0f})"],
        ["start-up from a fresh process, s (the run's own starts)",
         f"{offline_vs_server.span_text(off['starts_s'])} ({len(off['starts_s'])} start), launch to constructed"
         if off["starts_s"] else "not timed",
         f"{offline_vs_server.span_text(srv['starts_s'])} ({len(srv['starts_s'])} starts), launch to healthy"
         if srv["starts_s"] else "not timed"],
    ]
    return html.table([f"{d['prompts']} prompts x {d['max_tokens']} tokens", "vllm.LLM, one generate()",
                       "server, every request at once"], rows)


VIEWS = {
    "offline-batching": View(fragments={"table": offline_batching_table},
                             charts={"speedup": offline_batching_speedup_chart}),
    "offline-chat": View(fragments={"table": offline_chat_table}),
    "offline-defaults": View(fragments={"outputs": offline_defaults_outputs}),
    "offline-generation-defaults": View(fragments={"settings": offline_generation_defaults_settings,
                                                   "server": offline_generation_defaults_server}),
    "offline-vs-server": View(fragments={"table": offline_vs_server_table}),
}
