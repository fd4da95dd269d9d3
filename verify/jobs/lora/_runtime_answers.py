"""The runtime adapter endpoints' answers as both runtime jobs record them: lora_runtime.py (updating
allowed) and lora_runtime_off.py (left off, as by default)."""

from __future__ import annotations


def redacted(value):
    """The recorded steps with the adapters' cache folder written as `<adapters>` (it varies by machine)."""
    import json

    from verify.config.adapters import ADAPTERS_ROOT_PLACEHOLDER
    from verify.live.adapters import adapters_root
    return json.loads(json.dumps(value).replace(str(adapters_root()), ADAPTERS_ROOT_PLACEHOLDER))


def recorded(r, sent: dict, expect=None) -> dict:
    """One answer of the runtime endpoints (a plain-text 200, or a JSON error) and what was sent;
    `expect`: the statuses that are observations (the client errors unless given)."""
    from verify.measure import capture
    from verify.measure.request import CLIENT_ERRORS  # imported here: `verify list` runs on the standard library
    return capture.answer(r, "request", expect_status=CLIENT_ERRORS if expect is None else expect, sent=sent,
                          body=capture.body(r), body_text=r.text[:2000])
