"""One line of a server-sent-event stream read: the JSON chunk a data line carries (standard library only).

The jobs that read a stream line by line, while it arrives or from a record, parse each line here rather
than slicing "data: " off by hand; transcript.py reads a recorded stream whole. A module of its own so
that the jobs reading whole transcripts do not depend on it.
"""

from __future__ import annotations

import json

DATA = "data: "
DONE = DATA + "[DONE]"  # the line that ends an OpenAI-compatible stream: no JSON


def chunk(line: str) -> dict | None:
    """The JSON object a data line carries; None for [DONE], for any other payload that is no JSON object,
    and for a line that is not a data line. A data line that starts an object but is not JSON raises
    ValueError: a broken event is an error, not a line to skip."""
    if not line.startswith(DATA + "{"):
        return None
    return json.loads(line[len(DATA):])
