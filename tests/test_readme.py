"""The README and CONTRIBUTING.md say only what the repository bears out.

Every `verify` subcommand and option they name is one the command line takes, every repository path
they write in backticks exists, the README's two commands stand in it verbatim, and its series table
follows the site's navigation and covers every article the registry knows. Neither file holds a date.

Counts: neither file types a count of articles, jobs or claims ("13 articles", "seventy jobs"). The
other way, computing each typed count from the registry, would let such counts stay in the prose;
but every one of them changes with each job or article added, and the registry, the status page and
the site command's closing lines already give them, computed. Forbidding them is simpler and
stricter: nothing in these files can fall behind the registry. The one place a count is visible is
the series table's rows, and test_the_series_table_follows_the_navigation checks those against
mkdocs.yml and the registry. (CONTRIBUTING's "one server start and the offline engine" for the live
sample is tests/test_live_sample.py's to check.)
"""

from __future__ import annotations

import os
import re

import pytest

from tests.conftest import ROOT
from tests.test_series import _series

README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
FILES = (README, CONTRIBUTING)

COMMANDS = (
    "bash verify/bootstrap.sh site    # install; re-measure what changed and a live sample; check every "
    "page; build the site",
    "bash verify/bootstrap.sh test    # install; run the test suite (end-to-end tests start their own server)",
)
MAX_README_LINES = 110

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
SERIES_HEADER = "| # | Article | Page | Snippets | Jobs |"


def _text(path) -> str:
    return path.read_text(encoding="utf-8")


def _fenced(text: str) -> list[str]:
    """The fenced code blocks, each with its backslash-continued lines joined."""
    return [re.sub(r"\\\n\s*", " ", m.group(1)) for m in FENCE.finditer(text)]


def _spans(text: str) -> list[str]:
    """The inline code spans of the prose (fenced blocks left out), whitespace collapsed."""
    prose = FENCE.sub("", text)
    return [re.sub(r"\s+", " ", s) for s in re.findall(r"`([^`]+)`", prose)]


def _code(text: str) -> list[str]:
    """Every piece of code: inline spans, and each line of each fenced block."""
    return _spans(text) + [line for block in _fenced(text) for line in block.splitlines()]


def _subparsers() -> dict:
    from verify.cli import build_parser
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return {"": parser, **action.choices}


# `verify SUB [args]`, as a command (at the start of the code, or after a space or a path's last /),
# its arguments running to the end of the command (a comment, a pipe, && or ; ends it).
VERIFY_COMMAND = re.compile(r"(?:^|(?<=[\s/]))verify[ \t]+(\S+)([^#|;&]*)")


def _verify_commands(text: str) -> list[tuple[str, list[str], str]]:
    """(subcommand, its --options, the code it was read from) for each verify command in the code."""
    found = []
    for code in _code(text):
        for m in VERIFY_COMMAND.finditer(code):
            sub, rest = m.group(1), m.group(2)
            if sub.startswith("<"):  # a placeholder: `verify <subcommand> --help`
                continue
            if sub.startswith("-"):  # an option of verify itself: `verify --help`
                sub, rest = "", f"{sub} {rest}"
            found.append((sub, re.findall(r"(?<!\S)(--[a-z][\w-]*)", rest), code))
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_verify_subcommand_named_is_real(path):
    """(b) Every `verify <subcommand>` in either file is a subcommand of verify.cli.build_parser()."""
    known = _subparsers()
    commands = _verify_commands(_text(path))
    assert commands, f"{path.name} names no verify command: the pattern no longer reads it"
    unknown = [f"{sub!r} in `{code}`" for sub, _, code in commands if sub not in known]
    assert not unknown, f"{path.name} names verify subcommands that do not exist: {'; '.join(unknown)}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_option_given_to_verify_is_real(path):
    """Each --option written after a verify subcommand is one that subcommand takes."""
    known = _subparsers()
    wrong = [f"{option} of verify {sub} in `{code}`" for sub, options, code in _verify_commands(_text(path))
             if sub in known for option in options if option not in known[sub]._option_string_actions]
    assert not wrong, f"{path.name} gives options that do not exist: {'; '.join(wrong)}"


PATH_ENDINGS = (".py", ".md", ".yml", ".sh", ".toml")
PRUNED = {".git", "__pycache__", "node_modules"}


def _ignored_folders() -> set[str]:
    """Folders .gitignore lists (`/build/`, `.venv/`): what the commands make, never committed."""
    lines = (ROOT / ".gitignore").read_text().splitlines()
    return {line.strip("/") for line in lines if line.endswith("/") and not line.startswith("#")}


def _looks_like_a_path(span: str) -> bool:
    """A repository path: one word, relative, no placeholder or wildcard, no URL; with a / or a
    file ending. Absolute paths (`/metrics`, `/usr/sbin/nginx`) are not the repository's."""
    if re.search(r"\s", span) or "<" in span or "*" in span or "://" in span or span.startswith(("/", "~", "$")):
        return False
    return "/" in span or span.endswith(PATH_ENDINGS)


def _files_by_name() -> set[str]:
    """The name of every file in the repository (the ignored folders at its root left out)."""
    ignored = _ignored_folders()
    names: set[str] = set()
    for folder, dirs, files in os.walk(ROOT):
        at_root = folder == str(ROOT)
        dirs[:] = [d for d in dirs if d not in PRUNED and not d.endswith(".egg-info")
                   and not (at_root and d in ignored)]
        names.update(files)
    return names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_path_written_exists(path):
    """(c) Every repository path in backticks exists: a path with a / under the repository root, a bare
    file name (`hook.py`, as the layout table names a folder's modules) somewhere in the repository.
    Paths under a folder .gitignore lists (`site/`, `build/sample-evidence/`, `.venv/`) are what the
    commands make, so they are left out."""
    ignored = _ignored_folders()
    names = _files_by_name()
    paths = [s for s in _spans(_text(path)) if _looks_like_a_path(s)]
    assert paths, f"{path.name} writes no path: the pattern no longer reads it"
    missing = []
    for p in paths:
        if p.split("/", 1)[0] in ignored:
            continue
        if "/" in p:
            if not (ROOT / p).exists():
                missing.append(p)
        elif p not in names:
            missing.append(p)
    assert not missing, f"{path.name} names paths that do not exist: {sorted(set(missing))}"


def _excerpts(text: str) -> list[tuple[str, list[str]]]:
    """The fenced blocks that open with a comment naming a repository file: (that file, the lines quoted)."""
    out = []
    for m in FENCE.finditer(text):
        first, *lines = m.group(1).splitlines()
        named = re.fullmatch(r"# (\S+)", first)
        if named and (ROOT / named.group(1)).is_file():
            out.append((named.group(1), lines))
    return out


def test_the_job_contributing_shows_is_quoted_as_it_is():
    """A block that opens with `# <path>` quotes that file: every line but a blank or an elision
    (`...`) stands in it, in the same order, so the example cannot drift from the job it shows."""
    excerpts = _excerpts(_text(CONTRIBUTING))
    assert excerpts, "CONTRIBUTING.md quotes no file: the pattern no longer reads its example"
    for file, lines in excerpts:
        source = (ROOT / file).read_text(encoding="utf-8").splitlines()
        at = 0
        for line in lines:
            if not line.strip() or line.strip().startswith("..."):
                continue
            found = next((i for i in range(at, len(source)) if source[i] == line), None)
            assert found is not None, f"CONTRIBUTING.md quotes {file}, which has no line {line!r} after line {at}"
            at = found + 1


NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
                "ninety hundred dozen").split()
NUMBER = r"(?:\d[\d,.]*|(?:%s)(?:-(?:%s))?)" % ("|".join(NUMBER_WORDS), "|".join(NUMBER_WORDS))
# A number, at most one word between ("13 published articles"), then what the registry counts.
TYPED_COUNT = re.compile(rf"\b{NUMBER}\s+(?:[\w-]+\s+)?(?:articles|jobs|claims)\b", re.I)


def _series_rows(text: str) -> list[str]:
    table = text.split(SERIES_HEADER, 1)[1].split("\n\n", 1)[0]
    return [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("|---")]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_count_of_articles_jobs_or_claims_is_typed(path):
    """(d) No number, in digits or words, stands before "articles", "jobs" or "claims" (see the module
    docstring for why no such count is allowed rather than computed). The series table is left out."""
    text = _text(path)
    if path == README:
        for row in _series_rows(text):
            text = text.replace(row, "")
    found = [m.group(0) for m in TYPED_COUNT.finditer(text)]
    assert not found, f"{path.name} types counts the registry gives (verify list, the status page): {found}"


def test_the_two_commands_stand_verbatim_first():
    """(e) The README's two commands, exactly, as its first code block."""
    text = _text(README)
    for command in COMMANDS:
        assert command in text.splitlines(), f"the README lacks, verbatim: {command}"
    first = _fenced(text)[0].splitlines()
    assert first == list(COMMANDS), f"the README's first code block is not the two commands: {first}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_bootstrap_mode_named_is_real(path):
    """Each `bash verify/bootstrap.sh MODE` names a mode the script's case statement takes."""
    script = (ROOT / "verify" / "bootstrap.sh").read_text()
    modes = set(re.search(r'case "\$mode" in\s*\n\s*([\w|-]+)\)', script).group(1).split("|"))
    named = re.findall(r"bash verify/bootstrap\.sh ([\w-]+)", _text(path))
    assert named or path != README, "the README names no bootstrap mode: the pattern no longer reads it"
    assert set(named) <= modes, f"{path.name} names modes bootstrap.sh does not take: {sorted(set(named) - modes)}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_date_is_typed(path):
    """(f) No date (any YYYY-MM-DD, the 2026-MM-DD of run logs included): dates live in the records."""
    found = re.findall(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b", _text(path))
    assert not found, f"{path.name} holds dates: {found}"


def test_the_probe_exit_statuses_are_the_commands_own():
    """The exit statuses the README gives for `verify probe` are those its --help states."""
    probe = _subparsers()["probe"]
    own = set(re.findall(r"\b(\d)\b", probe.description.split("Exit status:", 1)[1]))
    section = _text(README).split("## Probing your own deployment", 1)[1].split("\n## ", 1)[0]
    said = " ".join(section.split("Exit status:", 1)[1].split("\n\n", 1)[0].split())
    written = set(re.findall(r"\b(\d)\b", said))
    assert written == own, f"the README gives exit statuses {sorted(written)}; verify probe --help gives {sorted(own)}"


def test_the_readme_is_short():
    """(a) The README stays an introduction; the how-to lives in CONTRIBUTING.md."""
    lines = len(_text(README).splitlines())
    assert lines <= MAX_README_LINES, f"the README has {lines} lines (at most {MAX_README_LINES})"


def test_the_series_table_follows_the_navigation():
    """The README's series table: one row per article of mkdocs.yml's "The series", in its order, numbered
    from 1, each naming its page and the folder of its jobs; and those folders are exactly the articles
    the registry's jobs live in."""
    from verify.registry import all_jobs
    rows = [[cell.strip() for cell in row.strip("|").split("|")] for row in _series_rows(_text(README))]
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1)), "the rows are not numbered 1, 2, ..."
    nav = _series()
    assert [r[1] for r in rows] == [title for title, _ in nav], "titles or order differ from mkdocs.yml's nav"
    pages = [re.match(r"`docs/([^`]+)`", r[2]).group(1) for r in rows]
    assert pages == [f for _, f in nav], "pages differ from mkdocs.yml's nav"
    folders = [re.fullmatch(r"`verify/jobs/(\w+)/`", r[4]).group(1) for r in rows]
    assert len(set(folders)) == len(folders), "an article's jobs folder is named twice"
    articles = {job.article for job in all_jobs().values()}
    assert set(folders) == articles, (f"the table's job folders and the registry's articles differ: "
                                      f"{sorted(set(folders) ^ articles)}")
