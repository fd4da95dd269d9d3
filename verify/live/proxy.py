"""A real proxy in front of the server (nginx, Caddy or HAProxy), started from the configs in snippets/.

The article shows those files as they are; this module only rewrites their two
addresses (the listen address and the upstream address, each of which must occur
exactly once) and runs them with their pid files, logs and state in a private temp
dir: nginx wrapped in a generated main config, Caddy with an access-log block added
to its site, HAProxy as it is (it logs to standard output). Each proxy's config is
checked by the proxy itself before it starts; it runs in the foreground in its own
process group and is always stopped.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

from verify.config import programs
from verify.live import processes
from verify.errors import VerifyError
from verify.paths import SNIPPETS

NGINX_DIR = SNIPPETS / "nginx"
CADDY_DIR = SNIPPETS / "caddy"
HAPROXY_DIR = SNIPPETS / "haproxy"


class Setup(NamedTuple):
    kind: str    # "nginx", "caddy" or "haproxy"
    config: str  # the file under snippets/<kind>/
    tls: bool    # whether the proxy terminates TLS (with a throwaway certificate)


# Each proxy set-up a job can ask for.
SETUPS = {
    "nginx-default": Setup("nginx", "default.conf", False),
    "nginx-tls": Setup("nginx", "tls.conf", True),
    "nginx-streaming": Setup("nginx", "streaming.conf", False),
    "nginx-tls-streaming": Setup("nginx", "tls-streaming.conf", True),
    # Set-ups that exist to show a failure: a read timeout shorter than a prefill, and a
    # proxy that keeps the upstream request going after its client has left.
    "nginx-short-read-timeout": Setup("nginx", "short-read-timeout.conf", False),
    "nginx-ignore-client-abort": Setup("nginx", "ignore-client-abort.conf", False),
    "caddy-default": Setup("caddy", "default.Caddyfile", False),
    "caddy-tls": Setup("caddy", "tls.Caddyfile", True),
    "caddy-streaming": Setup("caddy", "streaming.Caddyfile", False),
    "haproxy-default": Setup("haproxy", "default.cfg", False),
    "haproxy-tls": Setup("haproxy", "tls.cfg", True),
    "haproxy-streaming": Setup("haproxy", "streaming.cfg", False),
    # streaming.cfg changes two things; this one only the first, to tell them apart.
    "haproxy-no-delay": Setup("haproxy", "no-delay.cfg", False),
}

# The response header each proxy adds, as seen by a client: each kind was run in front of
# the test upstream of tests/test_proxies.py (which sends "Server: test-upstream") and the
# response headers read with httpx (nginx 1.22.1, Caddy 2.6.2, HAProxy 2.6.12 from Debian 12).
#   nginx:   replaces the upstream's Server header with "Server: nginx/1.22.1" (its version follows
#            the product name while server_tokens is on, as it is by default).
#   Caddy:   adds a "Server: Caddy" field before the upstream's own ("Caddy, test-upstream" when joined).
#   HAProxy: adds nothing; the upstream's Server header passes unchanged.
# None of the three adds a Via header. The values are the product names, without a version.
SERVER_HEADERS: dict[str, str | None] = {"nginx": "nginx", "caddy": "Caddy", "haproxy": None}

LOG_FORMAT = ('log_format timed \'$msec $status $request_time $upstream_response_time '
              '$bytes_sent "$request"\';')

# An HAProxy "option httplog" line as "log stdout format raw" writes it: it starts with the
# client's address and the accept date, which none of HAProxy's own messages ([NOTICE] ...) do.
_HAPROXY_ACCESS_LINE = re.compile(r"^\S+:\d+ \[\d{2}/\w{3}/\d{4}:")


@dataclass
class Proxy:
    setup: str
    url: str
    config_file: Path
    workdir: Path
    ca_file: Path | None
    process: object = None
    kind: str = "nginx"
    # The value of the Server header this kind of proxy puts on responses (SERVER_HEADERS);
    # None when it adds none.
    server_header: str | None = None

    def stop_now(self) -> None:
        """Stop the proxy mid-flight (open streams are cut), as a proxy restart or crash would."""
        _stop(self.kind, self.process, grace_s=2)

    def access_log(self) -> list[str]:
        """One line per finished request; nginx's and Caddy's as `time status seconds ... "request"`."""
        if self.kind == "caddy":
            return [_caddy_access_line(line) for line in _lines(self.workdir / "access.log") if line.strip()]
        if self.kind == "haproxy":
            return [line for line in _lines(self.workdir / "haproxy.out") if _HAPROXY_ACCESS_LINE.match(line)]
        return _lines(self.workdir / "access.log")

    def error_log(self) -> list[str]:
        if self.kind == "caddy":
            return _lines(self.workdir / "caddy.out")
        if self.kind == "haproxy":
            return [line for line in _lines(self.workdir / "haproxy.out") if not _HAPROXY_ACCESS_LINE.match(line)]
        return _lines(self.workdir / "error.log")


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


def _caddy_access_line(line: str) -> str:
    """A Caddy JSON access-log entry in the shape of nginx's `timed` format (no upstream time: "-")."""
    try:
        e = json.loads(line)
        r = e["request"]
        return (f'{e["ts"]:.3f} {e["status"]} {e["duration"]:.3f} - {e["size"]} '
                f'"{r["method"]} {r["uri"]} {r["proto"]}"')
    except (ValueError, KeyError, TypeError):
        return line


# --- the three kinds ---------------------------------------------------------------------

@dataclass(frozen=True)
class _Launch:
    """How to check and run one proxy whose files are in its workdir."""
    check: list[str]  # exits 0 when the proxy accepts its config
    run: list[str]    # runs it in the foreground
    out: str          # the file (in workdir) that gets the process's stdout and stderr
    failure_log: str  # the file whose tail explains a failed start
    env: dict[str, str] | None = None


@dataclass(frozen=True)
class _Kind:
    name: str
    snippet_dir: Path
    listen: tuple[str, str]    # (regex, replacement with {port}) for the one listen address
    upstream: tuple[str, str]  # the same for the one upstream address
    shapes: tuple[str, str]    # how both lines look, for the error message
    prepare: Callable[["_Kind", str, Path, str, bool], _Launch]
    # Sent to the group before SIGTERM where SIGTERM alone would let open streams finish first.
    fast_stop: int | None = None


def _prepare_nginx(kind: _Kind, binary: str, workdir: Path, site: str, tls: bool) -> _Launch:
    (workdir / "tmp").mkdir()
    (workdir / "site.conf").write_text(site)
    (workdir / "nginx.conf").write_text(_main_config(workdir))
    argv = [binary, "-p", f"{workdir}/", "-c", str(workdir / "nginx.conf")]
    return _Launch(check=argv + ["-t"], run=argv, out="nginx.out", failure_log="error.log")


def _prepare_caddy(kind: _Kind, binary: str, workdir: Path, site: str, tls: bool) -> _Launch:
    # The access log goes to a file of ours: a log block added at the top of the site block.
    log_block = f"\n\tlog {{\n\t\toutput file {workdir / 'access.log'}\n\t\tformat json\n\t}}\n"
    site, n = re.subn(r"^(\s*https?://127\.0\.0\.1:\d+\s*\{)[ \t]*\n", lambda m: m.group(1) + log_block,
                      site, count=1, flags=re.M)
    if n != 1:
        raise VerifyError("a Caddy snippet's site address must end its line with '{'")
    config = workdir / "Caddyfile"
    config.write_text(site)
    # Caddy keeps certificates, locks and an autosaved config under its data and config homes.
    env = {**os.environ, "XDG_DATA_HOME": str(workdir / "data"), "XDG_CONFIG_HOME": str(workdir / "config"),
           "XDG_CACHE_HOME": str(workdir / "cache"), "HOME": str(workdir)}
    args = ["--config", str(config), "--adapter", "caddyfile"]
    return _Launch(check=[binary, "validate", *args], run=[binary, "run", *args], out="caddy.out",
                   failure_log="caddy.out", env=env)


def _prepare_haproxy(kind: _Kind, binary: str, workdir: Path, site: str, tls: bool) -> _Launch:
    if tls:  # HAProxy reads the certificate and its key from one PEM file
        (workdir / "server.pem").write_text((workdir / "server.crt").read_text() + (workdir / "server.key").read_text())
    config = workdir / "haproxy.cfg"
    config.write_text(site)
    # -db: stay in the foreground whatever the config says. Its log lines go to standard output.
    return _Launch(check=[binary, "-c", "-f", str(config)], run=[binary, "-db", "-f", str(config)],
                   out="haproxy.out", failure_log="haproxy.out")


KINDS = {
    "nginx": _Kind("nginx", NGINX_DIR,
                   (r"listen 127\.0\.0\.1:\d+", "listen 127.0.0.1:{port}"),
                   (r"proxy_pass http://127\.0\.0\.1:\d+", "proxy_pass http://127.0.0.1:{port}"),
                   ("'listen 127.0.0.1:PORT'", "'proxy_pass http://127.0.0.1:PORT'"), _prepare_nginx),
    "caddy": _Kind("caddy", CADDY_DIR,
                   (r"^(\s*https?)://127\.0\.0\.1:\d+(?=\s*\{)", r"\1://127.0.0.1:{port}"),
                   (r"\breverse_proxy(\s+(?:http://)?)127\.0\.0\.1:\d+\b", r"reverse_proxy\g<1>127.0.0.1:{port}"),
                   ("'http(s)://127.0.0.1:PORT {' site address", "'reverse_proxy 127.0.0.1:PORT'"), _prepare_caddy,
                   # Caddy stops gracefully on SIGTERM, waiting for open streams to end; SIGQUIT quits at once.
                   fast_stop=signal.SIGQUIT),
    "haproxy": _Kind("haproxy", HAPROXY_DIR,
                     (r"\bbind 127\.0\.0\.1:\d+", "bind 127.0.0.1:{port}"),
                     (r"^(\s*server\s+\S+\s+)127\.0\.0\.1:\d+\b", r"\g<1>127.0.0.1:{port}"),
                     ("'bind 127.0.0.1:PORT'", "'server NAME 127.0.0.1:PORT'"), _prepare_haproxy),
}


def setup_of(setup: str) -> Setup:
    if setup not in SETUPS:
        raise VerifyError(f"unknown proxy set-up {setup!r} (known: {', '.join(SETUPS)})")
    return SETUPS[setup]


def config_path(setup: str) -> Path:
    """The snippet a set-up runs (an absolute config entry is taken as it is)."""
    s = setup_of(setup)
    return KINDS[s.kind].snippet_dir / s.config


def binary_of(kind: str) -> str:
    """The proxy's binary (verify/config/programs.py says where it comes from and which jobs run it)."""
    program = programs.PROGRAMS[kind]
    found = programs.find(kind)
    if found:
        return found
    explicit = os.environ.get(program.env_var or "")
    if explicit:
        raise VerifyError(f"{kind} not found at {explicit} (set by ${program.env_var})")
    raise VerifyError(f"{kind} is not installed (on Debian: apt-get install -y {program.package})")


def nginx_binary() -> str:
    return binary_of("nginx")


def render_config(kind: str, text: str, listen_port: int, upstream_port: int) -> str:
    """The snippet with its listen port and upstream port replaced; each must occur exactly once.

    Comment lines are left alone and do not count.
    """
    k = KINDS[kind]
    text, n_listen = _rewrite(text, k.listen, listen_port)
    text, n_upstream = _rewrite(text, k.upstream, upstream_port)
    if n_listen != 1 or n_upstream != 1:
        article = "an" if kind == "nginx" else "a"
        raise VerifyError(f"{article} {kind} snippet must have exactly one {k.shapes[0]} and one {k.shapes[1]} line "
                          f"(found {n_listen} and {n_upstream})")
    return text


def render_site_config(text: str, listen_port: int, upstream_port: int) -> str:
    """An nginx snippet with its listen port and upstream port replaced."""
    return render_config("nginx", text, listen_port, upstream_port)


def _rewrite(text: str, rule: tuple[str, str], port: int) -> tuple[str, int]:
    pattern, replacement = rule
    replacement = replacement.replace("{port}", str(port))
    out, found = [], 0
    for line in text.splitlines(keepends=True):
        if not line.lstrip().startswith("#"):
            line, n = re.subn(pattern, replacement, line)
            found += n
        out.append(line)
    return "".join(out), found


def _main_config(workdir: Path) -> str:
    user = "user root;\n" if os.geteuid() == 0 else ""
    return f"""# generated by verify/proxy.py for one run; do not edit
{user}daemon off;
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log info;
events {{ worker_connections 256; }}
http {{
    {LOG_FORMAT}
    access_log {workdir}/access.log timed;
    client_body_temp_path {workdir}/tmp/body;
    proxy_temp_path {workdir}/tmp/proxy;
    fastcgi_temp_path {workdir}/tmp/fastcgi;
    uwsgi_temp_path {workdir}/tmp/uwsgi;
    scgi_temp_path {workdir}/tmp/scgi;
    include {workdir}/site.conf;
}}
"""


def _self_signed_cert(workdir: Path) -> Path:
    """A throwaway certificate for 127.0.0.1; returns the file clients should trust."""
    openssl = programs.find("openssl")
    if not openssl:
        raise VerifyError("openssl is not installed; it is needed for the TLS proxy set-up "
                          f"(on Debian: apt-get install -y {programs.PROGRAMS['openssl'].package})")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(workdir / "server.key"), "-out", str(workdir / "server.crt")],
                   check=True, capture_output=True)
    return workdir / "server.crt"


def _tail(text: str, limit: int = 2000) -> str:
    return text.strip()[-limit:]


@contextlib.contextmanager
def managed_proxy(setup: str, upstream_port: int, port: int | None = None) -> Iterator[Proxy]:
    kind_name, _, tls = setup_of(setup)
    kind = KINDS[kind_name]
    binary = binary_of(kind_name)
    if port is not None and processes.port_in_use(port):
        raise VerifyError(f"port {port} on 127.0.0.1 is already in use")
    port = port or processes.free_port()
    snippet = config_path(setup)
    workdir = Path(tempfile.mkdtemp(prefix=f"{setup}-"))
    proc = None
    try:
        ca_file = _self_signed_cert(workdir) if tls else None
        site = render_config(kind_name, snippet.read_text(), port, upstream_port)
        launch = kind.prepare(kind, binary, workdir, site, tls)
        test = subprocess.run(launch.check, capture_output=True, text=True, cwd=workdir, env=launch.env)
        if test.returncode != 0:
            raise VerifyError(f"{kind_name} rejected the {setup} configuration",
                              detail=_tail(test.stderr + "\n" + test.stdout))
        proc = processes.spawn(launch.run, workdir / launch.out, env=launch.env, cwd=workdir)
        scheme = "https" if tls else "http"
        proxy = Proxy(setup, f"{scheme}://127.0.0.1:{port}", snippet, workdir, ca_file, proc,
                      kind=kind_name, server_header=SERVER_HEADERS[kind_name])
        _wait_listening(kind_name, proc, port, workdir / launch.failure_log)
        yield proxy
    finally:
        if proc is not None:
            _stop(kind_name, proc, grace_s=5)
        shutil.rmtree(workdir, ignore_errors=True)


def _stop(kind: str, proc, grace_s: float) -> None:
    fast = KINDS[kind].fast_stop
    if fast is not None and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, fast)
    processes.stop_group(proc, grace_s=grace_s)


def _wait_listening(kind: str, proc, port: int, failure_log: Path, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            detail = _tail(failure_log.read_text(errors="replace")) if failure_log.exists() else ""
            raise VerifyError(f"{kind} exited with code {proc.returncode} on start", detail=detail)
        if _listens(proc.pid, port):
            return
        time.sleep(0.05)
    raise VerifyError(f"{kind} did not listen on 127.0.0.1:{port} within {timeout_s:.0f} s")


def _listens(pid: int, port: int) -> bool:
    """Whether the process itself listens on 127.0.0.1:port, not merely whether someone does.

    A port taken by another program between free_port() and the start would otherwise pass for
    the proxy's. Where /proc cannot tell (no procfs, or not allowed to read the fds), any
    listener counts, as before.
    """
    try:
        rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
        fds = os.listdir(f"/proc/{pid}/fd")
    except PermissionError:
        return processes.port_in_use(port)
    except FileNotFoundError:
        # No procfs at all, or the process is gone: only the first falls back to any listener,
        # or a proxy that just died on a taken port would pass for one listening on it.
        return not Path("/proc/self").exists() and processes.port_in_use(port)
    sockets = set()
    for fd in fds:
        try:
            sockets.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except FileNotFoundError:
            continue  # closed while we looked (an exiting proxy closes them all); the next look decides
        except PermissionError:
            return processes.port_in_use(port)
    local = f"0100007F:{port:04X}"
    for row in rows:
        fields = row.split()
        # local_address, state (0A: LISTEN) and inode of each IPv4 TCP socket
        if fields[1] == local and fields[3] == "0A" and f"socket:[{fields[9]}]" in sockets:
            return True
    return False
