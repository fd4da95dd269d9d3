"""The suite's tiers: what a test may start, declared by its markers and checked, not trusted.

    fast      everything else: rules, flips, damage, recompute, layers, pages rendered from the
              committed records. Starts no server, no proxy, no browser, builds no whole site.
              `pytest -m fast -n auto` is the edit loop (CONTRIBUTING.md).
    live      talks to the one vLLM server the suite shares (tests/conftest.py, `live_server`)
    engine    starts a vLLM engine of its own (a server variant, the offline engine, `verify serve`)
    proxy     starts a real proxy (nginx, Caddy, HAProxy) or Prometheus, with no vLLM
    browser   drives Debian's Chromium
    build     builds a whole site (MkDocs, Zensical) or a Python environment
    stack     imports the serving stack (vLLM, PyTorch, PEFT, Transformers) into the test process:
              vLLM's own argument parser, LoRA weights built with PEFT. Starts nothing, but the
              imports alone take 2-13 s, more than the rest of a fast test file.

Three checks keep the markers true:
- at collection, a test that asks for a fixture of a tier (below) without its marker stops the
  suite before anything runs;
- while it runs, tests/tier_guard/sitecustomize.py sees every process the test and its Python
  children start; a start its markers do not allow fails the test;
- a test without the stack marker after which a module of STACK_MODULES is imported that was not
  before fails (tests/conftest.py).
"""

from __future__ import annotations

import pytest

TIERS = {
    "live": "talks to the live vLLM server the suite shares",
    "engine": "starts a vLLM engine of its own (a server, the offline engine)",
    "proxy": "starts a real proxy or Prometheus (no vLLM)",
    "browser": "drives Debian's Chromium against a built site",
    "build": "builds a whole site or a Python environment",
    "stack": "imports the serving stack (vLLM, PyTorch, PEFT, Transformers) into the test process",
}
STACK_MODULES = ("vllm", "torch", "peft", "transformers")
# The tiers whose tests may import the stack: their own servers and engines bring it in anyway.
STACK_TIERS = {"stack", "live", "engine"}
FAST = "fast"

# Fixtures that bring a tier with them, by where they are defined: asking for one needs its marker.
FIXTURE_TIERS = {
    "tests.conftest.live_server": "live", "tests.conftest.base_env": "live",
    "tests.test_site.browser": "browser", "tests.test_site.page": "browser", "tests.test_site.served": "browser",
    "tests.test_site_zensical.zpage": "browser", "tests.test_site_zensical.zserved": "browser",
    "tests.test_site.site": "build", "tests.test_site_zensical.rendered": "build",
    "tests.test_site_zensical.zsite": "build", "tests.test_workflows.docs_only_venv": "build",
    "tests.test_proxies.test_upstream": "proxy",
    "tests.test_server_commands.parse": "stack",
}


def fixture_tiers(item) -> dict[str, str]:
    """The fixtures the test asks for (directly or through others) that bring a tier, with it."""
    info = getattr(item, "_fixtureinfo", None)
    out = {}
    for name, defs in (info.name2fixturedefs.items() if info else ()):
        func = defs[-1].func
        tier = FIXTURE_TIERS.get(f"{func.__module__}.{func.__name__}")
        if tier:
            out[name] = tier
    return out

# The tiers that need a vLLM engine: `bash verify/bootstrap.sh test` runs them in one process, beside a
# second process for every other tier (an engine binds a core; two engines at once slow each other
# down). Not xdist's loadgroup: with pytest 9 it no longer groups (xdist renames item._nodeid, which
# pytest 9 no longer reads).
ENGINE_TIERS = {"live", "engine"}
# While a test of ENGINE_TIERS runs, this file exists (its path in $VERIFY_ENGINE_BUSY, set by the bootstrap
# for both processes), and a test of another tier starts on the last core only (tests/conftest.py).
ENGINE_BUSY_ENV = "VERIFY_ENGINE_BUSY"


def markers_of(item) -> set[str]:
    return {m.name for m in item.iter_markers() if m.name in TIERS}


def group(item) -> None:
    """As each test is collected: a test without a tier's marker is in the fast tier."""
    if not markers_of(item):
        item.add_marker(FAST)


def check(items) -> None:
    """Fail the collection on a tier's fixture asked for without the tier's marker."""
    missing = []
    for item in items:
        markers = markers_of(item)
        for fixture, tier in fixture_tiers(item).items():
            if tier not in markers:
                missing.append(f"{item.nodeid}: uses the fixture {fixture!r} without @pytest.mark.{tier}")
    if missing:
        raise pytest.UsageError("tests/tiers.py: a test's tier is missing:\n  " + "\n  ".join(sorted(set(missing))))
