"""A recording reverse proxy: another program's requests to the server, captured as they pass.

A benchmark tool reports its own TTFT and inter-token figures; to check them against the
tool's stated definitions, the site needs the raw stream of the very requests the tool sent.
The tool is pointed at this proxy instead of the server. Every request is forwarded unchanged,
every response line is passed on as soon as it arrives, and each exchange is kept: the request
body, the status, every non-empty line with the time it reached the proxy, and whether the
client left early (then the upstream response is closed, so the server aborts as it would
for a direct client).

Times are `time.perf_counter()` seconds. On Linux that is CLOCK_MONOTONIC, one clock for every
process of the machine, so they compare with a tool's own perf_counter timestamps. For a tool
that stamps with the wall clock (`time.time()`), `wall_minus_perf` converts: read once at start,
as the two clocks do not drift apart measurably within a run of minutes.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from verify.errors import VerifyError

# Hop-by-hop headers (RFC 9110, 7.6.1) and the ones the two connections set for themselves.
_NOT_FORWARDED = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                  "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding", "content-encoding"}
START_TIMEOUT_S = 10.0
SESSION = web.AppKey("session", aiohttp.ClientSession)  # the one upstream connection pool


@dataclass
class RecordingProxy:
    url: str
    exchanges: list[dict] = field(default_factory=list)
    wall_minus_perf: float = field(default_factory=lambda: time.time() - time.perf_counter())

    @property
    def api(self) -> str:
        return self.url + "/v1"


def _forwarded(headers) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in _NOT_FORWARDED}


def _parsed(body: bytes):
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def _app(upstream: str, proxy: RecordingProxy) -> web.Application:
    async def forward(request: web.Request) -> web.StreamResponse:
        received = time.perf_counter()
        body = await request.read()
        exchange = {"method": request.method, "path": request.path_qs, "request": _parsed(body),
                    "t_received": received, "status": None, "t_headers": None, "lines": [], "t_done": None,
                    "client_gone": False, "closed_after_end": False, "error": None}
        proxy.exchanges.append(exchange)
        session = request.app[SESSION]
        try:
            async with session.request(request.method, upstream + request.path_qs, data=body,
                                       headers=_forwarded(request.headers)) as up:
                exchange["status"], exchange["t_headers"] = up.status, time.perf_counter()
                response = web.StreamResponse(status=up.status, headers=_forwarded(up.headers))
                await response.prepare(request)
                async for raw in up.content:  # one line at a time, as it arrives
                    t = time.perf_counter()
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if line:
                        exchange["lines"].append({"t": t, "line": line})
                    try:
                        await response.write(raw)
                    except (ConnectionResetError, aiohttp.ClientConnectionResetError):
                        exchange["client_gone"] = True
                        break  # leaving the `async with` closes the upstream response: the server aborts
                exchange["t_done"] = time.perf_counter()
                if not exchange["client_gone"]:
                    try:
                        await response.write_eof()
                    except (ConnectionResetError, aiohttp.ClientConnectionResetError):
                        # Some clients (GuideLLM) close as soon as they have read [DONE]: the whole
                        # answer reached them, so this is no early leave.
                        exchange["closed_after_end"] = True
                return response
        except aiohttp.ClientError as e:
            exchange["error"], exchange["t_done"] = f"upstream: {e}", time.perf_counter()
            return web.Response(status=502, text=f"recording proxy: upstream {upstream} failed: {e}\n")

    async def open_session(app: web.Application):
        app[SESSION] = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None), auto_decompress=False)
        yield
        await app[SESSION].close()

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", forward)
    app.cleanup_ctx.append(open_session)
    return app


@contextmanager
def recording_proxy(upstream: str) -> Iterator[RecordingProxy]:
    """Serve a recording proxy for `upstream` (http://host:port) on a free loopback port, in a thread."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    state: dict = {}

    async def start():
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        state["runner"] = runner
        state["port"] = runner.addresses[0][1]

    def serve():
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(start())
        except BaseException as e:  # noqa: BLE001 - reported to the caller below
            state["error"] = e
        started.set()
        if "error" not in state:
            loop.run_forever()
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    proxy = RecordingProxy(url="")
    app = _app(upstream.rstrip("/"), proxy)
    thread = threading.Thread(target=serve, name="recording-proxy", daemon=True)
    thread.start()
    if not started.wait(START_TIMEOUT_S) or "error" in state:
        raise VerifyError(f"the recording proxy for {upstream} did not start: {state.get('error', 'timed out')}")
    proxy.url = f"http://127.0.0.1:{state['port']}"
    try:
        yield proxy
    finally:
        asyncio.run_coroutine_threadsafe(state["runner"].cleanup(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
