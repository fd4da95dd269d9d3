"""Views of finish-reasons."""

from __future__ import annotations

from verify.jobs.streaming import finish_reasons as job
from verify.site import html


def _tail(name, caption):
    def render_it(record):
        s = record["data"][name]
        lines = [i for i in s["lines"] if i["line"]][-3:]
        extra = [{"t": lines[-1]["t"] if lines else 0, "line": f"(connection error: {s['error']})"}] if s.get("error") else []
        return html.timed_transcript(lines + extra, caption)
    return render_it


FRAGMENTS = {"stop": _tail("stop", "end of a stream the model finished"),
             "length": _tail("length", "end of a stream cut by max_tokens=8"),
             "broken": _tail("broken", f"end of a stream whose proxy stopped {job.CUT_AFTER_S} s in")}
