"""MkDocs build hook: each page through the verify stage's renderer (verify/site/render.py).

The same renderer writes the tree other generators build (`verify render`); this
hook only lets `mkdocs build` and `mkdocs serve` render from docs/ directly.
Stale or missing evidence is logged as a warning, so `mkdocs build --strict`
fails on it. A page that contradicts its evidence, or a record that cannot be
read, fails every build, whatever its flags (`-q` hides warnings; it must not
hide a contradiction).
"""

from __future__ import annotations

import logging

from mkdocs.exceptions import PluginError

from verify.errors import VerifyError
from verify.verdicts import agreement
from verify.site.render import render_page

log = logging.getLogger("mkdocs.plugins.verify")
_contradictions: list[str] = []


def on_pre_build(config):
    agreement.forget()  # `mkdocs serve` rebuilds in one process: read records afresh
    _contradictions.clear()


def _report(problem: str) -> None:
    if isinstance(problem, agreement.HardwareDifference):
        log.info("%s", problem)  # shown on the claim box; not a warning, so a strict build passes
        return
    if isinstance(problem, agreement.Contradiction):
        _contradictions.append(problem)
    log.warning("%s", problem)


def on_files(files, config):
    # The script that follows a moved anchor, generated from its one map (verify/config/redirects.py).
    from mkdocs.structure.files import File

    from verify.config.redirects import ANCHOR_SCRIPT, anchor_script
    files.append(File.generated(config, ANCHOR_SCRIPT, content=anchor_script()))
    return files


def on_page_markdown(markdown, page, config, files):
    try:
        return render_page(page.file.src_path, markdown, _report)
    except VerifyError as e:
        raise PluginError(e.message) from None


def on_env(env, config, files):
    # After every page was rendered, before any is written: all contradictions at once, no site.
    if _contradictions:
        raise PluginError(f"{len(_contradictions)} claim(s) on the pages contradict their evidence; "
                          f"first: {_contradictions[0]}")
    return env
