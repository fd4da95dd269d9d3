"""Whether a constrained answer is what its constraint allows, decided from the text and what was sent.

Shared by the article's jobs. JSON answers are checked with the jsonschema library (the
reference implementation of JSON Schema), imported when a rule runs.
"""

from __future__ import annotations

import json
import re

# The snippet's grammar (snippets/structured-outputs/constrain.py, SUM) as the regular expression
# of the same language, so that a rule can check an answer against it without a parser.
SUM_GRAMMAR = '''root ::= num " + " num " = " num
num ::= [1-9] | [1-9] [0-9]'''
SUM_AS_REGEX = r"([1-9]|[1-9][0-9]) \+ ([1-9]|[1-9][0-9]) = ([1-9]|[1-9][0-9])"


def parses(text) -> object | None:
    """The JSON value of text, or None when it is not JSON."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def schema_errors(value, schema: dict) -> list[str]:
    """What jsonschema finds wrong with value (nothing: it validates)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError, UnknownType
    try:
        Draft202012Validator.check_schema(schema)
        return [e.message for e in Draft202012Validator(schema).iter_errors(value)]
    except (SchemaError, UnknownType) as e:
        # A recorded schema that is not one cannot decide anything: the rule is then inconclusive.
        raise ValueError(f"the recorded schema is not a valid JSON schema: {e}") from None


def fits(text, constraint: dict) -> bool:
    """Whether text is an answer the constraint allows. constraint: the structured_outputs fields sent,
    or response_format's, as recorded."""
    if not isinstance(text, str):
        return False
    if "json" in constraint:
        value = parses(text)
        return value is not None and not schema_errors(value, constraint["json"])
    if "json_schema" in constraint:
        value = parses(text)
        return value is not None and not schema_errors(value, constraint["json_schema"]["schema"])
    if constraint.get("type") == "json_object" or "json_object" in constraint:
        return isinstance(parses(text), dict)
    if "regex" in constraint:
        return re.fullmatch(constraint["regex"], text) is not None
    if "choice" in constraint:
        return text in constraint["choice"]
    if "grammar" in constraint:
        if constraint["grammar"] != SUM_GRAMMAR:
            raise ValueError("the grammar sent is not the one this check knows")
        return re.fullmatch(SUM_AS_REGEX, text) is not None
    raise ValueError(f"no check for a constraint with fields {sorted(constraint)}")


def whitespace_between_tokens(text) -> int:
    """Whitespace characters outside JSON strings: what a compact JSON text has none of."""
    if not isinstance(text, str):
        return 0
    count, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch.isspace():
            count += 1
    return count
