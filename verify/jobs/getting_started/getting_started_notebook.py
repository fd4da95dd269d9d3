"""The Getting-Started Notebook, executed against the live server.

The notebook's source lives in snippets/getting-started/ without outputs. This job
runs every cell (a cell that raises is kept with its error: the claim is refuted,
or inconclusive when the cell could not reach the server) and writes the executed copy,
with a provenance cell at the top, to docs/getting-started.ipynb, the page
the site renders.
"""

from __future__ import annotations

import json

from verify.job import Claim, Job, verdict_if

SOURCE = "getting-started/getting_started.ipynb"
IMPORTED_BY_NOTEBOOK = "streaming/stream_timing.py"
PAGE = "getting-started.ipynb"
CELL_TIMEOUT_S = 120
CONNECTION_ERRORS = ("APIConnectionError", "ConnectError", "ConnectionRefusedError", "APITimeoutError")


def collect(ctx) -> dict:
    import os

    import nbformat
    from nbclient import NotebookClient

    from verify.measure import capture
    source = ctx.snippet_path(SOURCE)
    # The kernel (another process) imports this snippet; it is declared here on the kernel's behalf.
    ctx.snippet_path(IMPORTED_BY_NOTEBOOK)
    nb = nbformat.read(source, as_version=4)
    previous = os.environ.get("BASE_URL")
    os.environ["BASE_URL"] = ctx.base_url  # the kernel inherits it
    try:
        # allow_errors: a cell that raises is recorded with its error and the rest still run,
        # so the claim below sees the failure instead of the run stopping before it.
        NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(source.parent)}}).execute()
    finally:
        if previous is None:
            os.environ.pop("BASE_URL", None)
        else:
            os.environ["BASE_URL"] = previous
    cells = [{"source": c.source, "outputs": [_output_text(o) for o in c.get("outputs", [])]}
             for c in nb.cells if c.cell_type == "code"]
    # A cell that could not reach the server measured nothing: the run is a failed capture.
    unreachable = [o["text"] for c in cells for o in c["outputs"]
                   if o["type"] == "error" and any(name in o["text"] for name in CONNECTION_ERRORS)]
    # One event per code cell that printed something.
    return {"run": capture.results("notebook", [c for c in cells if c["outputs"]],
                                   error=unreachable[0] if unreachable else None),
            "executed": json.loads(nbformat.writes(nb)), "code_cells": cells}


def _output_text(output) -> dict:
    kind = output.get("output_type")
    if kind == "stream":
        return {"type": "stream", "text": output.get("text", "")}
    if kind == "error":
        return {"type": "error", "text": f"{output.get('ename')}: {output.get('evalue')}"}
    return {"type": kind, "text": output.get("data", {}).get("text/plain", "")}


def decide(d):
    cells = d["code_cells"]
    errors = [c for c in cells if any(o["type"] == "error" for o in c["outputs"])]
    silent = [c for c in cells if not c["outputs"]]
    first_error = next((o["text"] for c in errors for o in c["outputs"] if o["type"] == "error"), None)
    return verdict_if(not errors and not silent, f"{len(cells)} code cells ran against the live server; "
                                                 f"{len(errors)} raised, {len(silent)} printed nothing" +
                      (f"; first error: {first_error}" if first_error else ""))


JOB = Job(
    id="getting-started-notebook",
    title="The Getting-Started Notebook, executed",
    question="Does every cell of the Getting-Started notebook run against a live server?",
    pages=("index.md",),
    collect=collect,
    claims=(Claim("getting-started-notebook.runs", "Every cell of the Getting-Started notebook runs against a live "
                  "vLLM server and prints its result.", decide),),
)
