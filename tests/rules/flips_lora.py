"""LoRA article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

import copy
from typing import Callable


def waiting_label_names_the_queue(d: dict) -> None:
    """lora-metric.waiting-named: in every scrape that caught requests waiting, the newest series' waiting
    label names adapters that are not running, as many as the queue gauge counts."""
    from verify.jobs.lora.lora_metric import ADAPTERS
    for scrape in d["during"]:
        if (scrape.get("waiting") or 0) > 0 and scrape["samples"]:
            newest = max(scrape["samples"], key=lambda x: x["value"])
            running = [n for n in newest["labels"].get("running_lora_adapters", "").split(",") if n]
            others = [a for a in ADAPTERS if a not in running]
            newest["labels"]["waiting_lora_adapters"] = ",".join(others[:int(scrape["waiting"])])


def rank_refused_as_client_error(d: dict) -> None:
    """lora-runtime.rank-client-error: the server answers a rank it does not allow with HTTP 400."""
    d["steps"]["load_rank_32"]["status"] = 400


def two_adapters_answer_alike(d: dict) -> None:
    """lora-served.distinct: two adapters with the same effect: attn-b answers every prompt as attn-a."""
    by = d["answers"]["by_model"]
    by["attn-b"] = copy.deepcopy(by["attn-a"])


def skipped_modules_warned(d: dict) -> None:
    """lora-target-modules.silent: the server warns that the adapter's MLP modules are not applied."""
    d["log"]["lines"].append("WARNING lora: mlp-c targets gate_proj, up_proj, down_proj, outside --lora-target-modules")


def second_slot_keeps_base_apart(d: dict) -> None:
    """lora-max-loras.base-changed: a base-model token reads no adapter's weights: each base-model request
    beside attn-a streams, at its own arrival times, what it streamed alone."""
    from verify.jobs.lora._answers import BASE
    alone = d["alone"]["base:x"]["stream"]["lines"]
    for t in d["trials"]:
        for s in t["mixed"]:
            if s["model"] == BASE:
                s["stream"]["lines"] = [{**line, "line": a["line"]} for line, a in zip(s["stream"]["lines"], alone)]


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "lora-metric.waiting-named": waiting_label_names_the_queue,
    "lora-max-loras.base-changed": second_slot_keeps_base_apart,
    "lora-runtime.rank-client-error": rank_refused_as_client_error,
    "lora-served.distinct": two_adapters_answer_alike,
    "lora-target-modules.silent": skipped_modules_warned,
}
