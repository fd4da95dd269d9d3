"""Adding a claim to an existing article touches the page and the job's module (and the job's rule
tests), nothing else: whether the claim is a timing claim and its published anchor are derived.

In a copy of the checkout, a timing claim is added to httpx-close (the job CONTRIBUTING.md shows) and
stated on its page; `verify pages`, which contributors already run, lists the new anchor in
tests/published_anchors.txt, and `verify list` finds a timing claim. Every other file is as it was.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from verify.site import published_anchors

JOB = Path("verify/jobs/streaming/httpx_close.py")
PAGE = Path("docs/streaming.md")
ANCHORS = Path("tests/published_anchors.txt")
CLAIM = "httpx-close.close-in-ms"
ANCHOR = "streaming#claim-httpx-close--close-in-ms"

RULE = '''
def decide_close_in_ms(d):
    return verdict_if(d["close_seconds"] < CLOSE_TOLERANCE_S / 10, f"closing took {d['close_seconds'] * 1000:.1f} ms")


'''
NEW_CLAIM = f'Claim("{CLAIM}", "Leaving the block takes under 10 ms.", decide_close_in_ms, timing=True),\n            '


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def _verify(root: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "verify", *args], cwd=root, capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_new_timing_claim_needs_only_its_page_and_its_job(checkout):
    (checkout / ANCHORS).parent.mkdir()
    shutil.copy(ROOT / ANCHORS, checkout / ANCHORS)
    before = _files(checkout)

    # The two hand edits: the rule and its claim in the job's module, the claim box on the page.
    job = (checkout / JOB).read_text()
    assert job.count("JOB = Job(") == 1 and job.count("    claims=(") == 1
    (checkout / JOB).write_text(job.replace("JOB = Job(", RULE.lstrip("\n") + "JOB = Job(")
                                .replace("    claims=(", "    claims=(" + NEW_CLAIM))
    page = (checkout / PAGE).read_text()
    box = '{{ claim("httpx-close.prompt", expect="confirmed") }}\n'
    assert page.count(box) == 1
    (checkout / PAGE).write_text(page.replace(box, box + f'\n{{{{ claim("{CLAIM}", expect="confirmed") }}}}\n'))

    # The derivations: the command that rewrites generated files, then the job list.
    assert ANCHOR in _verify(checkout, "pages")
    rows = {row["id"]: row for row in json.loads(_verify(checkout, "list", "--json"))}
    assert CLAIM in rows["httpx-close"]["timing_claims"]
    assert "httpx-close.prompt" in rows["httpx-close"]["timing_claims"]

    # The anchor is appended below every line the list had; run again, nothing more is.
    listed = (checkout / ANCHORS).read_text()
    assert listed == (ROOT / ANCHORS).read_text() + ANCHOR + "\n"
    assert ANCHOR not in _verify(checkout, "pages")
    after = _files(checkout)
    changed = {f for f in before.keys() | after.keys() if before.get(f) != after.get(f)}
    assert changed == {JOB.as_posix(), PAGE.as_posix(), ANCHORS.as_posix()}


def test_the_anchor_list_only_grows(tmp_path):
    """An anchor the pages no longer show keeps its line (runbooks may link to it); comments stay too."""
    listed = tmp_path / "published_anchors.txt"
    kept = "# a comment\n\nstreaming#claim-gone--since-renamed\n"
    listed.write_text(kept.rstrip("\n"))  # no final newline: the next anchor still starts a line
    appended = published_anchors.append_new(listed)
    assert appended == published_anchors.current_anchors() and len(appended) > 100
    assert listed.read_text() == kept + "".join(a + "\n" for a in appended)
    assert published_anchors.append_new(listed) == []
    assert published_anchors.published(listed) == ["streaming#claim-gone--since-renamed", *appended]
