"""MkDocs build hook: each page through the verify stage's renderer (verify/site/render.py).

The same renderer writes the tree other generators build (`verify render`); this
hook only lets `mkdocs build` and `mkdocs serve` render from docs/ directly.
Problems (missing, stale or contradicted evidence) are logged as warnings, so
`mkdocs build --strict` fails on them.
"""

from __future__ import annotations

import logging

from verify.site import agreement
from verify.site.render import render_page

log = logging.getLogger("mkdocs.plugins.verify")


def on_pre_build(config):
    agreement.forget()  # `mkdocs serve` rebuilds in one process: read records afresh


def on_page_markdown(markdown, page, config, files):
    return render_page(page.file.src_path, markdown, lambda problem: log.warning("%s", problem))
