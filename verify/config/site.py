"""The site's configuration as MkDocs reads it, and where the site is published.

mkdocs.yml is the one place the published address is set: `site_url: !ENV SITE_URL`. The deploy
job sets SITE_URL to the address GitHub Pages reports for the repository; a local build leaves it
unset and gets a site that works at any address (links relative to each page). Everything else
that needs the address (the probe's links, the tree Zensical builds) reads it through here.
"""

from __future__ import annotations

import os

from verify.paths import ROOT

MKDOCS_YML = ROOT / "mkdocs.yml"


def _env_tag(loader, node):
    """MkDocs's `!ENV NAME` and `!ENV [NAME, ..., default]`: the first variable set, else the default."""
    import yaml
    if isinstance(node, yaml.ScalarNode):
        names, default = [loader.construct_scalar(node)], None
    else:
        items = loader.construct_sequence(node)
        names, default = (items[:-1], items[-1]) if len(items) > 1 else (items, None)
    return next((os.environ[n] for n in names if os.environ.get(n)), default)


def mkdocs_config() -> dict:
    """mkdocs.yml as MkDocs reads it (environment variables resolved)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!ENV", _env_tag)
    return yaml.load(MKDOCS_YML.read_text(encoding="utf-8"), Loader=Loader)


def site_url() -> str:
    """The published address with a trailing slash, or "" when this build has none."""
    url = mkdocs_config().get("site_url") or ""
    return url.rstrip("/") + "/" if url else ""
