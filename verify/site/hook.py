"""mkdocs build hook: replaces the verify directives in pages with rendered evidence.

Runs from committed evidence only (no server, no network). Which record settles
a claim and whether it agrees with the page is decided in verify/site/agreement.py
(the same function `verify check` uses); the HTML comes from verify/site/html.py.
A claim whose evidence is missing, stale or contradicts the page is shown as such
and logged as a warning, so `mkdocs build --strict` fails until prose or evidence
is brought back in line.
"""

from __future__ import annotations

import logging

from verify.errors import VerifyError
from verify.paths import DOCS
from verify.live.profiles import DEFAULT_PROFILE, PROFILES
from verify.registry import all_jobs, find_claim
from verify.site import agreement, html
from verify.site.directives import parse_directives

log = logging.getLogger("mkdocs.plugins.verify")


def _prefix(page) -> str:
    """Relative path from the page's URL back to the site root."""
    return "../" * page.url.count("/")


def _page_link(src: str) -> tuple[str, str]:
    """Site URL (relative to the root, directory URLs) and short name of a docs/ page."""
    stem = src.removesuffix(".md")
    return ("", "home") if stem == "index" else (f"{stem}/", stem)


def _claim(page, claim_id: str, expect: str) -> str:
    job, claim = find_claim(claim_id)
    states = [agreement.claim_state(claim_id, p) for p in job.profiles if p in PROFILES]
    main = agreement.claim_state(claim_id, DEFAULT_PROFILE)
    problem = main.problem(expect) if DEFAULT_PROFILE in job.profiles else None
    if problem:
        log.warning("%s: %s", page.file.src_path, problem)
    return html.claim_box(claim, expect, main, states, _prefix(page))


def _main_record(page, job_id: str):
    if job_id not in all_jobs():
        raise VerifyError(f"{page.file.src_path}: unknown job {job_id!r}")
    job = all_jobs()[job_id]
    state = agreement.claim_state(job.claims[0].id, DEFAULT_PROFILE)
    if state.record is None:
        log.warning("%s: no evidence for job %s yet", page.file.src_path, job_id)
    return job, state


def _evidence(page, job_id: str, fragment: str) -> str:
    job, state = _main_record(page, job_id)
    if fragment not in job.fragments:
        raise VerifyError(f"{page.file.src_path}: job {job_id} has no fragment {fragment!r} (has: {', '.join(job.fragments)})")
    if state.record is None:
        return html.missing_box(job_id)
    body = job.fragments[fragment](state.record.raw)
    return html.fragment_box(job_id, fragment, body, state.record, _prefix(page), state.changed)


def _figure(page, job_id: str, name: str, alt: str = "") -> str:
    job, state = _main_record(page, job_id)
    if state.record is None:
        return html.missing_box(job_id)
    src = f"{_prefix(page)}evidence/{job_id}/{state.record.profile}.{name}"
    return html.figure(job_id, src, alt, state.record, _prefix(page), state.changed)


def _claim_counts(markdown: str, where: str) -> tuple[dict[str, int], str | None]:
    """How the claims a page states stand against their evidence, and the date of its newest record."""
    counts = {"confirmed": 0, "myth": 0, "contradicted": 0, "inconclusive": 0, "missing": 0, "stale": 0}
    newest = None
    for d in parse_directives(markdown, where):
        if d.name != "claim":
            continue
        s = agreement.claim_state(d.args[0], DEFAULT_PROFILE)
        expect = d.kwargs.get("expect")
        if s.verdict in ("missing", "inconclusive") and s.verdict != expect:
            kind = s.verdict
        elif s.verdict != expect:
            kind = "contradicted"
        else:
            kind = "myth" if s.verdict == "refuted" else s.verdict
        counts[kind] = counts.get(kind, 0) + 1
        counts["stale"] += int(s.stale)
        if s.record and (newest is None or s.record.date > newest):
            newest = s.record.date
    return counts, newest


def _page_summary(page, markdown: str) -> str:
    counts, newest = _claim_counts(markdown, page.file.src_path)
    return html.page_summary(counts, newest, DEFAULT_PROFILE, _prefix(page))


def _article_counts(page, target: str) -> str:
    path = DOCS / target
    if not path.is_file():
        raise VerifyError(f"{page.file.src_path}: article_counts names {target}, which is not a page")
    counts, newest = _claim_counts(path.read_text(encoding="utf-8"), target)
    return html.article_counts(counts, newest)


def _status_table(page) -> str:
    from verify.site.status import status_rows
    return html.status_table(status_rows(), list(PROFILES), _prefix(page), _page_link)


def on_pre_build(config):
    agreement.forget()  # `mkdocs serve` rebuilds in one process: read records afresh


def on_page_markdown(markdown, page, config, files):
    source = markdown  # the summary counts the claims of the page as written
    directives = parse_directives(markdown, page.file.src_path)
    for d in reversed(directives):
        if d.name == "claim":
            out = _claim(page, d.args[0], d.kwargs["expect"])
        elif d.name == "evidence":
            out = _evidence(page, *d.args)
        elif d.name == "figure":
            out = _figure(page, *d.args, **d.kwargs)
        elif d.name == "page_summary":
            out = _page_summary(page, source)
        elif d.name == "article_counts":
            out = _article_counts(page, *d.args)
        elif d.name == "status_table":
            out = _status_table(page)
        else:
            raise VerifyError(f"{page.file.src_path}:{d.line}: directive {d.name} is not rendered by the site")
        markdown = markdown[:d.start] + out + markdown[d.end:]
    return markdown
