"""One HTTP request whose answer, error statuses included, is the observation."""

from __future__ import annotations

import httpx

# A 4xx is what some experiments set out to see; a 5xx or no answer at all is a failed capture.
CLIENT_ERRORS = list(range(400, 500))


def send(method: str, url: str, json: dict | None = None, headers: dict | None = None,
         timeout: float = 120.0) -> dict:
    out = {"capture": "probe", "method": method, "url_path": httpx.URL(url).path, "expect_status": CLIENT_ERRORS,
           "status": None, "error": None, "events": 0}
    try:
        r = httpx.request(method, url, json=json, headers=headers, timeout=timeout)
    except httpx.HTTPError as e:
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    out.update(status=r.status_code, events=1, content_type=r.headers.get("content-type"))
    try:
        out["body"] = r.json()
    except ValueError:
        out["body_text"] = r.text[:2000]
    return out
