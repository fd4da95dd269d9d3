"""Getting-started article: its rule replays the notebook as executed against a live vLLM server, edited."""

from __future__ import annotations

import pytest

from tests.rules._records import PROFILES, check, decide, record

NOTEBOOK = "getting-started-notebook"


def _runs(data: dict, raised: int, silent: int, first_error: str | None = None) -> str:
    return (f"{len(data['code_cells'])} code cells ran against the live server; {raised} raised, {silent} printed "
            "nothing" + (f"; first error: {first_error}" if first_error else ""))


def _raise_in(cell: dict, output: int = 0) -> str:
    """The cell's output number `output` turned into an error, with the text it printed; that text."""
    out = cell["outputs"][output]
    out["type"] = "error"
    return out["text"]


@pytest.mark.parametrize("profile", PROFILES)
def test_every_cell_must_run_and_print(profile):
    data = record(NOTEBOOK, profile)
    cells = data["code_cells"]
    assert len(cells) >= 3 and all(c["outputs"] for c in cells)
    check(decide(NOTEBOOK, "runs", data), "confirmed", because=_runs(data, 0, 0))

    # One cell silent (its outputs lost): refuted, and counted.
    silent = record(NOTEBOOK, profile)
    silent["code_cells"][1]["outputs"] = []
    check(decide(NOTEBOOK, "runs", silent), "refuted", because=_runs(silent, 0, 1))

    # One cell raised: refuted, with its error.
    raised = record(NOTEBOOK, profile)
    text = _raise_in(raised["code_cells"][1])
    check(decide(NOTEBOOK, "runs", raised), "refuted", because=_runs(raised, 1, 0, text))

    # An error after output that printed: the cell still raised, and the first error is the earliest cell's.
    two = record(NOTEBOOK, profile)
    several = next(c for c in two["code_cells"][1:] if len(c["outputs"]) > 1)
    later = _raise_in(several, len(several["outputs"]) - 1)
    first = _raise_in(two["code_cells"][0])
    assert first != later
    check(decide(NOTEBOOK, "runs", two), "refuted", because=_runs(two, 2, 0, first))

    # Both at once: counted apart.
    both = record(NOTEBOOK, profile)
    text = _raise_in(both["code_cells"][2])
    both["code_cells"][1]["outputs"] = []
    check(decide(NOTEBOOK, "runs", both), "refuted", because=_runs(both, 1, 1, text))
