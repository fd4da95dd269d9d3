"""Search for one edit of a real record that flips a claim's verdict (confirmed <-> refuted).

A rule that no single change of its data can turn is blind: whatever the server did, the page would
read the same. The search walks the committed record's values, changes one at a time (a number scaled
or shifted, a flag negated, a text emptied, a list cut, a key dropped, and the same inside the JSON of
each SSE event), and re-decides the claim after each change. It stops at the first flip.
"""

from __future__ import annotations

import contextlib
import json
from typing import Callable, Iterator

# How many values of one list are walked: its ends, where streams start and finish.
LIST_ENDS = 3
NUMBER_EDITS = (lambda x: 0, lambda x: -x, lambda x: x * 0.5, lambda x: x * 2, lambda x: x * 10, lambda x: x * 0.1,
                lambda x: x + 1, lambda x: x - 1, lambda x: x * 100, lambda x: x + 1000)
TEXT_EDITS = (lambda s: "", lambda s: s + "x", lambda s: s.upper(), lambda s: "stop", lambda s: "length")


def _indexes(n: int) -> list[int]:
    return list(range(n)) if n <= 2 * LIST_ENDS else [*range(LIST_ENDS), *range(n - LIST_ENDS, n)]


def _scale_all(node, factor: float):
    """Every measured number under node times factor (counts, being whole, stay)."""
    if isinstance(node, dict):
        return {k: _scale_all(v, factor) for k, v in node.items()}
    if isinstance(node, list):
        return [_scale_all(v, factor) for v in node]
    if isinstance(node, float):
        return node * factor
    return node


def _subtree_edits(node):
    """Edits of a whole part at once: all its timings slower or faster (a trend, not one value)."""
    if not isinstance(node, (dict, list)) or not node:
        return
    for factor in (0.1, 10.0):
        def apply(node=node, factor=factor):
            old = json.loads(json.dumps(node))
            new = _scale_all(old, factor)
            if isinstance(node, dict):
                node.clear()
                node.update(new)
                return lambda: (node.clear(), node.update(old))
            node[:] = new
            return lambda: node.__setitem__(slice(None), old)
        yield apply


def edits(node) -> Iterator[Callable[[], Callable[[], None]]]:
    """Each yields a function that applies one edit in place and returns its undo."""
    if isinstance(node, dict):
        for key in list(node):
            yield from _subtree_edits(node[key])
        for key in list(node):
            value = node[key]
            yield from _edits_at(node, key, value)
            yield from edits(value)
    elif isinstance(node, list):
        for i in _indexes(len(node)):
            yield from _subtree_edits(node[i])
            yield from _edits_at(node, i, node[i])
            yield from edits(node[i])
        if node:
            def cut(lst=node):
                old = list(lst)
                del lst[len(lst) // 2:]
                return lambda: lst.__setitem__(slice(None), old)
            yield cut

            def reverse(lst=node):
                lst.reverse()
                return lst.reverse
            yield reverse


def _set(container, key, new):
    def apply():
        old = container[key]
        container[key] = new(old)
        return lambda: container.__setitem__(key, old)
    return apply


def _edits_at(container, key, value):
    if isinstance(value, bool):
        yield _set(container, key, lambda v: not v)
    elif isinstance(value, (int, float)):
        for f in NUMBER_EDITS:
            yield _set(container, key, lambda v, f=f: type(v)(f(v)) if isinstance(v, int) else f(v))
    elif isinstance(value, str):
        if value.startswith("data: {"):
            yield from _event_edits(container, key, value)
        for f in TEXT_EDITS:
            yield _set(container, key, f)
    elif value is None:
        for new in (0, 1, "", "stop"):
            yield _set(container, key, lambda v, new=new: new)
    if isinstance(container, dict):
        def drop(c=container, k=key):
            old = c.pop(k)
            return lambda: c.__setitem__(k, old)
        yield drop


def _event_edits(container, key, line):
    """The edits of an SSE event's JSON, each written back as the line."""
    try:
        event = json.loads(line[6:])
    except ValueError:
        return
    for edit in edits(event):
        def apply(edit=edit):
            undo_inner = edit()
            container[key] = "data: " + json.dumps(event)
            undo_inner()
            return lambda: container.__setitem__(key, line)
        yield apply


OPPOSITE = {"confirmed": "refuted", "refuted": "confirmed"}


def copy_of(data):
    """A deep copy of a record's data, through JSON: records are JSON, and this is ten times faster
    than copy.deepcopy on them (the damage tests copy a whole record per change)."""
    return json.loads(json.dumps(data))


@contextlib.contextmanager
def each_text_parsed_once():
    """json.loads remembers what it parsed, while the search runs. A rule re-parses every SSE line of
    its record on each call, and the search calls it thousands of times on data that differs in one
    place: the lora jobs' searches spent 50 s of their 53 s parsing the same lines again. An edited
    line is a new text, parsed anew. A rule that changed what it was given would see its change on the
    next call, so the cache is checked against a fresh parse at the end."""
    parse, seen = json.loads, {}

    def loads(text, *args, **kwargs):
        if args or kwargs or not isinstance(text, str):
            return parse(text, *args, **kwargs)
        if text not in seen:
            seen[text] = parse(text)
        return seen[text]

    json.loads = loads
    try:
        yield
    finally:
        json.loads = parse
    changed = [text for text, value in seen.items() if parse(text) != value]
    assert not changed, f"a rule changed the JSON it parsed (first: {changed[0][:120]!r})"


def find_flip(decide: Callable[[dict], dict], data: dict, claim_id: str, budget: int = 20000,
              could_flip: Callable[[dict, str], bool] | None = None) -> int | None:
    """The number of the first edit that flips claim_id to the opposite verdict, or None within budget.

    could_flip(data, want), when given, is a cheaper necessary condition (the claim's rule alone,
    without the walk over every capture that decide makes first): an edit it rules out is not
    decided in full. Every flip found is still one that decide gives."""
    want = OPPOSITE[decide(data)[claim_id]["verdict"]]
    for n, edit in enumerate(edits(data)):
        if n >= budget:
            return None
        undo = edit()
        try:
            got = decide(data)[claim_id]["verdict"] if could_flip is None or could_flip(data, want) else None
        finally:
            undo()
        if got == want:
            return n
    return None
