"""Request lifecycle article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def abort_counted_as_finished(d: dict) -> None:
    """request-endings(-quiet).abort-counted: the disconnected request is counted as finished with reason
    abort, with its e2e latency observed."""
    moved = d["endings"]["abort"]["metrics_delta"]
    moved['vllm:request_success_total{finished_reason="abort"}'] = 1.0
    moved["vllm:e2e_request_latency_seconds_count"] = 1.0


def abort_logged_without_flag(d: dict) -> None:
    """request-endings-quiet.silent-log: without --enable-log-requests, the server still logs the abort."""
    d["endings"]["abort"]["log"].append("(APIServer pid=1) INFO [async_llm.py] Aborted request(s) chatcmpl-0.")


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "request-endings.abort-counted": abort_counted_as_finished,
    "request-endings-quiet.abort-counted": abort_counted_as_finished,
    "request-endings-quiet.silent-log": abort_logged_without_flag,
}
