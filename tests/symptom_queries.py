"""The PromQL of the symptom index's query files (snippets/symptoms/*.promql), as a reader pastes it: the
comment lines left out. Shared by the tests that run those files against the live server and the engine
tier's own server."""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent.parent / "snippets" / "symptoms"


def query_in(name: str) -> str:
    text = (FOLDER / name).read_text()
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
