"""Views of usage-in-stream."""

from __future__ import annotations

from verify.site import html


def fragment_final_chunk(record):
    lines = [i for i in record["data"]["raw_with"]["lines"] if i["line"]][-3:]
    return html.timed_transcript(lines, "the end of a stream with stream_options.include_usage (captured)")


FRAGMENTS = {"final-chunk": fragment_final_chunk}
