"""The symptom index (docs/symptoms.md, verify/config/symptoms.py) against the committed records: every
symptom leans on claims that hold on the newest release, and the rule that says so fails when one does
not (a claim gone, unstated, contradicted, inconclusive, stale)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from tests.conftest import ROOT
from verify.config import symptoms as config
from verify.probe import checks as probe_checks
from verify.probe import serving
from verify.verdicts import agreement, symptoms


def _one(symptom_id: str) -> config.Symptom:
    return config.by_id()[symptom_id]


def test_the_index_holds_at_least_thirty_three_symptoms_from_every_group():
    assert len(config.SYMPTOMS) >= 33
    assert {s.group for s in config.SYMPTOMS} == set(config.GROUPS)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", s.id) for s in config.SYMPTOMS)
    # Both operator articles are in it.
    leaned = {c.split(".")[0] for s in config.SYMPTOMS for c in s.claims}
    assert {"health-probes", "drain-grace", "admission-limit", "queued-tokens"} <= leaned


def test_every_symptom_leans_on_claims_that_hold_and_its_commands_run():
    assert symptoms.problems() == []


def test_every_command_under_snippets_symptoms_is_run_against_its_fault_by_the_test_it_names():
    """verify/config/symptoms.py SHOWN: each file of snippets/symptoms/ has an entry, and the test file it
    names runs that file (by its name) and exists; an entry for a file that is gone is caught too."""
    folder = ROOT / "snippets" / "symptoms"
    assert set(config.SHOWN) == {f"symptoms/{p.name}" for p in folder.iterdir()}
    for path, shown in config.SHOWN.items():
        source = (ROOT / "tests" / shown.test).read_text()
        name = path.split("/")[-1]
        # test_symptoms_live.py runs every query of the folder (found by glob), named or not.
        by_glob = name.endswith(".promql") and 'glob("*.promql")' in source
        assert name in source or by_glob, (path, shown.test)
    assert all(s.confirm in config.SHOWN for s in config.SYMPTOMS if s.confirm.startswith("symptoms/"))


def _lean(symptom_id: str, i: int = 0) -> symptoms.Lean:
    return symptoms.leans(_one(symptom_id))[i]


def test_a_claim_that_no_job_defines_is_a_problem():
    s = dataclasses.replace(_one("health-503"), claims=("health-probes.no-such-claim",))
    assert "which no job defines" in symptoms.lean_problem(s, symptoms.leans(s)[0])


def test_a_claim_no_article_states_is_a_problem():
    lean = dataclasses.replace(_lean("health-503"), page=None)
    assert "which no article states" in symptoms.lean_problem(_one("health-503"), lean)


def test_an_inconclusive_claim_is_a_problem():
    """Damage: the record of the claim a symptom leans on came out inconclusive (a failed capture)."""
    lean = _lean("health-503")
    lean = dataclasses.replace(lean, state=dataclasses.replace(lean.state, verdict="inconclusive",
                                                                because="a capture failed"))
    assert "inconclusive on cpu" in symptoms.lean_problem(_one("health-503"), lean)


def test_a_contradicted_claim_is_a_problem_and_the_build_treats_it_as_a_contradiction(monkeypatch):
    """Data: the claim's verdict flipped against what its article states."""
    lean = _lean("health-503")
    flipped = dataclasses.replace(lean, state=dataclasses.replace(lean.state, verdict="refuted"))
    assert "refuted" in symptoms.lean_problem(_one("health-503"), flipped)
    from verify.site import render
    monkeypatch.setattr(symptoms, "leans", lambda s: [flipped])
    warned = []
    render.render_page("symptoms.md", '{{ symptom("health-503") }}', warned.append)
    assert warned and isinstance(warned[0], agreement.Contradiction), warned


def test_a_stale_claim_is_a_problem():
    lean = _lean("health-503")
    stale = dataclasses.replace(lean, state=dataclasses.replace(lean.state, changed=("verify/jobs/x.py",)))
    assert "stale" in symptoms.lean_problem(_one("health-503"), stale).lower()


def test_a_command_nothing_runs_and_a_fix_nothing_measured_are_problems(monkeypatch):
    broken = dataclasses.replace(_one("health-503"), confirm="health/unknown.sh", fix_snippet="nginx/unmeasured.conf")
    monkeypatch.setattr(symptoms, "SYMPTOMS", (broken,))
    found = "\n".join(symptoms.problems())
    assert "is run by no job's record" in found and "does not exist" in found
    assert "fix snippets/nginx/unmeasured.conf is measured by no job" in found


def test_a_section_that_does_not_exist_is_a_problem(monkeypatch):
    monkeypatch.setattr(symptoms, "SYMPTOMS", (dataclasses.replace(_one("health-503"), read="health.md#gone"),))
    assert any("no section of the site" in p for p in symptoms.problems())


def test_the_page_shows_every_symptom_once():
    page = (ROOT / "docs" / config.PAGE).read_text()
    for s in config.SYMPTOMS:
        assert page.count(f'symptom("{s.id}")') == 1, s.id


def test_probe_checks_named_by_symptoms_exist():
    """Each check id a symptom names is one `verify probe` reports (the checks' own constructors)."""
    import inspect
    source = inspect.getsource(probe_checks) + inspect.getsource(serving)
    for s in config.SYMPTOMS:
        for check in s.probe_checks:
            assert f'"{check}"' in source or f'"finish-{{expected}}"' in source and check.startswith("finish-"), check


def test_a_differing_check_prints_its_symptom_and_an_agreeing_one_nothing():
    from verify.probe.report import symptom_links
    c = probe_checks.Check("delivery", "q", probe_checks.DIFFERS, "in blocks", "streaming/#x")
    ok = dataclasses.replace(c, verdict=probe_checks.OK)
    unsure = dataclasses.replace(c, verdict=probe_checks.UNKNOWN)
    assert symptom_links([c], "") == ['delivery differs: symptom "Streamed tokens arrive in bursts, not one at a '
                                      'time" at symptoms/#symptom-tokens-in-bursts']
    assert symptom_links([ok], "") == []
    assert "could not be told" in symptom_links([unsure], "https://site.example/")[0]
    assert symptom_links([unsure], "https://site.example/")[0].endswith(
        "https://site.example/symptoms/#symptom-tokens-in-bursts")


@pytest.mark.parametrize("entry, expected", [
    ("streaming#experiment-5", "streaming#proxy-read-timeout"),
    ("troubleshooting#symptom-health-503", "symptoms#symptom-health-503"),
    ("streaming#wire-format", "streaming#wire-format"),
])
def test_redirects_resolve_published_anchors(entry, expected):
    from verify.config.redirects import resolve
    assert resolve(entry) == expected


def test_verify_check_reports_a_claim_the_index_leans_on_once(monkeypatch):
    """A stale claim is reported by its article's line; the index adds only what the articles cannot see."""
    gone = dataclasses.replace(_one("health-503"), claims=("health-probes.no-such-claim", "health-probes.dead-exits"))
    monkeypatch.setattr(symptoms, "SYMPTOMS", (gone,))
    assert [p for p in symptoms.problems(articles_checked=True) if "leans on" in p] == [
        "symptom 'health-503' leans on claim 'health-probes.no-such-claim', which no job defines"]
