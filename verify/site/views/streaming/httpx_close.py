"""Views of httpx-close."""

from __future__ import annotations

from verify.site import html


def fragment(record):
    d = record["data"]
    return html.table(["httpx", "close took", "engine stopped after close", "tokens generated"],
                      [[d["httpx_version"], html.ms(d["close_seconds"]),
                        "never" if d["engine_stopped_after_s"] is None else f"{d['engine_stopped_after_s']:.2f} s",
                        f"{d['generated_tokens']:.0f} / {d['max_tokens']}"]])


FRAGMENTS = {"table": fragment}
