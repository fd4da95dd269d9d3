"""Structured outputs article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

import json
from typing import Callable


def unconstrained_answers_fit(d: dict) -> None:
    """constraint-kinds.unconstrained-misses: the prompt alone does the work: each unconstrained answer is
    what the constrained one of the same way was."""
    for way, control in d["unconstrained"].items():
        for free, held in zip(control["samples"], d["ways"][way]["samples"]):
            free["text"] = held["text"]


def request_option_honoured(d: dict) -> None:
    """json-whitespace.request-option: the request's disable_any_whitespace is read: every answer with it is
    compact JSON that ended by itself."""
    from verify.jobs.structured_outputs.json_whitespace import OPTION
    for s in d["ways"][OPTION]["samples"]:
        s["text"], s["finish_reason"] = json.dumps({"name": "Ada", "age": 36}, separators=(",", ":")), "stop"


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "json-whitespace.request-option": request_option_honoured,
    "constraint-kinds.unconstrained-misses": unconstrained_answers_fit,
}
