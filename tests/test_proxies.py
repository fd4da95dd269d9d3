"""Caddy and HAProxy set-ups (verify/live/proxy.py) in front of a test upstream; no vLLM needed.

Each set-up starts the real proxy from its snippet in front of TEST UPSTREAM below: a small
HTTP server written here that answers every GET with a text/event-stream response of a few
`data:` lines, one every 50 ms. It stands in for nothing but "an upstream that streams": it
is not a vLLM server and speaks none of its API.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from verify.errors import VerifyError
from verify.live import proxy as proxy_module
from verify.live.proxy import KINDS, SETUPS, Setup, managed_proxy, render_config

NEW_SETUPS = sorted(s for s, setup in SETUPS.items() if setup.kind in ("caddy", "haproxy"))
NEW_KINDS = ("caddy", "haproxy")
EVENTS = 6
INTERVAL_S = 0.05
UPSTREAM_SERVER_HEADER = "test-upstream"


# --- TEST UPSTREAM (not a vLLM server) ---------------------------------------------------

class _TestUpstreamHandler(BaseHTTPRequestHandler):
    """Any GET: a chunked text/event-stream of ?n= (default EVENTS) lines, INTERVAL_S apart."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def version_string(self):
        return UPSTREAM_SERVER_HEADER

    def do_GET(self):
        n = EVENTS
        if "?n=" in self.path:
            n = int(self.path.split("?n=", 1)[1])
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for i in range(n):
                chunk = f"data: event {i}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                time.sleep(INTERVAL_S)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the proxy went away mid-stream (stop_now)


@pytest.fixture(scope="module")
def test_upstream():
    """The test upstream on a free port of 127.0.0.1, for the whole module."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TestUpstreamHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


# --- helpers ------------------------------------------------------------------------------

def _client_verify(proxy):
    return ssl.create_default_context(cafile=str(proxy.ca_file)) if proxy.ca_file else True


def _stream(proxy, path="/stream"):
    """Status, headers, and each data line with the time it arrived (seconds since the request)."""
    t0 = time.perf_counter()
    lines = []
    with httpx.stream("GET", proxy.url + path, verify=_client_verify(proxy), timeout=10) as r:
        for line in r.iter_lines():
            if line.startswith("data: "):
                lines.append((time.perf_counter() - t0, line))
        return r.status_code, r.headers, lines


def _processes_mentioning(text: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()[1:]
    return [line.strip() for line in out if text in line and "ps -eo" not in line]


def _assert_gone(pid: int, workdir) -> None:
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    assert not _processes_mentioning(str(workdir))
    assert not workdir.exists()


def _wait_for(predicate, timeout_s=3.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    return predicate()


# --- each new set-up ----------------------------------------------------------------------

@pytest.mark.proxy
@pytest.mark.parametrize("setup", NEW_SETUPS)
def test_each_setup_passes_the_stream_on_and_stops(setup, test_upstream):
    kind, _, tls = SETUPS[setup]
    with managed_proxy(setup, test_upstream) as proxy:
        assert proxy.kind == kind and proxy.setup == setup
        assert proxy.url.startswith("https://" if tls else "http://")
        status, headers, lines = _stream(proxy)
        assert status == 200
        assert [line for _, line in lines] == [f"data: event {i}" for i in range(EVENTS)]
        # The Server header the launcher says this kind adds, next to (Caddy) or instead of the upstream's.
        servers = headers.get_list("server")
        if proxy.server_header is None:
            assert servers == [UPSTREAM_SERVER_HEADER]
        else:
            assert proxy.server_header in servers
        assert "via" not in headers
        # The request is in the proxy's access log once the stream is over.
        logged = _wait_for(lambda: [x for x in proxy.access_log() if "GET /stream" in x])
        assert len(logged) == 1 and " 200 " in logged[0], proxy.access_log()
        if setup.endswith("-streaming"):
            # Tuned for streaming: the events arrive one at a time, about INTERVAL_S apart,
            # not several in one read.
            gaps = [b - a for (a, _), (b, _) in zip(lines, lines[1:])]
            assert sum(g > INTERVAL_S / 2 for g in gaps) >= 0.8 * len(gaps), gaps
        pid, workdir = proxy.process.pid, proxy.workdir
    _assert_gone(pid, workdir)


@pytest.mark.proxy
@pytest.mark.parametrize("setup", sorted(s for s in NEW_SETUPS if SETUPS[s].tls))
def test_tls_setups_serve_https_with_the_generated_certificate(setup, test_upstream):
    with managed_proxy(setup, test_upstream) as proxy:
        port = int(proxy.url.rsplit(":", 1)[1])
        served = ssl.PEM_cert_to_DER_cert(ssl.get_server_certificate(("127.0.0.1", port)))
        assert served == ssl.PEM_cert_to_DER_cert(proxy.ca_file.read_text())
        # A client that does not trust the throwaway certificate is refused.
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(proxy.url + "/stream", timeout=5)
        # And the port passes no stream on over plain HTTP (Caddy answers 400, HAProxy hangs up).
        try:
            r = httpx.get(proxy.url.replace("https://", "http://") + "/stream", timeout=5)
        except httpx.HTTPError:
            pass
        else:
            assert r.status_code != 200 and "data: event" not in r.text


@pytest.mark.proxy
@pytest.mark.parametrize("kind", NEW_KINDS)
def test_stop_now_cuts_an_open_stream(kind, test_upstream):
    with managed_proxy(f"{kind}-default", test_upstream) as proxy:
        got = []
        with httpx.stream("GET", proxy.url + "/stream?n=200", timeout=10) as r:
            lines = r.iter_lines()
            while len(got) < 2:
                line = next(lines)
                if line.startswith("data: "):
                    got.append(line)
            t0 = time.monotonic()
            proxy.stop_now()
            stopped_s = time.monotonic() - t0
            with pytest.raises(httpx.HTTPError):
                for _ in lines:
                    pass
        # Cut at once (Caddy on SIGTERM alone would let the 10 s stream finish first).
        assert stopped_s < 1.0
        assert proxy.process.poll() is not None


# --- failures -----------------------------------------------------------------------------

BROKEN = {
    "caddy": "http://127.0.0.1:8080 {\n\treverse_proxy 127.0.0.1:8000 {\n\t\tflush_everything now\n\t}\n}\n",
    "haproxy": ("defaults\n    mode http\n    timeout connect 5s\n    timeout client 5s\n    timeout server 5s\n"
                "    option no-such-option\n"
                "frontend f\n    bind 127.0.0.1:8080\n    default_backend b\n"
                "backend b\n    server s 127.0.0.1:8000\n"),
}


def _leftover_workdirs(setup: str) -> list[str]:
    return glob.glob(os.path.join(tempfile.gettempdir(), f"{setup}-*"))


@pytest.mark.proxy
@pytest.mark.parametrize("kind", NEW_KINDS)
def test_a_config_the_proxy_rejects_is_an_error(kind, tmp_path, monkeypatch, test_upstream):
    config = tmp_path / f"broken-{kind}.conf"
    config.write_text(BROKEN[kind])
    setup = f"{kind}-test-broken"
    monkeypatch.setitem(SETUPS, setup, Setup(kind, str(config), False))  # an absolute path is taken as it is
    with pytest.raises(VerifyError, match=f"{kind} rejected the {setup} configuration") as err:
        with managed_proxy(setup, test_upstream):
            pass
    assert ("flush_everything" if kind == "caddy" else "no-such-option") in err.value.detail
    assert not _leftover_workdirs(setup)
    assert not _processes_mentioning(f"/{setup}-")


@pytest.mark.proxy
@pytest.mark.parametrize("kind", NEW_KINDS)
def test_a_port_in_use_is_an_error(kind, test_upstream):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(VerifyError, match="in use"):
            with managed_proxy(f"{kind}-default", test_upstream, port=s.getsockname()[1]):
                pass


@pytest.mark.proxy
@pytest.mark.parametrize("kind", NEW_KINDS)
def test_a_port_taken_after_it_was_chosen_is_an_error_with_the_proxys_own_words(kind, test_upstream, monkeypatch):
    """Another program binds the port between free_port() and the start: the proxy fails, not passes."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        monkeypatch.setattr(proxy_module.processes, "free_port", lambda: s.getsockname()[1])
        with pytest.raises(VerifyError, match=f"{kind} exited with code") as err:
            with managed_proxy(f"{kind}-default", test_upstream):
                pass
    assert "address already in use" in err.value.detail.lower()


def test_the_listening_check_counts_only_the_proxys_own_socket():
    """Another program's listener on the port never counts for the proxy, even while it exits.

    A proxy that dies on a taken port closes its descriptors as it goes, and then is gone: a
    check that fell back to "anyone listens" in those moments took the dead proxy for a live one
    (seen once in six runs of the HAProxy test above).
    """
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert proxy_module._listens(os.getpid(), port)  # this process holds it
        gone = subprocess.Popen(["true"])
        gone.wait()
        assert not proxy_module._listens(gone.pid, port)  # a process that has exited


def test_a_descriptor_closed_while_looked_at_is_not_a_listener(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()

        def closed(path, *args, **kwargs):
            raise FileNotFoundError(path)

        monkeypatch.setattr(proxy_module.os, "readlink", closed)
        assert not proxy_module._listens(os.getpid(), s.getsockname()[1])


@pytest.mark.parametrize("kind", NEW_KINDS)
def test_a_missing_binary_is_a_one_line_error_naming_the_package(kind, monkeypatch):
    monkeypatch.setenv(f"VERIFY_{kind.upper()}", f"/nonexistent/{kind}")
    with pytest.raises(VerifyError, match=f"{kind} not found at /nonexistent/{kind}"):
        with managed_proxy(f"{kind}-default", 1):
            pass
    monkeypatch.delenv(f"VERIFY_{kind.upper()}")
    from verify.config import programs
    monkeypatch.setitem(programs.PROGRAMS, kind, dataclasses.replace(programs.PROGRAMS[kind], name=f"no-such-{kind}",
                                                                     fallback=f"/nonexistent/{kind}"))
    with pytest.raises(VerifyError, match=rf"{kind} is not installed \(on Debian: apt-get install -y {kind}\)"):
        with managed_proxy(f"{kind}-default", 1):
            pass


# --- the port rewrite ---------------------------------------------------------------------

@pytest.mark.parametrize("setup", NEW_SETUPS)
def test_each_snippet_has_exactly_one_listen_and_one_upstream_address(setup):
    kind, name, _ = SETUPS[setup]
    text = (KINDS[kind].snippet_dir / name).read_text()
    out = render_config(kind, text, 12345, 23456)
    assert "127.0.0.1:12345" in out and "127.0.0.1:23456" in out
    assert "127.0.0.1:8080" not in out and "127.0.0.1:8443" not in out and "127.0.0.1:8000" not in out


@pytest.mark.parametrize("kind, extra", [("caddy", "\treverse_proxy 127.0.0.1:9000\n"),
                                         ("haproxy", "    server other 127.0.0.1:9000\n")])
def test_a_second_upstream_is_refused_and_comments_do_not_count(kind, extra):
    name = SETUPS[f"{kind}-default"].config
    text = (KINDS[kind].snippet_dir / name).read_text()
    commented = text + "# " + extra.strip() + "\n"
    assert "127.0.0.1:9000" in render_config(kind, commented, 1, 2)  # the comment stays as it was
    doubled = text.rstrip("}\n") + "\n" + extra + ("}\n" if kind == "caddy" else "")
    with pytest.raises(VerifyError, match="exactly one .* \\(found 1 and 2\\)"):
        render_config(kind, doubled, 1, 2)
