"""Which metric names a running server exports, read with the page's own scrape snippet.

One request first, so that every family has its series; then /metrics is read
once raw (the exposition text, for the suffixes) and once through the snippet
(families, types, help). The names the page's recording and alert rules read are
taken from the rule snippets themselves.
"""

from __future__ import annotations

import re

from verify.job import Claim, Job, verdict_if

SNIPPET = "metrics/scrape.py"
RULE_SNIPPETS = ("metrics/recording-rules.yml", "metrics/alert-rules.yml")
# The metrics the page's table recommends, with the type the table gives each.
RECOMMENDED = {
    "vllm:num_requests_running": "gauge",
    "vllm:num_requests_waiting": "gauge",
    "vllm:kv_cache_usage_perc": "gauge",
    "vllm:num_preemptions": "counter",
    "vllm:request_success": "counter",
    "vllm:prompt_tokens": "counter",
    "vllm:generation_tokens": "counter",
    "vllm:prefix_cache_queries": "counter",
    "vllm:prefix_cache_hits": "counter",
    "vllm:time_to_first_token_seconds": "histogram",
    "vllm:inter_token_latency_seconds": "histogram",
    "vllm:e2e_request_latency_seconds": "histogram",
    "vllm:request_queue_time_seconds": "histogram",
}
# Names older dashboards query, renamed or removed since (vLLM's metrics design notes).
OLD_NAMES = ("vllm:gpu_cache_usage_perc", "vllm:gpu_prefix_cache_queries", "vllm:gpu_prefix_cache_hits",
             "vllm:time_per_output_token_seconds")
# Per-request figures that only some releases export.
PER_REQUEST_PREEMPTIONS = "vllm:request_num_preemptions"
CACHED_PROMPT_TOKENS = "vllm:prompt_tokens_cached"


def collect(ctx) -> dict:
    import httpx

    from verify.measure import capture
    families = ctx.snippet(SNIPPET).families
    rule_names = sorted({n for rel in RULE_SNIPPETS
                         for n in re.findall(r"\bvllm:[a-z0-9_]+", ctx.snippet_path(rel).read_text())})
    with httpx.Client(timeout=60) as client:
        first = client.post(ctx.base_url + "/completions",
                            json={"model": "chat", "prompt": "Name a colour.", "max_tokens": 8, "temperature": 0})
        raw = client.get(ctx.server.url + "/metrics")
    # The exposition's own series names (before any parser), one per line that carries a value.
    series = sorted({line.split("{")[0].split(" ")[0] for line in raw.text.splitlines()
                     if line.startswith("vllm:")})
    return {"request": capture.response(first),
            "scrape": capture.answer(raw, "scrape", expect_status=[200], series_count=len(series)),
            "series": series, "families": families(ctx.server.url), "rule_names": rule_names,
            # Per old name, whether any exported series carries it (with a suffix or without).
            "old_names_exported": {n: any(_base(s) == n for s in series) for n in OLD_NAMES}}


def _base(series: str) -> str:
    for suffix in ("_bucket", "_sum", "_count", "_total"):
        if series.endswith(suffix):
            return series.removesuffix(suffix)
    return series


def _series_names(d) -> set[str]:
    return set(d["series"])


def decide_rules_read_real_series(d):
    names = _series_names(d)
    # A rule reads a counter's series (with _total) or a histogram's (_bucket, _sum, _count) or a gauge.
    missing = [n for n in d["rule_names"] if n not in names]
    return verdict_if(bool(d["rule_names"]) and not missing,
                      f"the rules read {len(d['rule_names'])} series ({', '.join(d['rule_names'])}); "
                      + (f"not exported: {', '.join(missing)}" if missing else "every one is exported"))


def decide_recommended(d):
    fam = d["families"]
    wrong = {n: (fam.get(n) or {}).get("type") for n, t in RECOMMENDED.items() if (fam.get(n) or {}).get("type") != t}
    return verdict_if(not wrong, f"{len(RECOMMENDED) - len(wrong)} of {len(RECOMMENDED)} recommended metrics exported "
                      "with the type the table gives" +
                      (": " + ", ".join(f"{n} is {t or 'missing'}" for n, t in wrong.items()) if wrong else ""))


def decide_counters_total(d):
    names = _series_names(d)
    counters = sorted(n for n, f in d["families"].items() if f["type"] == "counter")
    with_total = [n for n in counters if n + "_total" in names]
    bare = [n for n in counters if n in names]
    return verdict_if(bool(counters) and len(with_total) == len(counters) and not bare,
                      f"{len(with_total)} of {len(counters)} counters exported as <name>_total; "
                      f"{len(bare)} also under the bare name" + (f" ({', '.join(bare)})" if bare else ""))


def decide_old_names_gone(d):
    present = [n for n, seen in d["old_names_exported"].items() if seen]
    return verdict_if(len(d["old_names_exported"]) == len(OLD_NAMES) and not present,
                      f"of {', '.join(OLD_NAMES)}: " +
                      (f"{', '.join(present)} still exported" if present else "none is exported"))


def decide_per_request_preemptions(d):
    fam = d["families"].get(PER_REQUEST_PREEMPTIONS)
    return verdict_if(bool(fam) and fam["type"] == "histogram",
                      f"{PER_REQUEST_PREEMPTIONS}: " + (f"exported, a {fam['type']}" if fam else "not exported"))


def decide_cached_prompt_tokens(d):
    fam = d["families"].get(CACHED_PROMPT_TOKENS)
    return verdict_if(bool(fam) and fam["type"] == "counter",
                      f"{CACHED_PROMPT_TOKENS}: " + (f"exported, a {fam['type']}" if fam else "not exported"))


def decide_histogram_named_total(d):
    fam = d["families"].get("vllm:iteration_tokens_total")
    return verdict_if(bool(fam) and fam["type"] == "histogram"
                      and "vllm:iteration_tokens_total_bucket" in _series_names(d),
                      "vllm:iteration_tokens_total: " + (f"a {fam['type']} with series "
                                                         f"{', '.join(sorted(fam['samples']))}" if fam else "not exported"))


JOB = Job(
    id="metric-names",
    title="The metric names a server exports",
    question="Which vllm: metric names does a running server export, with which types, and do the page's rules "
             "and the names older dashboards use match them?",
    pages=("metrics.md",),
    collect=collect,
    claims=(
        Claim("metric-names.rules-read-real-series", "Every vllm: series the page's recording and alert rules "
              "read is exported by the server.", decide_rules_read_real_series),
        Claim("metric-names.recommended-exported", "Every metric in the page's table is exported, with the type "
              "the table gives.", decide_recommended),
        Claim("metric-names.counters-total", "Every counter is exported only with a _total suffix: "
              "vllm:generation_tokens is not a series, vllm:generation_tokens_total is.", decide_counters_total),
        Claim("metric-names.old-names-gone", "The names older dashboards query (vllm:gpu_cache_usage_perc, "
              "vllm:gpu_prefix_cache_queries and _hits, vllm:time_per_output_token_seconds) are not exported.",
              decide_old_names_gone),
        Claim("metric-names.histogram-named-total", "vllm:iteration_tokens_total is a histogram, not a counter: "
              "its series are vllm:iteration_tokens_total_bucket, _sum and _count.", decide_histogram_named_total),
        Claim("metric-names.per-request-preemptions", "A histogram of preemptions per request, "
              "vllm:request_num_preemptions, is exported.", decide_per_request_preemptions),
        Claim("metric-names.cached-prompt-tokens", "A counter of prompt tokens served from the cache, "
              "vllm:prompt_tokens_cached_total, is exported.", decide_cached_prompt_tokens),
    ),
)
