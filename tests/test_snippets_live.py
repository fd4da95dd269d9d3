"""Every snippet a page shows, run as a reader would run it, against the live server.

Snippets whose numbers a page displays are also run by verification jobs; here
each is run as a script (with BASE_URL pointing at the live server) and its
real output is checked.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.live
SNIPPETS = ROOT / "snippets"


def run_snippet(path, env, timeout=180):
    cmd = ["bash", str(path)] if path.suffix == ".sh" else [sys.executable, str(path)]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


@pytest.mark.parametrize("name", ["curl_chat_stream.sh", "curl_completions_stream.sh"])
def test_curl_snippets_stream_sse(name, base_env):
    out = run_snippet(SNIPPETS / "streaming" / name, base_env)
    assert out.returncode == 0, out.stderr
    data = [line[6:] for line in out.stdout.splitlines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert len(chunks) >= 2
    field = "delta" if "chat" in name else "text"
    assert all(field in c["choices"][0] for c in chunks if c["choices"])


def test_stream_timing_prints_both_modes(base_env):
    out = run_snippet(SNIPPETS / "streaming" / "stream_timing.py", base_env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("non-streaming") and "TTFT    n/a" in lines[0]
    assert lines[1].startswith("streaming") and "ms" in lines[1].split("TTFT")[1]


def test_usage_snippet_shows_usage_only_when_asked(base_env):
    out = run_snippet(SNIPPETS / "streaming" / "usage_in_stream.py", base_env)
    assert out.returncode == 0, out.stderr
    without, with_usage = out.stdout.splitlines()
    assert without.endswith("usage=None")
    assert "completion_tokens=" in with_usage and "prompt_tokens=" in with_usage


def test_safe_stream_reports_finish_reason(base_env):
    out = run_snippet(SNIPPETS / "streaming" / "safe_stream.py", base_env)
    assert out.returncode == 0, out.stderr
    # The reason must match the count: "length" exactly when the answer used all 50 tokens it was allowed.
    import re
    reason, used = re.search(r"finish_reason: (\w+) \| usage: .*completion_tokens=(\d+)", out.stdout).groups()
    assert reason == ("length" if int(used) == 50 else "stop"), out.stdout


def test_client_settings_has_no_retries(base_env):
    out = run_snippet(SNIPPETS / "streaming" / "client_settings.py", base_env)
    assert out.returncode == 0, out.stderr
    assert "max_retries=0" in out.stdout and "timeout=120.0" in out.stdout


@pytest.mark.parametrize("name", ["cancel_httpx.py", "cancel_openai.py"])
def test_cancel_snippets_run_as_shown(name, base_env, live_server):
    """The script as a reader runs it: it lets go after two seconds and exits cleanly."""
    from verify.measure import metrics
    metrics.wait_idle(live_server.url)
    out = run_snippet(SNIPPETS / "streaming" / name, base_env)
    assert out.returncode == 0, out.stderr
    assert "client gone" in out.stdout
    metrics.wait_idle(live_server.url)


def _abandon_with(name, api):
    """The snippet's own abandon_after(), asked not to stop at end-of-sequence (as the verify jobs ask).

    Run as shown, the model may end its answer by itself within the two seconds: the request then
    succeeds, and that says nothing about cancellation (seen once in CI). With ignore_eos only the
    client's leaving can end the request before its 1000 tokens.
    """
    sys.path.insert(0, str(SNIPPETS / "streaming"))
    try:
        module = __import__(name.removesuffix(".py"))
    finally:
        sys.path.pop(0)
    if name == "cancel_httpx.py":
        module.abandon_after(2.0, base_url=api, body={**module.BODY, "ignore_eos": True})
        return
    from openai import OpenAI
    with OpenAI(base_url=api, api_key="EMPTY", max_retries=0) as client:
        module.abandon_after(2.0, client, ignore_eos=True)


@pytest.mark.parametrize("name", ["cancel_httpx.py", "cancel_openai.py"])
def test_cancel_snippets_abort_the_generation(name, live_server):
    """The snippet lets go and the server aborts the request: it never completes its 1000 tokens.

    Judged by the server's counters, not by wall time: an aborted request adds no
    success and generates fewer tokens than asked, however slow the machine is.
    """
    from verify.measure import metrics
    metrics.wait_idle(live_server.url)
    before = metrics.read(live_server.url)
    _abandon_with(name, live_server.api)
    stopped = metrics.watch_until(live_server.url, lambda m: m["vllm:num_requests_running"] == 0, timeout_s=120)
    assert stopped["reached"]
    after = metrics.read(live_server.url)
    generated = after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"]
    assert after["vllm:request_success_total"] == before["vllm:request_success_total"], \
        f"the request ran to its end ({generated:.0f} tokens generated)"
    assert 0 < generated < 1000


def test_reassemble_on_a_live_multibyte_stream(live_server):
    """The reassembly snippet on a real stream: concatenation is exact, piecewise decoding is not."""
    import httpx
    sys.path.insert(0, str(SNIPPETS / "streaming"))
    try:
        import reassemble
    finally:
        sys.path.pop(0)
    target = "naïve café 日本語 🌊"
    body = {"model": "chat", "messages": [{"role": "user", "content": target}], "max_tokens": 40, "stream": True,
            "structured_outputs": {"choice": [target]}}
    with httpx.stream("POST", live_server.api + "/chat/completions", json=body, timeout=60) as r:
        # One-byte pieces: every multi-byte character is split, whatever the byte offsets.
        pieces = list(r.iter_raw(chunk_size=1))
    def contents(text):
        return [json.loads(line[6:])["choices"][0]["delta"].get("content")
                for line in text.splitlines() if line.startswith("data: {") and json.loads(line[6:])["choices"]]
    assert reassemble.by_concatenation(contents(reassemble.by_incremental_decoder(pieces))) == target
    assert "\ufffd" in reassemble.by_decoding_each_piece(pieces)


def test_server_snippets_match_profiles():
    """The serve commands a page shows use the flags of the profiles that produce the evidence."""
    from verify.config.profiles import PROFILES
    t4 = (SNIPPETS / "server" / "serve_t4.sh").read_text()
    assert f"vllm serve {PROFILES['t4'].model_source}" in t4
    for token in PROFILES["t4"].flags:
        assert token in t4
    cpu = (SNIPPETS / "server" / "serve_cpu.sh").read_text()
    assert "verify serve --profile cpu" in cpu
