"""verify probe: run the checks against an endpoint, print the table, write the report."""

from __future__ import annotations

import os
import time
from pathlib import Path

from verify.errors import VerifyError
from verify.probe import checks as probe_checks
from verify.probe import report as probe_report
from verify.probe import serving
from verify.probe.http import Endpoint

DEFAULT_TIME_LIMIT_S = 120.0


def probe(url: str, api_key_env: str | None = None, model: str | None = None, metrics_url: str | None = None,
          ca_file: str | None = None, report_path: Path | None = None, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
          watch_drain_s: float | None = None, progress=print) -> int:
    started = time.perf_counter()
    key = None
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise VerifyError(f"environment variable {api_key_env} (given with --api-key-env) is not set")
    if ca_file and not Path(ca_file).is_file():
        raise VerifyError(f"CA file {ca_file} does not exist")
    base = url.rstrip("/")
    # The drain watch's own time comes on top of the checks' limit.
    endpoint = Endpoint(base, api_key=key, ca_file=ca_file, deadline=started + time_limit_s + (watch_drain_s or 0))
    served = [m.get("id") for m in endpoint.get_json("/models").get("data", [])]
    if model and model not in served:
        raise VerifyError(f"model {model!r} is not served by {probe_report.safe_url(base)} "
                          f"(it serves: {', '.join(map(str, served)) or 'nothing'})")
    model = model or (served[0] if served else None)
    if not model:
        raise VerifyError(f"{probe_report.safe_url(base)}/models lists no model")
    version = _server_version(endpoint)
    progress(f"probe: {probe_report.safe_url(base)}, model {model}" + (f", vLLM {version}" if version else ""))
    checks, raw = probe_checks.run_checks(endpoint, model, metrics_url, progress=progress)
    health, health_raw = serving.health_check(endpoint)
    checks.append(health)
    raw.update(health_raw)
    if watch_drain_s:
        drain, drain_raw = serving.drain_watch(endpoint, model, watch_drain_s, progress)
        checks.append(drain)
        raw.update(drain_raw)
    print(probe_report.table(checks, probe_report.site_root()))
    for line in probe_report.symptom_links(checks, probe_report.site_root()):
        print(line)
    record = probe_report.report(base, model, version, checks, raw, started, [key] if key else [])
    if report_path:
        probe_report.write(report_path, record)
        progress(f"probe: report written to {report_path}")
    status, summary = outcome(checks)
    progress(summary)
    return status


# Exit statuses: every check that ran agrees; one differs; none differs but one could not be told.
AGREES, DIFFERS_STATUS, UNKNOWN_STATUS = 0, 3, 4


def outcome(checks) -> tuple[int, str]:
    """The exit status and the closing line: an unknown check is never reported as agreement."""
    differs = [c for c in checks if c.verdict == probe_checks.DIFFERS]
    unknown = [c for c in checks if c.verdict == probe_checks.UNKNOWN]
    skipped = [c for c in checks if c.verdict == probe_checks.NOT_CHECKED]
    told = "; ".join(f"{c.id}: {c.measured}" for c in unknown)
    if differs:
        return DIFFERS_STATUS, (f"probe: {len(differs)} check(s) differ from what the site describes: "
                                f"{', '.join(c.id for c in differs)}"
                                + (f"; {len(unknown)} could not be told ({told})" if unknown else ""))
    if unknown:
        return UNKNOWN_STATUS, (f"probe: nothing differs, but {len(unknown)} check(s) could not be told from what "
                                f"came back, so this is not agreement: {told}")
    return AGREES, ("probe: every check that ran agrees with the site"
                    + (f" (not checked: {', '.join(f'{c.id}, {c.measured}' for c in skipped)})" if skipped else ""))


def _server_version(endpoint: Endpoint) -> str | None:
    """vLLM's /version sits beside /v1; through an ingress it may not be exposed, which is fine."""
    root = endpoint.base_url.removesuffix("/v1")
    try:
        with endpoint.client() as c:
            r = c.get(root + "/version", timeout=5)
        return r.json().get("version") if r.status_code == 200 else None
    except Exception:  # optional information: any failure means "not known"
        return None
