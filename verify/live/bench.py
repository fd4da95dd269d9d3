"""`verify bench`: the figures that matter for running the embedded server, printed, never asserted.

Cold start (model not yet converted), warm start, time to first token of one
request, and the server's resident memory across all its processes.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from verify.config.profiles import Profile


def group_rss_mib(pgid: int) -> float:
    """Resident memory of every process in the process group, in MiB."""
    total_kib = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != pgid:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kib += int(line.split()[1])
        except (OSError, ProcessLookupError, ValueError):
            continue
    return total_kib / 1024


def first_token_seconds(api: str) -> float:
    import httpx
    body = {"model": "chat", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16, "stream": True}
    t0 = time.perf_counter()
    with httpx.stream("POST", api + "/chat/completions", json=body, timeout=60) as r:
        for line in r.iter_lines():
            if '"content":"' in line and '"content":""' not in line:
                return time.perf_counter() - t0
    raise RuntimeError("the stream carried no text")


def _start(profile: Profile, progress) -> tuple[float, float, float]:
    from verify.live.server import managed_server
    t0 = time.monotonic()
    with managed_server(profile, progress=progress) as server:
        healthy = time.monotonic() - t0
        first_token_seconds(server.api)  # the first request after start-up pays one-off costs
        ttft = sorted(first_token_seconds(server.api) for _ in range(5))[2]
        rss = group_rss_mib(server.pgid)
    return healthy, ttft, rss


def bench(profile: Profile, progress=print) -> int:
    quiet = lambda msg: None  # noqa: E731
    figures = []
    if profile.model_source == "embedded":
        with tempfile.TemporaryDirectory(prefix="verify-bench-cache-") as cache:
            previous = os.environ.get("VERIFY_CACHE_DIR")
            os.environ["VERIFY_CACHE_DIR"] = cache
            try:
                progress("cold start (converting the model into an empty cache)...")
                cold, _, _ = _start(profile, quiet)
            finally:
                if previous is None:
                    os.environ.pop("VERIFY_CACHE_DIR")
                else:
                    os.environ["VERIFY_CACHE_DIR"] = previous
        figures.append(("start to healthy, cold (model not yet converted)", f"{cold:.1f} s"))
    progress("warm start...")
    warm, ttft, rss = _start(profile, quiet)
    figures += [("start to healthy, warm", f"{warm:.1f} s"),
                ("time to first token, one request (median of 5)", f"{ttft * 1000:.0f} ms"),
                ("server resident memory, all processes", f"{rss:.0f} MiB")]
    print(f"\nverify bench, profile {profile.name}, {os.cpu_count()} cores")
    for name, value in figures:
        print(f"  {name:<50} {value}")
    target = 30.0
    print(f"  target: warm start under {target:.0f} s -> {'met' if warm < target else 'NOT met'}")
    return 0
