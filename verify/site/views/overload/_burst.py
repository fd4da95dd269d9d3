"""A burst's answers as a table, for the overload jobs that send one."""

from __future__ import annotations

from verify.site import html


def answers_table(answers: list[dict]) -> str:
    rows = [[str(i + 1), str(a.get("status")), f"{a.get('seconds', 0):.3f}", str(a.get("prompt_tokens")),
             str(a.get("tokens")), str(a.get("retry_after")), str(a.get("message") or "")]
            for i, a in enumerate(answers)]
    return html.table(["request", "status", "seconds", "prompt tokens", "tokens", "Retry-After", "message"], rows)
