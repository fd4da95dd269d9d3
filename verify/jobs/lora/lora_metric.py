"""vllm:lora_requests_info, read while three adapters are asked at once with --max-loras 1.

On the lora variant: /metrics is scraped every POLL_S while attn-a, attn-b and mlp-c each get the
first prompt at the same moment, and once more when all have answered. Each scrape keeps the
metric's samples (labels and value), the queue gauge beside it and the machine's Unix time when it
was read.
"""

from __future__ import annotations

import threading
import time

from verify.job import Claim, Job, verdict_if
from verify.jobs.lora._answers import SNIPPET
from verify.jobs.lora._together import body, text, together

METRIC = "vllm:lora_requests_info"
QUEUE = "vllm:num_requests_waiting"
ADAPTERS = ("attn-a", "attn-b", "mlp-c")
POLL_S = 0.2
# How far a sample's value may be from the scrape's Unix time and still read as "now".
CLOCK_TOLERANCE_S = 120
DAY_S = 86400


def _scrape(url: str) -> dict:
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    from verify.measure import capture
    unix = time.time()
    r = httpx.get(url + "/metrics", timeout=10.0)
    families = list(text_string_to_metric_families(r.text)) if r.status_code == 200 else []
    samples = [{"labels": dict(s.labels), "value": s.value} for f in families for s in f.samples if s.name == METRIC]
    waiting = [s.value for f in families for s in f.samples if s.name == QUEUE]
    return capture.answer(r, "scrape", unix_time=round(unix, 3), samples=samples,
                          waiting=sum(waiting) if waiting else None)


def collect(ctx) -> dict:
    from verify.measure import capture
    prompt = ctx.snippet(SNIPPET).PROMPTS[0]
    url = ctx.base_url + "/chat/completions"
    sent: list = []
    worker = threading.Thread(target=lambda: sent.extend(together(url, [body(a, prompt) for a in ADAPTERS])))
    during = []
    worker.start()
    while worker.is_alive():
        during.append(_scrape(ctx.server.url))
        time.sleep(POLL_S)
    worker.join()
    after = _scrape(ctx.server.url)
    return {"during": during, "after": after, "streams": capture.results(
        "streams", [s for s in sent if text(s)], statuses=[s["stream"]["status"] for s in sent])}


def _names(label: str) -> list[str]:
    return [n for n in label.split(",") if n]


def decide_timestamp(d):
    scrapes = [*d["during"], d["after"]]
    values = [(s["unix_time"], x["value"]) for s in scrapes for x in s["samples"]]
    if not values:
        return verdict_if(None, f"no {METRIC} sample in {len(scrapes)} scrapes")
    # A time in the past day, no later than the scrape (a count of requests would be a small number);
    # the newest series of each scrape is "now", set at the server's last stats update.
    past = sum(unix - DAY_S <= v <= unix + CLOCK_TOLERANCE_S for unix, v in values)
    newest = [(s["unix_time"], max(x["value"] for x in s["samples"])) for s in scrapes if s["samples"]]
    now = sum(abs(unix - v) <= CLOCK_TOLERANCE_S for unix, v in newest)
    return verdict_if(past == len(values) and now == len(newest),
                      f"{past} of {len(values)} sample values are Unix times in the day before their scrape; the newest "
                      f"series of {now} of {len(newest)} scrapes lies within {CLOCK_TOLERANCE_S} s of the scrape's own "
                      f"Unix time (the last: {newest[-1][1]:.1f} at {newest[-1][0]:.1f})")


def _labels(sample: dict) -> tuple[set[str], set[str]]:
    labels = sample["labels"]
    return set(_names(labels.get("running_lora_adapters", ""))), set(_names(labels.get("waiting_lora_adapters", "")))


def decide_waiting_named(d):
    """Only scrapes in which requests waited (the queue gauge above 0) can show whom the waiting label
    names; of those, the ones whose newest series names any adapter. The three requests are for three
    adapters and one runs at a time, so a waiting request's adapter is never the one running."""
    waited = [s for s in d["during"] if (s.get("waiting") or 0) > 0 and s["samples"]]
    current = [max(s["samples"], key=lambda x: x["value"]) for s in waited]
    named = [c for c in current if _labels(c)[0] or _labels(c)[1]]
    queued = [c for c in named if _labels(c)[1] - _labels(c)[0]]
    alike = sum(_labels(c)[0] == _labels(c)[1] for c in named)
    because = (f"{len(waited)} of {len(d['during'])} scrapes during the requests caught requests waiting; in "
               f"{len(named)} of them the newest series names an adapter, and in {len(queued)} its waiting label names "
               f"an adapter that is not running; {alike} named the same adapter running and waiting" +
               (f"; e.g. {named[0]['labels']}" if named else ""))
    if not named:
        return verdict_if(None, because + " (no scrape with requests waiting names any adapter)")
    if 0 < len(queued) < len(named):
        # The label and the gauge are set at different moments: some scrapes may catch one before the other.
        return verdict_if(None, because + " (some scrapes name the waiting adapters and some do not)")
    return verdict_if(len(queued) == len(named), because)


def decide_queue_counted(d):
    counts = [s["waiting"] for s in d["during"]]
    if not counts or any(c is None for c in counts) or d["after"].get("waiting") is None:
        return verdict_if(None, f"{QUEUE} missing from a scrape")
    # Three requests, one adapter decoding at a time: two wait while the first decodes, none after.
    return verdict_if(max(counts) == len(ADAPTERS) - 1 and d["after"]["waiting"] == 0,
                      f"{QUEUE} during the requests: highest {max(counts):.0f}, over {len(counts)} scrapes; after "
                      f"them: {d['after']['waiting']:.0f}")


def decide_old_series_stay(d):
    # Series of this job's adapters only: other jobs on the same server leave series of their own.
    samples = [x for x in d["after"]["samples"] if _labels(x)[0] | _labels(x)[1] <= set(ADAPTERS)]
    if not samples:
        return verdict_if(None, f"no {METRIC} sample after the requests")
    newest = max(samples, key=lambda x: x["value"])
    idle = not newest["labels"].get("running_lora_adapters") and not newest["labels"].get("waiting_lora_adapters")
    named = [x for x in samples if _labels(x)[0] or _labels(x)[1]]
    return verdict_if(idle and len(named) > 0,
                      f"after every request had answered: {len(samples)} series, {len(named)} still naming adapters; "
                      f"the newest names {'none' if idle else newest['labels']}")


JOB = Job(
    id="lora-metric",
    title="The LoRA metric",
    question="What does vllm:lora_requests_info report, while adapters queue and after?",
    pages=("lora.md",),
    collect=collect,
    variant="lora",
    claims=(
        Claim("lora-metric.timestamp", f"The value of {METRIC} is a Unix time (when its labels were last set), "
              "not a count of requests.", decide_timestamp),
        Claim("lora-metric.waiting-named", "While requests for three adapters take turns on --max-loras 1, the "
              "waiting label of its newest series names the adapters whose requests wait.", decide_waiting_named),
        Claim("lora-metric.queue-counted", f"{QUEUE} counts the requests waiting for an adapter's turn: two of "
              "the three at its highest, none once all have answered.", decide_queue_counted),
        Claim("lora-metric.old-series-stay", "Series of earlier states stay in /metrics after the requests end: "
              "only the one with the largest value is the current state.", decide_old_series_stay),
    ),
)
