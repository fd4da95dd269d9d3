"""Views of client-retries."""

from __future__ import annotations

from verify.site import html


def fragment(record):
    d = record["data"]
    t = d["default_timeout"]
    return html.table(["", "value"], [
        ["openai version", d["openai_version"]],
        ["default timeout (connect / read / write / pool)", f"{t['connect']} / {t['read']} / {t['write']} / {t['pool']} s"],
        ["default max_retries", d["default_max_retries"]],
        [f"copies the server ran, default retries, {d['client_timeout_s']:.0f} s timeout",
         f"{d['default_retries']['copies_started']} (client gave up after {d['default_retries']['client_seconds']:.1f} s: "
         f"{d['default_retries']['client_error']})"],
        ["most copies running at once; tokens generated in all (default retries)",
         f"{d['default_retries'].get('max_running', 'n/a')}; {d['default_retries'].get('generated_tokens', 'n/a')}"],
        [f"copies the server ran, max_retries=0, {d['client_timeout_s']:.0f} s timeout",
         f"{d['no_retries']['copies_started']} (client gave up after {d['no_retries']['client_seconds']:.1f} s: "
         f"{d['no_retries']['client_error']})"],
    ])


FRAGMENTS = {"table": fragment}
