"""Every program the project runs that is not a Python package, declared once: what it is, its
Debian package, and which jobs and which command need it.

- `bash verify/bootstrap.sh MODE` installs the packages of the programs MODE needs
  (`python3 -S -m verify programs --missing MODE`, standard library only: it runs before any
  environment exists).
- `verify run` checks the programs of the jobs it is about to run before the first engine starts,
  and stops in seconds naming the package (`missing_for`).
- verify/live/ finds each binary through `find`, which also notes that it was used: a job that
  runs a program this table does not give it fails (verify/runner), so the table cannot fall
  behind the jobs.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

# What each mode of verify/bootstrap.sh runs: `install` and `site` may run any job (a CI job runs
# one of them; the site command re-measures whatever is stale, or all of them with --all), `test`
# runs jobs and the tests that need programs of their own.
MODES = ("install", "site", "test")

_NGINX_JOBS = ("cancel-nginx-default", "cancel-nginx-ignore-abort", "cancel-nginx-streaming", "cancel-nginx-tls",
               "finish-reasons", "probe-tls-default", "proxy-buffering", "proxy-read-timeout",
               "drain-abort", "drain-grace", "front-limit")
_TLS_JOBS = ("cancel-nginx-tls", "probe-tls-default", "proxy-buffering", "other-proxies")
_PROMETHEUS_JOBS = ("load-signals", "ttft-quantiles")


@dataclass(frozen=True)
class Program:
    name: str                 # the command
    package: str              # the Debian package that installs it
    purpose: str
    jobs: tuple[str, ...] = ()  # the jobs that run it
    tests: bool = False       # the test suite runs it beyond what its jobs do
    fallback: str | None = None  # where Debian puts it when that directory is not on PATH
    env_var: str | None = None   # names another binary to use instead
    version_args: tuple[str, ...] = ("--version",)  # what makes it print its version


PROGRAMS: dict[str, Program] = {p.name: p for p in (
    Program("nginx", "nginx", "the streaming article's proxy in front of the server", _NGINX_JOBS, tests=True,
            fallback="/usr/sbin/nginx", env_var="VERIFY_NGINX",
            version_args=("-v",)),
    Program("caddy", "caddy", "the second proxy the streaming article compares",
            ("cancel-caddy-default", "other-proxies"), tests=True, fallback="/usr/bin/caddy", env_var="VERIFY_CADDY",
            version_args=("version",)),
    Program("haproxy", "haproxy", "the third proxy the streaming article compares",
            ("cancel-haproxy-default", "other-proxies"), tests=True, fallback="/usr/sbin/haproxy",
            env_var="VERIFY_HAPROXY", version_args=("-v",)),
    Program("openssl", "openssl", "a throwaway self-signed certificate for the TLS proxy set-ups", _TLS_JOBS,
            tests=True, version_args=("version",)),
    Program("prometheus", "prometheus", "scrapes the run's server with the metrics article's rules",
            _PROMETHEUS_JOBS, tests=True, fallback="/usr/bin/prometheus"),
    Program("promtool", "prometheus", "checks the metrics article's Prometheus configuration and rules",
            _PROMETHEUS_JOBS, tests=True, fallback="/usr/bin/promtool"),
    Program("curl", "curl", "the curl snippets of the streaming article", ("wire-format",), tests=True),
    Program("chromium", "chromium", "the browser tests of the built site (layout, charts, search)", tests=True,
            fallback="/usr/bin/chromium"),
)}


def needed(mode: str, job_ids=None) -> list[Program]:
    """The programs a bootstrap mode needs, or (job_ids given) the programs those jobs run."""
    if job_ids is not None:
        wanted = set(job_ids)
        return [p for p in PROGRAMS.values() if wanted & set(p.jobs)]
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
    return [p for p in PROGRAMS.values() if p.jobs or (mode == "test" and p.tests)]


def location(program: Program) -> str | None:
    """Where the program is on this machine, or None."""
    explicit = os.environ.get(program.env_var) if program.env_var else None
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    found = shutil.which(program.name)
    if found:
        return found
    return program.fallback if program.fallback and os.access(program.fallback, os.X_OK) else None


def missing(programs) -> list[Program]:
    return [p for p in programs if location(p) is None]


def packages(programs) -> list[str]:
    return sorted({p.package for p in programs})


def missing_for(job_ids) -> str | None:
    """One line naming what the jobs need and this machine lacks, or None when nothing is missing."""
    absent = missing(needed("site", job_ids))
    if not absent:
        return None

    def phrase(p: Program) -> str:
        users = sorted(set(p.jobs) & set(job_ids))
        explicit = os.environ.get(p.env_var) if p.env_var else None
        state = f"not found at {explicit} (set by ${p.env_var})" if explicit else "not installed"
        return f"{p.name} {state} (for {', '.join(users[:3])}{', ...' if len(users) > 3 else ''})"
    return (f"{'; '.join(phrase(p) for p in absent)}. Install the Debian package(s) with `apt-get install -y "
            f"{' '.join(packages(absent))}`, or run `bash verify/bootstrap.sh install`")


# Programs found through `find` since the runner last asked (a job's use of them), by thread: jobs
# on two engines at once run in threads of their own, and one job must not be charged another's.
_used: dict[int, set[str]] = {}


def find(name: str) -> str | None:
    """The binary of a declared program (None when it is not installed), noted as used."""
    import threading
    program = PROGRAMS[name]
    _used.setdefault(threading.get_ident(), set()).add(name)
    return location(program)


def take_used() -> set[str]:
    """The programs this thread found since its last call, and forget them."""
    import threading
    return _used.pop(threading.get_ident(), set())
