"""Poll series shown as runs: consecutive polls that saw the same thing become one row."""

from __future__ import annotations


def runs(polls: list[dict], fields: tuple[str, ...]) -> list[list[str]]:
    """Rows of [from, to, polls, field values...] for consecutive polls with equal fields."""
    rows: list[list] = []
    for p in polls:
        seen = [str(p.get(f, "")) for f in fields]
        if rows and rows[-1][3:] == seen:
            rows[-1][1], rows[-1][2] = p["t"], rows[-1][2] + 1
        else:
            rows.append([p["t"], p["t"], 1, *seen])
    return [[f"{a:.2f}", f"{b:.2f}", str(n), *rest] for a, b, n, *rest in rows]
