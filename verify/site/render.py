"""Evidence into pages: the verify directives of a Markdown page replaced by rendered evidence.

One renderer for every site generator. `render_page` turns a page's source
into Markdown with claim boxes, evidence fragments, charts and counts in it,
from committed evidence only (no server, no network). MkDocs calls it from
its build hook page by page; `verify render` (verify/site/render_tree.py) calls
it for every page and writes a tree any generator can build, Zensical included,
which has no plugin API. Which record settles a claim, and whether it agrees
with the page, is decided in verify/verdicts/agreement.py (the same function
`verify check` uses); all a claim box shows of a claim is decided at once in
verify/verdicts/standing.py; the HTML comes from verify/site/html.py. A claim whose
evidence is missing, stale or contradicts the page is shown as such and
reported through `warn`, so a strict build fails until prose or evidence is
brought back in line.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from verify.errors import VerifyError
from verify.config.profiles import DEFAULT_PROFILE, PROFILES
from verify.paths import DOCS, EVIDENCE, SNIPPETS
from verify.registry import all_jobs, find_claim
from verify.site import charts, html, views
from verify.verdicts import agreement, release_prose, releases
from verify.verdicts.directives import page_claims, parse_directives
from verify.verdicts.standing import standing

Warn = Callable[[str], None]


def page_url(src: str) -> str:
    """The page's URL relative to the site root, with directory URLs (both generators' default)."""
    stem = src.removesuffix(".md").removesuffix(".ipynb")
    if stem == "index":
        return ""
    if stem.endswith("/index"):
        return stem.removesuffix("index")
    return stem + "/"


def prefix_of(src: str) -> str:
    """Relative path from the page's URL back to the site root."""
    return "../" * page_url(src).count("/")


def source_prefix(src: str) -> str:
    """Relative path from the page's Markdown file back to docs/."""
    return "../" * src.count("/")


def _page_link(src: str) -> tuple[str, str]:
    """Site URL (relative to the root) and short name of a docs/ page."""
    url = page_url(src)
    # "./", not "": an empty link plus "#anchor" would point into the linking page itself.
    return ("./", "home") if url == "" else (url, src.removesuffix(".md"))


def _claim(src: str, warn: Warn, prefix: str, claim_id: str, expect: str) -> str:
    st = standing(claim_id, expect, DEFAULT_PROFILE)
    if st.problem:
        warn(type(st.problem)(f"{src}: {st.problem}"))  # keeps the kind of problem (a Contradiction stays one)
    return html.claim_box(st, prefix, page=page_url(src))


def _main_record(src: str, warn: Warn, job_id: str):
    if job_id not in all_jobs():
        raise VerifyError(f"{src}: unknown job {job_id!r}")
    job = all_jobs()[job_id]
    state = agreement.claim_state(job.claims[0].id, DEFAULT_PROFILE)
    if state.record is None:
        warn(f"{src}: no evidence for job {job_id} yet")
    return job, state


def _evidence(src: str, warn: Warn, prefix: str, job_id: str, fragment: str) -> str:
    job, state = _main_record(src, warn, job_id)
    shown = views.of(job).fragments
    if fragment not in shown:
        raise VerifyError(f"{src}: job {job_id} has no fragment {fragment!r} (has: {', '.join(shown) or 'none'}; "
                          f"they are defined in {views.where(job)})")
    if state.record is None:
        return html.missing_box(job_id)
    body = shown[fragment](state.record.raw)
    return html.fragment_box(job_id, fragment, body, state.record, prefix, state.changed)


def _chart(src: str, warn: Warn, prefix: str, job_id: str, name: str, alt: str = "") -> str:
    job, state = _main_record(src, warn, job_id)
    drawn = views.of(job).charts
    if name not in drawn:
        raise VerifyError(f"{src}: job {job_id} has no chart {name!r} (has: {', '.join(drawn) or 'none'}; "
                          f"they are defined in {views.where(job)})")
    if state.record is None:
        return html.missing_box(job_id)
    picture = charts.svg(drawn[name](state.record.raw))  # a spec: no view writes SVG by hand
    return html.chart_figure(job_id, picture, alt, state.record, prefix, state.changed)


def claim_counts(markdown: str, where: str) -> tuple[dict[str, int], str | None]:
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


def _page_summary(src: str, prefix: str, markdown: str) -> str:
    counts, newest = claim_counts(markdown, src)
    return html.page_summary(counts, newest, DEFAULT_PROFILE, prefix)


def _article_counts(src: str, target: str) -> str:
    path = DOCS / target
    if not path.is_file():
        raise VerifyError(f"{src}: article_counts names {target}, which is not a page")
    counts, newest = claim_counts(path.read_text(encoding="utf-8"), target)
    return html.article_counts(counts, newest)


def _status_table(prefix: str) -> str:
    from verify.verdicts.status import status_rows
    rows = status_rows()
    # A column per profile jobs name (the releases between live on the claim boxes and the releases page).
    return html.status_table(rows, [p for p in PROFILES if any(p in r["profiles"] for r in rows)], prefix, _page_link)


# The rules' mutation score, written by tests/mutation.sh into docs/evidence/, shown on the status page.
MUTATION_RECORD = "mutation-score.json"


def _mutation_score(prefix: str) -> str:
    """The rules' mutation score as the last `bash tests/mutation.sh` recorded it (never typed)."""
    import json
    path = EVIDENCE / MUTATION_RECORD
    if not path.is_file():
        return '\n<p class="verify-none">No mutation run is on record.</p>\n'
    return html.mutation_score(json.loads(path.read_text(encoding="utf-8")), f"{prefix}evidence/{MUTATION_RECORD}")


def _full_run(prefix: str) -> str:
    """Where the last full re-measure's wall time went, as `verify run --all` recorded it (never typed)."""
    from verify.config.budgets import TARGET_S
    from verify.config.profiles import DEFAULT_PROFILE
    from verify.evidence.run_record import load_run_record, run_record_name
    record = load_run_record(DEFAULT_PROFILE, EVIDENCE)
    if record is None:
        return '\n<p class="verify-none">No full re-measure is on record.</p>\n'
    return html.full_run(record, TARGET_S, f"{prefix}evidence/{run_record_name(DEFAULT_PROFILE)}")


def _release_changes(src: str, prefix: str, part: str) -> str:
    profiles = releases.release_profiles()
    if len(profiles) < 2:
        return '\n<p class="verify-none">Only one release is checked.</p>\n'
    older, newer = profiles[0], profiles[-1]
    verdicts, moved, compared = releases.changes(older.name, newer.name)
    pages_of: dict = {}
    for pc in page_claims():
        pages_of.setdefault(pc.claim_id, []).append(_page_link(pc.page))
    parts = dict(zip(("summary", "claims", "figures"),
                     html.release_changes(older, newer, verdicts, moved, (compared, len(all_jobs())),
                                          prefix, pages_of)))
    parts["timeline"] = html.release_timeline(
        releases.releases_checked(), [(c.claim_id, releases.timeline(c.claim_id)) for c in verdicts],
        releases.figure_timelines(moved), prefix)
    parts["tolerances"] = html.table(["job", "tolerance", "why", "figures compared"], releases.tolerances())
    if part not in parts:
        raise VerifyError(f"{src}: release_changes part must be one of {', '.join(parts)}, not {part!r}")
    return parts[part]


def _symptom(src: str, warn: Warn, prefix: str, symptom_id: str) -> str:
    from verify.config.symptoms import FIXES_NOT_RUN, SHOWN, by_id
    from verify.verdicts import symptoms
    if symptom_id not in by_id():
        raise VerifyError(f"{src}: unknown symptom {symptom_id!r} (they are listed in verify/config/symptoms.py)")
    s = by_id()[symptom_id]
    rows = []
    for lean in symptoms.leans(s):
        problem = symptoms.lean_problem(s, lean)
        if problem:
            warn(agreement.Contradiction(f"{src}: {problem}") if lean.state and lean.state.verdict not in
                 ("missing", "inconclusive") and not lean.state.stale else f"{src}: {problem}")
        if lean.state is None or lean.page is None:
            continue
        _, claim = find_claim(lean.claim_id)
        across = releases.verdicts_across(lean.claim_id)
        rows.append(html.symptom_claim(claim, lean.expect, lean.state, prefix + page_url(lean.page),
                                       releases.since(across)))
    s = dataclasses.replace(s, fix=_ranges_in(src, warn, s.fix))
    read_page, _, read_anchor = s.read.partition("#")
    lines = len((SNIPPETS / s.confirm).read_text(encoding="utf-8").splitlines()) if (SNIPPETS / s.confirm).is_file() else 0
    shown = SHOWN.get(s.confirm)
    return html.symptom(s, rows, f"{prefix}{page_url(read_page)}#{read_anchor}", lines,
                        FIXES_NOT_RUN.get(s.fix_snippet or ""), shown.against if shown else None)


def _ranges_in(src: str, warn: Warn, text: str) -> str:
    """A symptom's text with its release ranges rendered, as a page's are (the releases directive only)."""
    for d in reversed(parse_directives(text, src)):
        if d.name != "releases":
            raise VerifyError(f"{src}: a symptom's text may hold only releases directives, not {d.name}")
        text = text[:d.start] + _releases(src, warn, d.line, *d.args) + text[d.end:]
    return text


def _releases(src: str, warn: Warn, line: int, claim_id: str, verdict: str) -> str:
    try:
        return releases.span_of(claim_id, verdict)[0]
    except VerifyError as e:
        warn(f"{src}:{line}: {e}")
        return f"(releases on which {claim_id} is {verdict}: not one range)"


def render_page(src: str, markdown: str, warn: Warn, prefix: str | None = None) -> str:
    """The page's Markdown with every directive replaced; src is its path relative to docs/.

    Links in the rendered HTML start with prefix: by default the way back from the page's
    URL to the site root (MkDocs leaves raw HTML alone). A generator that resolves raw
    HTML links against the Markdown file, as Zensical does, gets the way back from the
    file to docs/ instead (source_prefix).
    """
    prefix = prefix_of(src) if prefix is None else prefix
    source = markdown  # the summary counts the claims of the page as written
    for d in reversed(parse_directives(markdown, src)):
        if d.name == "claim":
            out = _claim(src, warn, prefix, d.args[0], d.kwargs["expect"])
            unnamed = release_prose.problem(source, d.start, d.args[0])
            if unnamed:
                warn(f"{src}:{d.line}: {unnamed}")
        elif d.name == "evidence":
            out = _evidence(src, warn, prefix, *d.args)
        elif d.name == "chart":
            out = _chart(src, warn, prefix, *d.args, **d.kwargs)
        elif d.name == "page_summary":
            out = _page_summary(src, prefix, source)
        elif d.name == "article_counts":
            out = _article_counts(src, *d.args)
        elif d.name == "status_table":
            out = _status_table(prefix)
        elif d.name == "mutation_score":
            out = _mutation_score(prefix)
        elif d.name == "full_run":
            out = _full_run(prefix)
        elif d.name == "release_changes":
            out = _release_changes(src, prefix, *d.args)
        elif d.name == "symptom":
            out = _symptom(src, warn, prefix, *d.args)
        elif d.name == "releases":
            out = _releases(src, warn, d.line, *d.args)
        else:
            raise VerifyError(f"{src}:{d.line}: directive {d.name} is not rendered by the site")
        markdown = markdown[:d.start] + out + markdown[d.end:]
    return markdown
