"""How each job's evidence looks on a page: site code, never an input of a record.

One module per job that shows anything, at verify/site/views/<article>/<module>.py,
the same path as the job's own module under verify/jobs/. It may define:

    FRAGMENTS = {name: render(record) -> HTML}    shown by {{ evidence("<job>", "<name>") }}
    CHARTS = {name: chart(record) -> spec}        shown by {{ chart("<job>", "<name>", alt="...") }}
                                                  (an XY, Bars or Timeline of verify/site/charts.py)
    PAGES = {path: render(record) -> text}        pages generated from the default profile's
                                                  record (path relative to docs/)

A record is raw (the parsed JSON: "data", "provenance", "profile", ...). Views read
numbers through the job's own module, by its public names only (its helpers and constants without
a leading underscore: a job renames its private ones freely; tests/test_views.py), build HTML with
verify.site.html and chart specs that verify.site.charts draws. None of this is an
input of a record (verify/evidence/inputs.py hashes the job's code in verify/jobs/
and verify/measure/, the files it opened and the code it declared it loads), so
changing how a table or chart looks leaves every record fresh.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

_EMPTY = ModuleType("no views")


def module_name(job) -> str:
    path = Path(job.module_file)
    return f"verify.site.views.{path.parent.name}.{path.stem}"


def _module(job) -> ModuleType:
    try:
        return importlib.import_module(module_name(job))
    except ModuleNotFoundError as e:
        if e.name and module_name(job).startswith(e.name):
            return _EMPTY  # the job shows nothing but its claims
        raise


def fragments(job) -> dict:
    return getattr(_module(job), "FRAGMENTS", {})


def charts(job) -> dict:
    return getattr(_module(job), "CHARTS", {})


def pages(job) -> dict:
    return getattr(_module(job), "PAGES", {})
