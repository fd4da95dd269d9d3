"""Numbers as the verdicts' reasons write them (standard library only)."""

from __future__ import annotations


def ms(seconds) -> str:
    """Seconds as whole milliseconds, "n/a" for a reading that was not taken."""
    return "n/a" if seconds is None else f"{seconds * 1000:.0f} ms"
