"""Views of untrusted-output."""

from __future__ import annotations

from verify.jobs.streaming import untrusted_output as job
from verify.site import html


def fragment_text(record):
    return html.pre([job.streamed_text_of(record["data"])], "the text of the captured stream, shown as text",
                    "untrusted-output")


FRAGMENTS = {"text": fragment_text}
