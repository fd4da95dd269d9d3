"""Does every symptom of the index still point at evidence that holds?

A symptom (verify/config/symptoms.py) states nothing of its own: it leans on claims. It may only lean on a
claim that a job still defines, that an article states, and whose record on the newest release (the
site's own profile) is fresh, decisive and what that article asserts. Anything else is a problem: the
build and `verify check` fail on it, so a symptom cannot outlive its explanation. Its confirming command
must run somewhere (a job's recorded inputs, or the live suite's snippets/symptoms/), and its fix snippet
must be one a job measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from verify.config.profiles import DEFAULT_PROFILE
from verify.config.symptoms import PAGE, SYMPTOMS, Symptom
from verify.paths import DOCS, SNIPPETS
from verify.registry import all_claims, all_jobs
from verify.verdicts import agreement
from verify.verdicts.directives import page_claims

RUN_BY_THE_SUITE = "symptoms/"  # every file under snippets/symptoms/ runs in tests/test_symptoms_live.py


@dataclass(frozen=True)
class Lean:
    """One claim a symptom leans on: where an article states it, as what, and its state on the newest release."""
    claim_id: str
    page: str | None
    expect: str | None
    state: agreement.ClaimState | None


def leans(symptom: Symptom) -> list[Lean]:
    stated = {}
    for pc in page_claims():
        if pc.page != PAGE:
            stated.setdefault(pc.claim_id, pc)
    out = []
    for claim_id in symptom.claims:
        pc = stated.get(claim_id)
        state = agreement.claim_state(claim_id, DEFAULT_PROFILE) if claim_id in all_claims() else None
        out.append(Lean(claim_id, pc.page if pc else None, pc.expect if pc else None, state))
    return out


def lean_problem(symptom: Symptom, lean: Lean) -> str | None:
    where = f"symptom {symptom.id!r}"
    if lean.state is None:
        return f"{where} leans on claim {lean.claim_id!r}, which no job defines"
    if lean.page is None:
        return f"{where} leans on claim {lean.claim_id!r}, which no article states"
    if lean.state.verdict == "inconclusive":
        return f"{where} leans on claim {lean.claim_id!r}, inconclusive on {DEFAULT_PROFILE}: {lean.state.because}"
    problem = lean.state.problem(lean.expect)
    if problem and not isinstance(problem, agreement.HardwareDifference):
        return f"{where} leans on claim {lean.claim_id!r}: {problem}"
    return None


def measured_snippets() -> set[str]:
    """Snippets (relative to snippets/) among the inputs of a record on the site's profile (a stale record
    is reported on its article's claims; here it only matters that a job runs the snippet)."""
    out = set()
    for job in all_jobs().values():
        state = agreement.claim_state(job.claims[0].id, DEFAULT_PROFILE)
        if state.record is None:
            continue
        out |= {k.removeprefix("snippets/") for k in state.record.raw.get("inputs", {}) if k.startswith("snippets/")}
    return out


def problems(articles_checked: bool = False) -> list[str]:
    """What is wrong with the index. articles_checked: the caller reports every article's claims itself
    (verify check), so a claim's own staleness or contradiction is not reported twice, only a claim the
    index leans on that is gone or stated nowhere."""
    found = []
    ids = [s.id for s in SYMPTOMS]
    found += [f"symptom id {i!r} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    measured = measured_snippets()
    page = (DOCS / PAGE).read_text(encoding="utf-8") if (DOCS / PAGE).is_file() else ""
    for s in SYMPTOMS:
        found += [p for p in (lean_problem(s, lean) for lean in leans(s)
                              if not articles_checked or lean.state is None or lean.page is None) if p]
        if not (s.confirm in measured or s.confirm.startswith(RUN_BY_THE_SUITE)):
            found.append(f"symptom {s.id!r}: its confirming command snippets/{s.confirm} is run by no job's "
                         f"record and is not under snippets/{RUN_BY_THE_SUITE}")
        if not (SNIPPETS / s.confirm).is_file():
            found.append(f"symptom {s.id!r}: snippets/{s.confirm} does not exist")
        if s.fix_snippet and s.fix_snippet not in measured:
            found.append(f"symptom {s.id!r}: its fix snippets/{s.fix_snippet} is measured by no job's record")
        read_page, _, anchor = s.read.partition("#")
        if not (DOCS / read_page).is_file() or f"{{ #{anchor} }}" not in (DOCS / read_page).read_text(encoding="utf-8"):
            found.append(f"symptom {s.id!r}: it sends the reader to {s.read}, which is no section of the site")
        shown = page.count(f'symptom("{s.id}")')
        if page and shown != 1:
            found.append(f"{PAGE}: symptom {s.id!r} must be shown exactly once (found {shown})")
    return found
