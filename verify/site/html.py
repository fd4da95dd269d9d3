"""All HTML the site shows for evidence, built in this one module.

Everything that came from a server (model output, log lines, headers) is
untrusted text: it goes through `text()` before it reaches a page, which
escapes HTML and neutralises Markdown-extension syntax (snippet includes,
directives) that would otherwise be interpreted by the build.
"""

from __future__ import annotations

import html

BADGE = {"confirmed": "✔ Confirmed", "refuted": "✘ Refuted", "inconclusive": "? Inconclusive",
         "missing": "… No evidence yet"}


def text(value) -> str:
    s = html.escape(str(value), quote=True)
    # pymdownx.snippets would include a file named in a line starting with --8<--;
    # the build would run a {{ directive }}. Neither may be triggered by output.
    return (s.replace("--8&lt;--", "&#45;-8&lt;--").replace("{{", "&#123;&#123;").replace("}}", "&#125;&#125;")
            .replace("`", "&#96;").replace("*", "&#42;").replace("_", "&#95;"))


# --- evidence fragments (used by jobs)

def pre(lines: list[str], caption: str = "", css: str = "") -> str:
    """A preformatted block as raw HTML (so Markdown never touches its content)."""
    body = "\n".join(text(line) for line in lines)
    cap = f'<div class="evidence-caption">{text(caption)}</div>' if caption else ""
    return f'\n<div class="evidence-block {css}">{cap}<pre><code>{body}</code></pre></div>\n'


def timed_transcript(lines: list[dict], caption: str = "", limit: int = 60) -> str:
    """Captured lines prefixed with their arrival time in ms."""
    shown = lines[:limit]
    rows = [f"{item['t'] * 1000:8.1f} ms  {item['line']}" if item["line"] else "" for item in shown]
    if len(lines) > limit:
        rows.append(f"... {len(lines) - limit} more lines in the evidence record")
    return pre(rows, caption, "evidence-transcript")


def table(headers: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{text(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'\n<div class="evidence-table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>\n'


def ms(seconds) -> str:
    return "n/a" if seconds is None else f"{seconds * 1000:.0f} ms"


# --- what the build puts in pages

def pill(verdict: str, label: str | None = None) -> str:
    return f'<span class="verify-pill verify-{text(verdict)}">{text(label or BADGE.get(verdict, verdict))}</span>'


def origin(record, prefix: str, changed: tuple[str, ...] = ()) -> str:
    """Where a record came from, with a link to the raw record and a stale note naming what changed."""
    from verify.registry import all_jobs  # which jobs start servers of their own
    job = all_jobs().get(record.job_id)
    link = f'<a href="{prefix}{text(record.evidence_url())}">raw record</a>'
    tie = (f'<strong class="verify-stale">STALE: changed since recorded: {text(", ".join(changed))}</strong>'
           if changed else text(record.code_tie))
    parts = record.origin_parts(own_servers=bool(job and job.starts_own_engine))
    return " · ".join(text(p) for p in parts if p) + " · " + tie + " · " + link


def _verdict_pill(verdict: str, expect: str) -> str:
    """A refuted claim the page itself states as refuted is a myth dispelled, not an error: it looks different."""
    if verdict == "refuted" and expect == "refuted":
        return pill("myth", "✘ Refuted, as this page says")
    return pill(verdict)


def claim_box(standing, prefix: str, page: str = "") -> str:
    """A claim as the page states it, with the verdict of the page's profile in full and the rest folded.

    standing: the claim's standing on the page (verify/verdicts/standing.py), drawn as it is;
    page: the page's URL from the site root, shown with the anchor as the box's permanent link.
    """
    claim, expect, main, across = standing.claim, standing.expect, standing.on_page, standing.across
    rows = "".join(f'<div class="verify-evidence">{_verdict_pill(s.verdict, expect)} {text(s.because)}'
                   f'<br><small>{origin(s.record, prefix, s.changed)}</small></div>' for s in standing.shown if s.record)
    if main.verdict == expect and across:  # short, so that the line across releases fits beside it
        note = (f'<div class="verify-agree" title="The page and its evidence agree"><small>Agrees: '
                f'<em>{text(expect)}</em>.</small></div>')
        mismatch = ""
    elif main.verdict == expect:
        note = (f'<div class="verify-agree"><small>This page states the claim as <em>{text(expect)}</em>; '
                f'the evidence agrees.</small></div>')
        mismatch = ""
    elif standing.other_hardware:
        note = ""
        mismatch = (f'<div class="verify-hardware">This page states the claim as <em>{text(expect)}</em>, from '
                    f'the machine its evidence was measured on; this timing claim came out '
                    f'<em>{text(main.verdict)}</em> on other hardware (see the evidence line).</div>')
    else:
        note = ""
        mismatch = (f'<div class="verify-mismatch">This page states the claim as <em>{text(expect)}</em>; '
                    f'the evidence says <em>{text(main.verdict)}</em>. The prose is out of date.</div>')
    if across:
        changed = standing.changed_between
        more = f' · <a href="{prefix}releases/#{changes_anchor(claim.id)}">what changed</a>' if changed else ""
        note += (f'<details class="verify-releases{" verify-release-changed" if changed else ""}">'
                 f'<summary><small>vLLM releases: {text(across)}{more}</small></summary>'
                 f'{release_rows(standing.timeline, expect, prefix)}</details>')
    state = "myth" if main.verdict == expect == "refuted" else main.verdict
    return (f'\n<div class="verify-claim verify-{text(state)}" id="{claim.anchor}">'
            f'<div class="verify-claim-head"><a class="verify-anchor" href="#{claim.anchor}" title="Link to this claim">#</a> '
            f'<span class="verify-id">{text(claim.id)}</span> <strong>{text(claim.text)}</strong>'
            f'<small class="verify-permalink">Permanent link: <a href="#{claim.anchor}">{text(page)}#{claim.anchor}'
            f'</a></small></div>{mismatch}{rows}<div class="verify-foot">{note}</div></div>\n')


def release_rows(rows: list, expect: str, prefix: str) -> str:
    """Every release checked, oldest first: its verdict, why and record where measured, else what is inferred."""
    out = []
    for r in rows:
        if r.measured:
            body = (f'{_verdict_pill(r.measured.verdict, expect)} {text(r.measured.because)}'
                    f'<br><small>{origin(r.measured.record, prefix)}</small>')
        else:
            body = f'<small>{text(r.inferred)}</small>'
        out.append(f'<li><strong>vLLM {text(r.release)}</strong> <small>(profile <code>{text(r.profile)}</code>)'
                   f'</small>: {body}</li>')
    return f'<ul class="verify-per-release">{"".join(out)}</ul>'


def fragment_box(job_id: str, name: str, body: str, record, prefix: str, changed=()) -> str:
    return (f'\n<div class="verify-fragment" id="evidence-{text(job_id)}-{text(name)}">{body}'
            f'<div class="verify-origin"><small>Captured by job <code>{text(job_id)}</code>: '
            f'{origin(record, prefix, changed)}</small></div></div>\n')


def missing_box(job_id: str) -> str:
    return f'\n<div class="verify-missing">No evidence recorded yet for job {text(job_id)}.</div>\n'


def chart_figure(job_id: str, svg: str, alt: str, record, prefix: str, changed=()) -> str:
    """A chart (inline SVG from verify/site/charts.py) with what it shows in words and where its data came from."""
    return (f'\n<figure class="verify-figure" id="figure-{text(job_id)}" aria-label="{text(alt)}">'
            f'<div class="verify-chart-box">{svg}</div>'
            f'<figcaption><small>Drawn from the record of job <code>{text(job_id)}</code>: '
            f'{origin(record, prefix, changed)}</small></figcaption></figure>\n')


SUMMARY_LABELS = {"confirmed": "confirmed", "myth": "refuted, as the page says",
                  "contradicted": "contradict the page", "inconclusive": "inconclusive", "missing": "without evidence",
                  "stale": "stale"}


def page_summary(counts: dict[str, int], newest: str | None, profile: str, prefix: str) -> str:
    """counts: confirmed and myth (page and evidence agree), contradicted, inconclusive, missing; stale on top."""
    total = sum(v for k, v in counts.items() if k != "stale")
    parts = " ".join(pill(k, f"{counts[k]} {label}") for k, label in SUMMARY_LABELS.items()
                     if counts.get(k) or k == "confirmed")
    when = f" · newest evidence {newest[:10]}, {profile} profile" if newest else ""
    return (f'\n<div class="verify-summary" id="verification-summary">{total} claims checked against a live vLLM '
            f'engine: {parts}{text(when)} · <a href="{prefix}status/">all claims</a></div>\n')


def article_counts(counts: dict[str, int], newest: str | None) -> str:
    """One line for the home page's map: how many claims an article checks, and how they stand."""
    total = sum(v for k, v in counts.items() if k != "stale")
    agree = counts.get("confirmed", 0) + counts.get("myth", 0)
    rest = [f"{counts[k]} {label}" for k, label in SUMMARY_LABELS.items()
            if k not in ("confirmed", "myth") and counts.get(k)]
    when = f", newest evidence {newest[:10]}" if newest else ""
    return (f'<span class="verify-article-counts">{total} claims, {agree} agreeing with the evidence'
            f'{text(", " + ", ".join(rest)) if rest else ""}{text(when)}</span>')


def status_table(rows: list[dict], profiles: list[str], prefix: str, page_link) -> str:
    body = []
    for r in rows:
        cells = []
        for prof in profiles:
            s = r["profiles"].get(prof)
            if not s or s["verdict"] == "missing":
                cells.append(f'<td>{pill("missing", "no evidence")}</td>')
                continue
            stale = (f' {pill("stale")}<br><small>changed: {text(", ".join(s["changed"]))}</small>'
                     if s["stale"] else "")
            if s.get("other_hardware") and r.get("expect") not in (None, s["verdict"]):
                stale += (f'<br><small>timing claim, other hardware than the pages\' '
                          f'(they say {text(r["expect"])})</small>')
            label = ("refuted, as the pages say" if s["verdict"] == r.get("expect") == "refuted" else s["verdict"])
            kind = "myth" if s["verdict"] == r.get("expect") == "refuted" else s["verdict"]
            cells.append(f'<td><a href="{prefix}{s["evidence"]}">{pill(kind, label)}</a>{stale}'
                         f'<br><small>{text((s["date"] or "")[:10])}</small></td>')
        links = " ".join(f'<a href="{prefix}{url}#{r["anchor"]}">{text(name)}</a>'
                         for url, name in map(page_link, r["pages"]))
        body.append(f'<tr id="status-{r["claim"].replace(".", "--")}"><td><code>{text(r["claim"])}</code><br>'
                    f'<small>{text(r["text"])}</small><br><small>runs on: {text(r["runs_on"])}</small></td>'
                    f'{"".join(cells)}<td>{links}</td></tr>')
    head = "".join(f"<th>{text(p)}</th>" for p in profiles)
    return (f'\n<div class="evidence-table"><table class="verify-status"><thead><tr><th>claim</th>{head}'
            f'<th>stated on</th></tr></thead><tbody>{"".join(body)}</tbody></table></div>\n')


def mutation_score(record: dict, href: str) -> str:
    """One paragraph and the functions with the most surviving mutants, from tests/mutation.sh's record."""
    survivors = "".join(f"<li><code>{text(name)}</code>: {int(n)}</li>"
                        for name, n in list((record.get("survivors") or {}).items())[:8])
    minutes = f", {int(record['duration_s']) // 60} min of mutation" if record.get("duration_s") else ""
    return (f'\n<p class="verify-mutation">Mutation score of the verdict rules: '
            f'<strong>{text(record["score_percent"])} %</strong> ({text(record["killed"])} of {text(record["tried"])} '
            f'rule mutants killed by the rule tests), {text(record.get("tool", ""))} on commit '
            f'<code>{text(str(record.get("commit") or "")[:12])}</code>, finished {text(record.get("finished", ""))}'
            f'{minutes}{"; " + text(record["note"]) if record.get("note") else ""}. '
            f'<a href="{href}">The run\'s record</a>.</p>\n'
            + (f"<p>Most surviving mutants:</p><ul>{survivors}</ul>\n" if survivors else ""))


def _min_s(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def full_run(record: dict, target_s: int, href: str) -> str:
    """One paragraph from the record of the last `verify run --all`: its wall time split, beside the goal."""
    split = record.get("split_s") or {}
    parts = ", ".join(f"{text(k)} {_min_s(v)}" for k, v in split.items())
    changed = record.get("verdicts_changed") or []
    hw = record.get("hardware") or {}
    commit = str((record.get("git") or {}).get("commit") or "")[:12]
    return (f'\n<p class="verify-full-run">The last full re-measure on the {text(record.get("profile"))} profile '
            f'(vLLM {text(record.get("engine_version"))}, {text(hw.get("cpu"))}, {text(hw.get("cores"))} cores; '
            f'commit <code>{text(commit)}</code>, finished {text(record.get("finished"))}): '
            f'{text(record.get("jobs"))} jobs in {text(record.get("engine_starts"))} engine starts took '
            f'<strong>{_min_s(record["wall_s"])}</strong> against a goal of {_min_s(target_s)}: {parts}. '
            f'A job was running {round(100 * record["engine_busy_fraction"])} % of the time an engine was up (the rest: '
            f'starts finished, nothing in flight). Verdicts changed against the records it replaced: '
            + (", ".join(f"<code>{text(c['claim'])}</code> {text(c['before'])} to {text(c['now'])}" for c in changed)
               if changed else "none")
            + f'. <a href="{href}">The run\'s record</a>.</p>\n')


# --- what changed between releases (the releases page)

def changes_anchor(claim_id: str) -> str:
    return "changed-" + claim_id.replace(".", "--")


def _record_link(record, prefix: str) -> str:
    return f'<a href="{prefix}{text(record.evidence_url())}">{text(record.engine_version)} record</a>'


def release_changes(older, newer, verdicts: list, moved: list, compared: tuple[int, int], prefix: str,
                    pages_of: dict) -> tuple[str, str, str]:
    """Claims whose verdict changed and figures that moved, between two profiles' releases.

    Returns three parts (summary, claims table, figures table), which the page places under
    its own headings; pages_of maps a claim id to the (url, name) of the pages stating it.
    """
    both, total = compared
    intro = (f'\n<div class="verify-summary" id="releases-compared">Compared: vLLM {text(older.release)} '
             f'(profile <code>{text(older.name)}</code>) and vLLM {text(newer.release)} (profile '
             f'<code>{text(newer.name)}</code>), same model and flags, on 2-core machines (each record names its CPU). {both} of {total} jobs have fresh '
             f'records on both; {_count(len(verdicts), "claim")} changed verdict; '
             f'{_count(len(moved), "figure")} moved beyond tolerance.</div>\n')
    rows = []
    for c in verdicts:
        old, new = c.older.verdict(c.claim_id), c.newer.verdict(c.claim_id)
        pages = " ".join(f'<a href="{prefix}{url}#claim-{c.claim_id.replace(".", "--")}">{text(name)}</a>'
                         for url, name in pages_of.get(c.claim_id, []))
        rows.append(f'<tr id="{changes_anchor(c.claim_id)}"><td><code>{text(c.claim_id)}</code><br>'
                    f'<small>{text(c.claim_text)}</small><br><small>stated on: {pages}</small></td>'
                    f'<td>{pill(old["verdict"])}<br><small>{text(old.get("because", ""))}</small><br>'
                    f'<small>{_record_link(c.older, prefix)}</small></td>'
                    f'<td>{pill(new["verdict"])}<br><small>{text(new.get("because", ""))}</small><br>'
                    f'<small>{_record_link(c.newer, prefix)}</small></td></tr>')
    claims = (f'\n<div class="evidence-table"><table class="verify-changes"><thead><tr><th>claim</th>'
              f'<th>vLLM {text(older.release)}</th><th>vLLM {text(newer.release)}</th></tr></thead>'
              f'<tbody>{"".join(rows)}</tbody></table></div>\n') if rows else \
        '\n<p class="verify-none">No claim changed its verdict between the oldest and the newest release.</p>\n'
    frows = []
    for c in moved:
        f = c.figure
        change = "n/a" if f["change"] is None else f"{f['change'] * 100:+.0f} %"
        unit = f" {f['unit']}" if f.get("unit") else ""
        frows.append(f'<tr id="moved-{text(c.job_id)}-{len(frows)}"><td><code>{text(c.job_id)}</code><br>'
                     f'<small>{text(f["name"])}</small></td>'
                     f'<td>{text(_num(f["before"]))}{text(unit)}<br><small>{_record_link(c.older, prefix)}</small></td>'
                     f'<td>{text(_num(f["after"]))}{text(unit)}<br><small>{_record_link(c.newer, prefix)}</small></td>'
                     f'<td>{text(change)}<br><small>tolerance {f["tolerance"] * 100:.0f} %</small>'
                     f'<br><small>{"" if c.same_machine else "<strong>"}{text(c.machine_note)}'
                     f'{"" if c.same_machine else "</strong>"}</small>'
                     f'</td></tr>')
    figs = (f'\n<div class="evidence-table"><table class="verify-moved"><thead><tr><th>figure</th>'
            f'<th>vLLM {text(older.release)}</th><th>vLLM {text(newer.release)}</th><th>change</th></tr></thead>'
            f'<tbody>{"".join(frows)}</tbody></table></div>\n') if frows else \
        '\n<p class="verify-none">No headline figure moved beyond its job\'s tolerance.</p>\n'
    return intro, claims, figs


def release_timeline(releases: list[str], claim_rows: list[tuple], figure_rows: list[tuple], prefix: str) -> str:
    """One row per changed claim or exact figure, one column per release: the verdict or value on each
    release measured, with its record; a release not measured says what the bisection infers.

    claim_rows: (claim id, [releases.ReleaseRow]); figure_rows: (job id, figure name, [(release,
    value or None, record or None)]).
    """
    if not claim_rows and not figure_rows:
        return '\n<p class="verify-none">Nothing changed between the oldest and the newest release.</p>\n'
    head = "".join(f"<th>{text(r)}</th>" for r in releases)
    body = []
    for claim_id, rows in claim_rows:
        cells = []
        for r in rows:
            if r.measured:
                cells.append(f'<td>{pill(r.measured.verdict)}<br><small><a href="{prefix}'
                             f'{text(r.measured.record.evidence_url())}">record</a></small></td>')
            else:
                cells.append(f'<td class="verify-unmeasured" title="{text(r.inferred)}"><small>'
                             f'{"inferred: " + text(r.guess) if r.guess else "not measured"}</small></td>')
        body.append(f'<tr id="timeline-{text(claim_id.replace(".", "--"))}"><td><code>{text(claim_id)}</code></td>'
                    f'{"".join(cells)}</tr>')
    for job_id, name, values in figure_rows:
        cells = "".join(f'<td>{text(_num(v))}<br><small><a href="{prefix}{text(rec.evidence_url())}">record</a></small></td>'
                        if rec is not None else '<td class="verify-unmeasured"><small>not measured</small></td>'
                        for _, v, rec in values)
        body.append(f'<tr><td><code>{text(job_id)}</code><br><small>{text(name)}</small></td>{cells}</tr>')
    return (f'\n<div class="evidence-table"><table class="verify-timeline"><thead><tr><th>claim or figure</th>'
            f'{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>\n')


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _num(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


LEXERS = {".sh": "bash", ".py": "python", ".promql": "promql", ".yaml": "yaml", ".yml": "yaml", ".conf": "nginx"}


def _include(snippet: str, indent: str = "") -> str:
    """A fenced block that includes a file of snippets/ (pymdownx.snippets): the page never copies code."""
    lang = next((v for k, v in LEXERS.items() if snippet.endswith(k)), "text")
    return f'{indent}```{lang}\n{indent}--8<-- "{snippet}"\n{indent}```\n'


def symptom_claim(claim, expect: str, state, page_href: str, across: str | None) -> str:
    """One claim a symptom leans on: its verdict on the site's profile, why, and a link to its box."""
    releases = f' <small>· vLLM releases: {text(across)}</small>' if across else ""
    return (f'<li>{_verdict_pill(state.verdict, expect)} <a href="{page_href}#{claim.anchor}">'
            f'<code>{text(claim.id)}</code></a> {text(claim.text)}{releases}<br>'
            f'<small class="verify-because">{text(state.because)}</small></li>')


def symptom(s, claim_rows: list[str], read: str, confirm_lines: int = 0, fix_not_run: str | None = None,
            shown_against: str | None = None) -> str:
    """A symptom of the index: a heading with its permanent anchor, how to confirm it, the claims that
    explain it (verdicts from their records) and the fix, with a link (read) to the section that settles it.
    A confirming command longer than a screenful (confirm_lines) is folded, its name showing; fix_not_run:
    what a job checked of a fix file it does not run, said instead of "as measured"; shown_against: what the
    test suite ran the confirming command against."""
    fix, label = "", "**Fix**"
    if s.fix_snippet:
        how = fix_not_run or "as measured"
        fix = f'\n??? example "The fix, {text(how)}: snippets/{text(s.fix_snippet)}"\n\n' + _include(s.fix_snippet, "    ")
    else:
        label = "**Fix** (advice: no job measured it)"
    return (f"\n### {text(s.title)} {{ #{s.anchor} }}\n\n"
            f'<p class="verify-symptom-link"><a href="#{s.anchor}" title="Permanent link to this symptom">'
            f'symptoms/#{s.anchor}</a></p>\n\n'
            f"**Confirm**: {text(s.confirm_how)}."
            + (f" <small>Run by the test suite against {text(shown_against)}.</small>" if shown_against else "")
            + "\n\n"
            + (f'??? example "The command: snippets/{text(s.confirm)}"\n\n' + _include(s.confirm, "    ")
               if confirm_lines > 15 else _include(s.confirm))
            + '\n**Explained by**\n\n<ul class="verify-symptom-claims">' + "".join(claim_rows) + "</ul>\n\n"
            + f'{label}: {text(s.fix)} <a href="{read}">Read why</a>.\n' + fix + "\n")
