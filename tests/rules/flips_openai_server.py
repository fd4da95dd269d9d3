"""OpenAI server article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def module_launch_not_deprecated(d: dict) -> None:
    """launch-path.deprecated: a release that starts from the module without any deprecation warning."""
    d["deprecation_lines"] = []


def openai_error_types(d: dict) -> None:
    """request-handling.error-types-differ: the server gives OpenAI's own error type on every refusal."""
    for case in d["cases"].values():
        error = (case.get("body") or {}).get("error") if isinstance(case.get("body"), dict) else None
        if isinstance(error, dict) and "type" in error:
            error["type"] = "invalid_request_error"


def invocations_guarded(d: dict) -> None:
    """api-key-scope.invocations-generates: a release whose key guards /invocations as well."""
    d["endpoints"]["POST /invocations"]["without key"] = 401


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "api-key-scope.invocations-generates": invocations_guarded,
    "launch-path.deprecated": module_launch_not_deprecated,
    "request-handling.error-types-differ": openai_error_types,
}
