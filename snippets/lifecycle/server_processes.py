"""The processes of a running vLLM server: who listens on the port, and everything it started."""

import os
import sys
from urllib.parse import urlparse

import psutil

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def server_processes(port: int) -> list[dict]:
    """The process listening on 127.0.0.1:port and its descendants, with CPU time and memory."""
    listener = next(c.pid for c in psutil.net_connections("tcp")
                    if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN)
    api = psutil.Process(listener)
    out = []
    for p in [api, *api.children(recursive=True)]:
        with p.oneshot():
            cpu = p.cpu_times()
            out.append({"pid": p.pid, "ppid": p.ppid(), "name": p.name(),
                        "cmdline": " ".join(p.cmdline()).strip()[:120],
                        "cpu_s": round(cpu.user + cpu.system, 3), "rss_mib": round(p.memory_info().rss / 2**20)})
    return out


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else urlparse(BASE_URL).port or 80
    for p in server_processes(port):
        print(f"{p['pid']:>7} {p['ppid']:>7} {p['name']:<16} {p['rss_mib']:>6} MiB {p['cpu_s']:>8.2f} s CPU  {p['cmdline']}")
