"""Addresses that moved: a page or an anchor runbooks may link to can be renamed, never dropped.

Pages: mkdocs.yml's `redirects` plugin (mkdocs-redirects) holds the map, old page to new; the build
writes a page at the old address that forwards, anchor and all, and `verify render` writes the same
for a generator without plugins. Anchors (a claim box, a symptom, a section): ANCHORS below, old
"page#anchor" to new "page#anchor" (pages as tests/published_anchors.txt names them: the URL path
without slashes); the site's script (anchor_script) sends a reader who arrives at an old anchor to
the new one. tests/test_site.py resolves every published anchor through both maps.
"""

from __future__ import annotations

import json

ANCHOR_SCRIPT = "javascripts/anchor-redirects.js"  # where the site serves anchor_script(), from its root
ANCHORS: dict[str, str] = {
    # Experiments are numbered in the order a page gives them; the proxy read-timeout section is
    # linked from elsewhere by what it is about.
    "streaming#experiment-5": "streaming#proxy-read-timeout",
}


def pages() -> dict[str, str]:
    """Moved pages, old to new, as docs/ paths (the plugin's own map in mkdocs.yml)."""
    from verify.config.site import mkdocs_config
    for plugin in mkdocs_config().get("plugins", []):
        if isinstance(plugin, dict) and "redirects" in plugin:
            return dict(plugin["redirects"].get("redirect_maps") or {})
    return {}


def _page_name(src: str) -> str:
    stem = src.removesuffix(".md").removesuffix(".ipynb")
    return "" if stem == "index" else stem.removesuffix("/index")


def resolve(entry: str, anchors: dict[str, str] | None = None, moved_pages: dict[str, str] | None = None) -> str:
    """Where a published "page#anchor" lives now, after every anchor and page redirect."""
    anchors = ANCHORS if anchors is None else anchors
    moved = {_page_name(k): _page_name(v) for k, v in (pages() if moved_pages is None else moved_pages).items()}
    seen = set()
    while entry not in seen:
        seen.add(entry)
        page, _, anchor = entry.partition("#")
        if entry in anchors:
            entry = anchors[entry]
        elif page in moved:
            entry = f"{moved[page]}#{anchor}"
    return entry


def anchor_script() -> str:
    """The script every page loads: an anchor that is not on the page but has moved is followed."""
    return ("// Generated from verify/config/redirects.py (ANCHORS): do not edit.\n"
            "(function () {\n"
            f"  var moved = {json.dumps(ANCHORS, sort_keys=True)};\n"
            "  var me = document.currentScript && document.currentScript.src;\n"
            "  function follow() {\n"
            "    var id = decodeURIComponent(location.hash.slice(1));\n"
            "    if (!id || !me || document.getElementById(id)) return;\n"
            "    var root = me.replace(/javascripts\\/anchor-redirects\\.js.*$/, '');\n"
            "    var page = location.href.split('#')[0].slice(root.length).replace(/(index\\.html)?$/, '')\n"
            "      .replace(/\\/$/, '');\n"
            "    var to = moved[page + '#' + id];\n"
            "    if (to) location.replace(root + (to.split('#')[0] ? to.split('#')[0] + '/' : '') + '#' + to.split('#')[1]);\n"
            "  }\n"
            "  follow();\n"
            "  window.addEventListener('hashchange', follow);\n"
            "})();\n")
