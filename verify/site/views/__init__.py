"""How each job's evidence looks on a page: site code, never an input of a record.

One module per article, verify/site/views/<article>.py (named like the article's folder under
verify/jobs/), holding VIEWS: the view of each of its jobs that shows anything, by job id. A view
may name:

    fragments = {name: render(record) -> HTML}    shown by {{ evidence("<job>", "<name>") }}
    charts = {name: chart(record) -> spec}        shown by {{ chart("<job>", "<name>", alt="...") }}
                                                  (an XY, Bars or Timeline of verify/site/charts.py)
    pages = {path: render(record) -> text}        pages generated from the default profile's
                                                  record (path relative to docs/)

A job that shows nothing but its claims has no entry. A record is raw (the parsed JSON: "data",
"provenance", "profile", ...). Views read numbers through the job's own module, by its public names
only (its helpers and constants without a leading underscore: a job renames its private ones freely;
tests/test_views.py), build HTML with verify.site.html and chart specs that verify.site.charts draws.
None of this is an input of a record (verify/evidence/inputs.py hashes the job's code in verify/jobs/
and verify/measure/, the files it opened and the code it declared it loads), so changing how a table
or chart looks leaves every record fresh.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

Render = Callable[[dict], str]


@dataclass(frozen=True)
class View:
    fragments: dict[str, Render] = field(default_factory=dict)
    charts: dict[str, Callable[[dict], object]] = field(default_factory=dict)  # a spec of verify/site/charts.py
    pages: dict[str, Render] = field(default_factory=dict)


NOTHING = View()  # a job that shows nothing but its claims


def article_of(job) -> str:
    """The article a job belongs to: the folder of its module under verify/jobs/."""
    return Path(job.module_file).parent.name


@lru_cache(maxsize=1)
def by_article() -> dict[str, dict[str, View]]:
    """Every article's VIEWS, by article: one module per article in this folder."""
    folder = Path(__file__).parent
    return {path.stem: importlib.import_module(f"{__name__}.{path.stem}").VIEWS
            for path in sorted(folder.glob("*.py")) if not path.name.startswith("_")}


def of(job) -> View:
    """The job's view, looked up by its id in its article's module."""
    return by_article().get(article_of(job), {}).get(job.id, NOTHING)


def where(job) -> str:
    """Where the job's view is defined, for a message that sends someone there."""
    return f"VIEWS[{job.id!r}] in verify/site/views/{article_of(job)}.py"
