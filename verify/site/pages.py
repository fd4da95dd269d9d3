"""Pages generated from records (for example the executed Getting-Started notebook).

A job's view names them (its `pages`, verify/site/views/); they show the
default profile's record and are rewritten whenever that record is, by the run
that made it or by `verify pages` from the committed records (no server needed).
"""

from __future__ import annotations

from pathlib import Path

from verify.config.profiles import DEFAULT_PROFILE
from verify.evidence import store
from verify.registry import all_jobs
from verify.site import views


def write_pages(job, record: dict) -> list[Path]:
    """Write the pages a job generates from its record; [] unless the record is the default profile's."""
    from verify import paths  # read when called: tests point DOCS elsewhere
    if record["profile"] != DEFAULT_PROFILE:
        return []
    written = []
    for rel, render in views.of(job).pages.items():
        if store.write_atomic(paths.DOCS / rel, render(record)):
            written.append(paths.DOCS / rel)
    return written


def regenerate_pages() -> list[Path]:
    """Rewrite every generated page from the committed records."""
    written = []
    for job in all_jobs().values():
        record = store.load(job.id, DEFAULT_PROFILE) if views.of(job).pages else None
        if record:
            written += write_pages(job, record)
    return written
