"""Sampling article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def every_refusal_names_its_parameter(d: dict) -> None:
    """parameter-validation.error-names-parameter: every refusal without error.param names there the
    parameter its message is about."""
    for case in d["cases"].values():
        error = (case.get("body") or {}).get("error")
        if isinstance(error, dict) and not error.get("param"):
            named = [p for p in case["params"] if p in (error.get("message") or "")]
            if named:
                error["param"] = named[0]


def unseeded_repeats(d: dict) -> None:
    """reproducibility.unseeded-varies: without a seed the server still samples the same answer every time."""
    row = d["unseeded"]["in_a_row"]
    row[:] = [row[0]] * len(row)


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "parameter-validation.error-names-parameter": every_refusal_names_its_parameter,
    "reproducibility.unseeded-varies": unseeded_repeats,
}
