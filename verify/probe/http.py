"""Requests to the probed endpoint: every one with a timeout, every failure a one-line VerifyError."""

from __future__ import annotations

import json
import ssl
import time
from dataclasses import dataclass, field

import httpx

from verify.errors import VerifyError

REQUEST_TIMEOUT_S = 30.0


@dataclass
class Endpoint:
    base_url: str  # ends in /v1
    api_key: str | None = field(default=None, repr=False)  # never printed, never written
    ca_file: str | None = None
    deadline: float = float("inf")  # time.perf_counter() after which no new request starts

    def client(self) -> httpx.Client:
        verify = ssl.create_default_context(cafile=self.ca_file) if self.ca_file else True
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return httpx.Client(timeout=REQUEST_TIMEOUT_S, verify=verify, headers=headers)

    def _check_time(self) -> None:
        if time.perf_counter() > self.deadline:
            raise VerifyError("the probe's time limit ran out; raise it with --time-limit")

    def get_json(self, path: str) -> dict:
        self._check_time()
        with self.client() as c, _errors(self.base_url):
            r = c.get(self.base_url + path)
        _status(r, self.base_url + path)
        try:
            return r.json()
        except ValueError:
            raise VerifyError(f"{self.base_url}{path} did not answer with JSON "
                              f"(content-type: {r.headers.get('content-type', 'none')})") from None

    def stream(self, body: dict, stop_after_s: float | None = None) -> dict:
        """POST a streaming chat request; every line with its arrival time (s). stop_after_s: leave early."""
        self._check_time()
        lines: list[dict] = []
        t0 = time.perf_counter()
        left_at = None
        with self.client() as c, _errors(self.base_url):
            with c.stream("POST", self.base_url + "/chat/completions", json=body) as r:
                if r.status_code >= 400:
                    r.read()
                    _status(r, self.base_url + "/chat/completions")
                kind = r.headers.get("content-type", "")
                if not kind.startswith("text/event-stream"):
                    raise VerifyError(f"{self.base_url}/chat/completions did not answer a streaming request with an "
                                      f"event stream (content-type: {kind or 'none'})")
                for line in r.iter_lines():
                    now = time.perf_counter() - t0
                    lines.append({"t": round(now, 4), "line": line})
                    if stop_after_s is not None and now >= stop_after_s and line.startswith("data: {"):
                        left_at = time.perf_counter()
                        break
        for item in lines:
            if item["line"].startswith("data: {"):
                try:
                    json.loads(item["line"][6:])
                except ValueError:
                    raise VerifyError(f"{self.base_url}/chat/completions sent a malformed event: "
                                      f"{item['line'][:80]!r}") from None
        # The headers that name a proxy in front of the server (checks.proxy_in_front reads them).
        named = {k: v for k, v in r.headers.items() if k.lower() in ("server", "via")}
        return {"status": r.status_code, "headers": named, "lines": lines, "left_at": left_at}


class _errors:
    """Turn transport failures into one-line errors naming what failed."""

    def __init__(self, url: str):
        self.url = url

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if error is None or not isinstance(error, httpx.HTTPError):
            return False
        text = str(error)
        if "CERTIFICATE" in text.upper() or "SSL" in text.upper() or isinstance(error.__context__, ssl.SSLError):
            raise VerifyError(f"TLS error talking to {self.url}: {text.splitlines()[0][:160]} "
                              "(trust a private CA with --ca-file)") from None
        if isinstance(error, httpx.TimeoutException):
            raise VerifyError(f"{self.url} did not answer within {REQUEST_TIMEOUT_S:.0f} s") from None
        if isinstance(error, httpx.ConnectError):
            raise VerifyError(f"cannot reach {self.url}: {text.splitlines()[0][:160] or type(error).__name__}") from None
        raise VerifyError(f"request to {self.url} failed: {type(error).__name__}: {text[:160]}") from None


def _status(r: httpx.Response, url: str) -> None:
    if r.status_code in (401, 403):
        raise VerifyError(f"{url} answered HTTP {r.status_code}: it wants an API key "
                          "(name the environment variable that holds it with --api-key-env)")
    if r.status_code == 404:
        raise VerifyError(f"{url} answered HTTP 404: is the URL the OpenAI base, ending in /v1?")
    if r.status_code >= 400:
        raise VerifyError(f"{url} answered HTTP {r.status_code}: {r.text.strip().splitlines()[0][:160] if r.text else ''}")
