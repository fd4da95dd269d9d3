"""The probe's output: a table in the terminal and a JSON report with the site's provenance fields."""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from verify.evidence import provenance, store


def site_root() -> str:
    """Where claims are linked: the published address when this build has one, else paths relative to the site."""
    from verify.config.site import site_url
    return site_url()


def safe_url(url: str) -> str:
    """The URL without user, password or query (which can carry a token)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def table(checks, root: str) -> str:
    rows = [("check", "verdict", "measured", "explained at")]
    rows += [(c.id, c.verdict, c.measured, root + c.claim) for c in checks]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}" for r in rows)


def symptom_links(checks, root: str) -> list[str]:
    """For each check that differs or could not be told: the symptom of the site's index it matches, with its
    address (verify/config/symptoms.py says which checks point where)."""
    from verify.config.symptoms import PAGE, for_probe_check
    from verify.probe.checks import DIFFERS, UNKNOWN
    page = PAGE.removesuffix(".md") + "/"
    out = []
    for c in checks:
        symptom = for_probe_check(c.id) if c.verdict in (DIFFERS, UNKNOWN) else None
        if symptom:
            how = "differs" if c.verdict == DIFFERS else "could not be told; if it recurs"
            out.append(f"{c.id} {how}: symptom \"{symptom.title}\" at {root}{page}#{symptom.anchor}")
    return out


def report(url: str, model: str, server_version: str | None, checks, raw: dict, started: float,
           secrets: list[str]) -> dict:
    record = {
        "generated": "by verify probe; do not edit",
        "url": safe_url(url), "model": model,
        "checks": [c.as_record() for c in checks],
        "symptoms": symptom_links(checks, site_root()),
        "data": raw,
        "provenance": {"server": {"url": safe_url(url), "version": server_version, "model": model},
                       **provenance.machine_facts(), "date": provenance.utc_now(),
                       "duration_s": round(time.perf_counter() - started, 1)},
    }
    text = json.dumps(store.scrub(record))
    for secret in secrets:  # belt and braces: the key can appear nowhere, whatever echoed it
        text = text.replace(secret, "[redacted]")
    return json.loads(text)


def write(path: Path, record: dict) -> None:
    store.write_atomic(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
