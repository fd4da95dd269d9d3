"""mkdocs build hook: replaces the verify directives in pages with rendered evidence.

Runs from committed evidence only (no server, no network). A claim whose
evidence is missing, stale, or contradicts the page is shown as such on the
page and logged as a warning, so `mkdocs build --strict` fails until the prose
or the evidence is brought back in line.
"""

from __future__ import annotations

import logging
from datetime import date

from verify import evidence, render
from verify.errors import VerifyError
from verify.freeze import input_hash
from verify.pages import parse_directives
from verify.profiles import DEFAULT_PROFILE, PROFILES
from verify.registry import all_jobs, find_claim

log = logging.getLogger("mkdocs.plugins.verify")
BADGE = {"confirmed": "✔ Confirmed", "refuted": "✘ Refuted", "inconclusive": "? Inconclusive",
         "missing": "… No evidence yet"}


def _prefix(page) -> str:
    """Relative path from the page's URL back to the site root."""
    return "../" * page.url.count("/")


def _record(job_id: str, profile: str = DEFAULT_PROFILE) -> tuple[dict | None, bool]:
    job = all_jobs()[job_id]
    rec = evidence.load(job_id, profile)
    stale = bool(rec) and rec.get("inputs_hash") != input_hash(job, PROFILES[profile])
    return rec, stale


def _origin(rec: dict, stale: bool, prefix: str) -> str:
    p = rec["provenance"]
    server = p["server"]
    age = (date.today() - date.fromisoformat(p["date"][:10])).days
    bits = [f"{rec['profile']} profile", f"vLLM {server.get('version')}", server["profile"]["model"].split(" (")[0],
            p["hardware"].get("cpu") or "", f"{p['date'][:10]} ({age} days ago)" if age else p["date"][:10],
            f"commit {(p['git'].get('commit') or 'unknown')[:10]}"
            + (" with uncommitted changes" if p["git"].get("uncommitted_changes") else "")]
    link = f'<a href="{prefix}evidence/{rec["job"]}/{rec["profile"]}.json">raw record</a>'
    stale_note = ' · <strong class="verify-stale">STALE: inputs changed since this was recorded</strong>' if stale else ""
    return " · ".join(render.text(b) for b in bits if b) + " · " + link + stale_note


def _claim(page, claim_id: str, expect: str) -> str:
    job, claim = find_claim(claim_id)
    prefix = _prefix(page)
    rows = []
    main_verdict = "missing"
    for profile in job.profiles:
        rec, stale = _record(job.id, profile)
        if rec is None:
            if profile == DEFAULT_PROFILE:
                log.warning("%s: claim %s has no %s evidence (run: verify run %s)", page.file.src_path, claim_id, profile, job.id)
            continue
        got = rec["claims"].get(claim_id, {"verdict": "missing", "because": ""})
        if profile == DEFAULT_PROFILE:
            main_verdict = got["verdict"]
            if stale:
                log.warning("%s: claim %s: %s evidence is stale (run: verify run %s)", page.file.src_path, claim_id, profile, job.id)
            if got["verdict"] != expect:
                log.warning("%s: the page says claim %s is %s but the evidence says %s: correct the prose",
                            page.file.src_path, claim_id, expect, got["verdict"])
        rows.append(f'<div class="verify-evidence"><span class="verify-pill verify-{got["verdict"]}">'
                    f'{render.text(BADGE.get(got["verdict"], got["verdict"]))}</span> {render.text(got["because"])}'
                    f'<br><small>{_origin(rec, stale, prefix)}</small></div>')
    agreement = (f'<div class="verify-agree"><small>This page states the claim as <em>{render.text(expect)}</em>; '
                 f'the evidence agrees.</small></div>')
    mismatch = ""
    if main_verdict != expect:
        agreement = ""
        mismatch = (f'<div class="verify-mismatch">This page states the claim as <em>{render.text(expect)}</em>; '
                    f'the evidence says <em>{render.text(main_verdict)}</em>. The prose is out of date.</div>')
    return (f'\n<div class="verify-claim verify-{main_verdict}" id="{claim.anchor}">'
            f'<div class="verify-claim-head"><a class="verify-anchor" href="#{claim.anchor}" title="Link to this claim">#</a> '
            f'<span class="verify-id">{render.text(claim_id)}</span> '
            f'<strong>{render.text(claim.text)}</strong></div>{mismatch}{"".join(rows)}{agreement}</div>\n')


def _evidence(page, job_id: str, fragment: str) -> str:
    job = all_jobs()[job_id]
    if fragment not in job.fragments:
        raise VerifyError(f"{page.file.src_path}: job {job_id} has no fragment {fragment!r} (has: {', '.join(job.fragments)})")
    rec, stale = _record(job_id)
    if rec is None:
        log.warning("%s: no evidence for job %s yet", page.file.src_path, job_id)
        return f'\n<div class="verify-missing">No evidence recorded yet for job {render.text(job_id)}.</div>\n'
    return (f'\n<div class="verify-fragment" id="evidence-{job_id}-{fragment}">{job.fragments[fragment](rec)}'
            f'<div class="verify-origin"><small>Captured by job <code>{render.text(job_id)}</code>: '
            f'{_origin(rec, stale, _prefix(page))}</small></div></div>\n')


def _figure(page, job_id: str, name: str, alt: str = "") -> str:
    rec, stale = _record(job_id)
    if rec is None:
        log.warning("%s: no evidence for job %s yet", page.file.src_path, job_id)
        return ""
    src = f"{_prefix(page)}evidence/{job_id}/{rec['profile']}.{name}"
    return (f'\n<figure class="verify-figure" id="figure-{job_id}"><img src="{src}" alt="{render.text(alt)}">'
            f'<figcaption><small>Drawn by job <code>{render.text(job_id)}</code> from recorded arrival times: '
            f'{_origin(rec, stale, _prefix(page))}</small></figcaption></figure>\n')


def _page_summary(page, markdown: str) -> str:
    counts = {"confirmed": 0, "refuted": 0, "inconclusive": 0, "missing": 0, "stale": 0}
    newest = None
    for d in parse_directives(markdown, page.file.src_path):
        if d.name != "claim":
            continue
        job, _ = find_claim(d.args[0])
        rec, stale = _record(job.id)
        verdict = rec["claims"].get(d.args[0], {}).get("verdict", "missing") if rec else "missing"
        counts[verdict] = counts.get(verdict, 0) + 1
        counts["stale"] += int(stale)
        if rec and (newest is None or rec["provenance"]["date"] > newest):
            newest = rec["provenance"]["date"]
    total = sum(v for k, v in counts.items() if k != "stale")
    parts = [f'<span class="verify-pill verify-{k}">{counts[k]} {k}</span>' for k in
             ("confirmed", "refuted", "inconclusive", "missing", "stale") if counts[k] or k == "confirmed"]
    when = f" · newest evidence {newest[:10]}, {DEFAULT_PROFILE} profile" if newest else ""
    return (f'\n<div class="verify-summary" id="verification-summary">{total} claims checked against a live vLLM server: '
            f'{" ".join(parts)}{render.text(when)} · <a href="{_prefix(page)}status/">all claims</a></div>\n')


def _page_url(src: str) -> str:
    """Site URL (relative to the root) of a docs/ page, with directory URLs."""
    stem = src.removesuffix(".md")
    return "" if stem == "index" else f"{stem}/"


def _page_name(src: str) -> str:
    stem = src.removesuffix(".md")
    return "home" if stem == "index" else stem


def _status_table(page) -> str:
    from verify.status import status_rows
    prefix = _prefix(page)
    rows = []
    for r in status_rows():
        cells = []
        for prof in PROFILES:
            s = r["profiles"].get(prof)
            if not s or s["verdict"] == "missing":
                cells.append('<td><span class="verify-pill verify-missing">no evidence</span></td>')
                continue
            stale = ' <span class="verify-pill verify-stale">stale</span>' if s["stale"] else ""
            cells.append(f'<td><a href="{prefix}{s["evidence"]}"><span class="verify-pill verify-{s["verdict"]}">'
                         f'{s["verdict"]}</span></a>{stale}<br><small>{render.text((s["date"] or "")[:10])}</small></td>')
        page_links = " ".join(f'<a href="{prefix}{_page_url(p)}#{r["anchor"]}">{render.text(_page_name(p))}</a>'
                              for p in r["pages"])
        rows.append(f'<tr id="status-{r["claim"].replace(".", "--")}"><td><code>{render.text(r["claim"])}</code><br>'
                    f'<small>{render.text(r["text"])}</small></td>{"".join(cells)}<td>{page_links}</td></tr>')
    head = "".join(f"<th>{render.text(p)}</th>" for p in PROFILES)
    return (f'\n<div class="evidence-table"><table class="verify-status"><thead><tr><th>claim</th>{head}<th>stated on</th>'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table></div>\n')


def on_page_markdown(markdown, page, config, files):
    source = markdown  # the summary counts the claims of the page as written
    directives = parse_directives(markdown, page.file.src_path)
    for d in reversed(directives):
        if d.name == "claim":
            html = _claim(page, d.args[0], d.kwargs["expect"])
        elif d.name == "evidence":
            html = _evidence(page, *d.args)
        elif d.name == "figure":
            html = _figure(page, *d.args, **d.kwargs)
        elif d.name == "page_summary":
            html = _page_summary(page, source)
        elif d.name == "status_table":
            html = _status_table(page)
        else:
            raise VerifyError(f"{page.file.src_path}:{d.line}: directive {d.name} is not rendered by the site")
        markdown = markdown[:d.start] + html + markdown[d.end:]
    return markdown
