"""The test tiers' guard: a test may start only what its markers allow.

The suite runs in tiers (tests/tiers.py): the fast tier starts nothing heavy, so it can run on
every core in about a minute. What a test starts is seen, not trusted: a Python audit hook sees
every `subprocess.Popen` (the only way the verify stage starts a vLLM server, the offline engine,
a proxy, Prometheus, the browser's driver or a site build) and classifies its command line.

The same file guards the test process (tests/conftest.py installs `install()`) and every Python
process a test starts: this folder is put on PYTHONPATH, so a `python -m verify run ...` child loads
it as `sitecustomize` and is guarded too, with the markers of the test that started it
($VERIFY_TIER_ALLOWED). A child that breaks the rule refuses the start and writes one line into
$VERIFY_TIER_GUARD_LOG, which the test process reads when the test ends.
"""

from __future__ import annotations

import os
import sys

ALLOWED_ENV = "VERIFY_TIER_ALLOWED"
LOG_ENV = "VERIFY_TIER_GUARD_LOG"

# What each kind of start needs: its own marker, or a tier that is slow anyway for the same reason
# (a live test may put a proxy in front of the live server).
NEEDS = {
    "engine": {"engine", "live"},  # a live test may start the one server the suite shares
    "proxy": {"proxy", "live", "engine"},
    "browser": {"browser"},
    "build": {"build"},
}


# A proxy asked for its version or to check a configuration answers and exits: nothing to start.
QUERIES = {
    "nginx": {"-v", "-V", "-t", "-T"},
    "caddy": {"version", "validate", "adapt", "fmt", "list-modules"},
    "haproxy": {"-v", "-vv", "-c"},
    "prometheus": {"--version"},
}


def spawn_kind(argv) -> str | None:
    """What a command line starts, in the tiers' terms, or None for anything light."""
    if isinstance(argv, (str, bytes, os.PathLike)):
        argv = [argv]
    words = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in argv or ()]
    if not words:
        return None
    joined = " ".join(words)
    program = os.path.basename(words[0])
    if "vllm.entrypoints" in joined or "verify.runner.offline" in joined or \
            (program == "vllm" and len(words) > 1 and words[1] in ("serve", "bench")):
        return "engine"
    if program in QUERIES and not QUERIES[program] & set(words[1:]):
        return "proxy"
    if "chromium" in program or ("playwright" in joined and "run-driver" in joined):
        return "browser"
    if (program == "mkdocs" or "-m mkdocs" in joined or program == "zensical") and "build" in words:
        return "build"
    if ("pip" in program or "-m pip" in joined) and "install" in words:
        return "build"
    return None


def allowed() -> set[str]:
    return set(filter(None, os.environ.get(ALLOWED_ENV, "").split(",")))


def _refusal(kind: str, argv, markers: set[str]) -> str | None:
    if kind is None or NEEDS[kind] & markers:
        return None
    words = argv if isinstance(argv, (list, tuple)) else [argv]
    shown = " ".join(str(w) for w in words)[:160]
    return (f"started {kind} ({shown}) without a marker that allows it "
            f"(one of: {', '.join(sorted(NEEDS[kind]))}; tests/tiers.py)")


class TierViolation(RuntimeError):
    """A start the running test's markers do not allow."""


def _child_hook(event: str, args: tuple) -> None:
    if event != "subprocess.Popen" or ALLOWED_ENV not in os.environ:
        return
    refusal = _refusal(spawn_kind(args[1]), args[1], allowed())
    if refusal:
        log = os.environ.get(LOG_ENV)
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(refusal + "\n")
        raise TierViolation(refusal)


def install(on_violation) -> None:
    """Guard this process: each refused start is passed to on_violation(message), then refused."""
    def hook(event: str, args: tuple) -> None:
        if event != "subprocess.Popen" or ALLOWED_ENV not in os.environ:
            return
        refusal = _refusal(spawn_kind(args[1]), args[1], allowed())
        if refusal:
            on_violation(refusal)
            raise TierViolation(refusal)
    sys.addaudithook(hook)


# Loaded as sitecustomize in a child: guard it with its parent test's markers.
if __name__ == "sitecustomize" and ALLOWED_ENV in os.environ:
    sys.addaudithook(_child_hook)
