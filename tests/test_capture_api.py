"""Captures are made by verify/measure's capture API from what came back, never by hand in a job.

A hand-built capture can claim "events": 1 or "status": 200 for an answer that held nothing, and
then the "nothing received" check in verify/captures.py can never fire.
"""

from __future__ import annotations

import ast
from pathlib import Path

import httpx
import pytest

from verify import captures
from verify.measure import capture

ROOT = Path(__file__).resolve().parents[1]
# The modules that record raw observations; each counts from what it read.
MAKERS = {"verify/measure/capture.py", "verify/measure/sse.py", "verify/measure/commands.py",
          "verify/measure/cancel.py", "verify/measure/request.py", "verify/live/server.py"}
TAG = "capture"


def _hand_built(path: Path) -> list[str]:
    """Where a module tags a capture itself (a dict literal or dict(...) call with the capture key), or
    sets a capture's tag or count after the fact (x["capture"] = ..., x["events"] = ...).

    A summary a rule derives may well have an "events" key; only a dict tagged as a capture is one."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Dict):
            hit = TAG in [k.value for k in node.keys if isinstance(k, ast.Constant)]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "dict":
            hit = TAG in [k.arg for k in node.keywords]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.slice, ast.Constant):
            hit = node.slice.value in (TAG, "events")
        else:
            hit = False
        if hit:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_module_outside_the_capture_api_builds_a_capture():
    modules = [p for p in sorted((ROOT / "verify").rglob("*.py")) if str(p.relative_to(ROOT)) not in MAKERS]
    assert len(modules) > 60
    hand_built = [where for p in modules for where in _hand_built(p)]
    assert not hand_built, f"captures built by hand (use verify/measure/capture.py): {hand_built}"


def test_the_scan_finds_a_hand_built_capture(tmp_path):
    bad = tmp_path / "job.py"
    bad.write_text('def run(r):\n    out = {"capture": "request", "status": 200}\n    out["events"] = 1\n'
                   '    summary = {"events": 3}\n    return dict(capture="x")\n')
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert _hand_built(bad) == ["job.py:2", "job.py:3", "job.py:5"]
    finally:
        ROOT = saved


def _answer(status: int, content: bytes, content_type="application/json") -> httpx.Response:
    return httpx.Response(status, content=content, headers={"content-type": content_type},
                          request=httpx.Request("POST", "http://127.0.0.1/v1/completions"))


def test_a_response_counts_what_its_body_holds():
    good = capture.response(_answer(200, b'{"choices": [{"text": "hi"}]}'), prompt_tokens=3)
    assert (good["status"], good["events"], good["bytes"], good["prompt_tokens"]) == (200, 1, 29, 3)
    assert captures.failure(good) is None


@pytest.mark.parametrize("status, content, why", [
    (200, b"", "nothing received"),                       # an empty 200 is no answer
    (200, b"<html>bad gateway</html>", "nothing received"),  # nor is a page that is not JSON
    (200, b"{}", "nothing received"),
    (500, b'{"error": {"message": "boom"}}', "HTTP status 500"),
    (404, b'{"detail": "Not Found"}', "HTTP status 404"),
])
def test_a_response_that_held_nothing_or_failed_is_a_failed_capture(status, content, why):
    assert why in captures.failure(capture.response(_answer(status, content)))


def test_an_expected_status_is_not_a_failure_but_an_empty_body_still_is():
    assert captures.failure(capture.response(_answer(404, b'{"detail": "Not Found"}'), expect_status=[404])) is None
    assert "nothing received" in captures.failure(capture.response(_answer(404, b""), expect_status=[404]))


def test_no_response_is_a_failed_capture():
    assert "ConnectError" in captures.failure(capture.no_response("request", httpx.ConnectError("refused")))


def test_results_count_what_was_received_and_carry_the_first_bad_status():
    assert captures.failure(capture.results("answers", ["a", "b"], statuses=[200, 200])) is None
    assert "nothing received" in captures.failure(capture.results("answers", []))
    assert "HTTP status 503" in captures.failure(capture.results("requests", [1, 2], statuses=[200, 503]))
    assert "no answer" in captures.failure(capture.results("requests", [1], statuses=[None, 200]))


def test_an_unread_log_is_a_failed_capture_and_a_read_one_counts_its_lines():
    assert "could not be read" in captures.failure(capture.log("server-log", [], readable=False))
    assert captures.failure(capture.log("server-log", ["INFO a", "INFO b"], readable=True)) is None
    assert capture.log("server-log", ["INFO a"], readable=True)["lines_read"] == 1
