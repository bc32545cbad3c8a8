"""JSON text from outside, read as JSON defines it: NaN, Infinity and numbers too large for a float are refused.

Python's `json` reads `NaN`, `Infinity` and `1e400` as floats that no JSON writer may write back and that
PostgreSQL's jsonb refuses (a `DataError` at insert, long after the line was read). `loads` refuses them
while reading, naming every place in the value where one sits, so an import can say "line 3, metadata.score"
(and a keyed file which record). This is the one reader of JSON text that people give us.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

Keys = tuple[str | int, ...]  # where in a value: object keys and array indexes from the top
# How deep objects and arrays may nest in what people send us: none of our formats needs more than a few
# levels, and Python's reader (and everything that walks a value recursively) stops at about a thousand.
MAX_DEPTH = 100
TOO_DEEP_MESSAGE = f"The JSON nests objects or arrays more than {MAX_DEPTH} levels deep; nothing here needs that many."


def deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether objects and arrays nest more than `limit` levels in `value` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth + 1 > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack += [(child, depth + 1) for child in children if isinstance(child, dict | list)]
    return False


def path_text(keys: Keys) -> str:
    """`metadata.score`, `items[0].spans`: keys joined as a person reads them ("" for the top)."""
    text = ""
    for key in keys:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text


class NonFiniteNumber(json.JSONDecodeError):
    """NaN or infinite numbers: `found` lists each (keys, token) in document order; `path`, `value` and `key`
    describe the first (`metadata.score`, `NaN`, `metadata`)."""

    def __init__(self, found: list[tuple[Keys, str]], doc: str) -> None:
        self.found = found
        keys, self.value = found[0]
        self.path = path_text(keys)
        self.key = str(keys[0]) if keys else ""
        super().__init__(f"{self.path or 'the value'} is {self.value}, which is not a number JSON allows", doc, 0)


class _NonFinite:
    """What a non-finite number is read as, until `loads` finds where it sits."""

    __slots__ = ("token",)

    def __init__(self, token: str) -> None:
        self.token = token


def loads(text: str | bytes, **kwargs: Any) -> Any:
    """`json.loads` (same keyword arguments), raising NonFiniteNumber if the text holds NaN or Infinity."""
    seen = False

    def constant(name: str) -> _NonFinite:
        nonlocal seen
        seen = True
        return _NonFinite(name)

    def number(token: str) -> float | _NonFinite:
        nonlocal seen
        value = float(token)
        if math.isfinite(value):
            return value
        seen = True
        return _NonFinite(token)

    data = json.loads(text, parse_constant=constant, parse_float=number, **kwargs)
    if seen:
        raise NonFiniteNumber(list(_non_finite(data, ())), text if isinstance(text, str) else "")
    return data


def _non_finite(value: Any, keys: Keys) -> Iterator[tuple[Keys, str]]:
    stack: list[tuple[Keys, Any]] = [(keys, value)]
    while stack:
        keys, value = stack.pop()
        if isinstance(value, _NonFinite):
            yield keys, value.token
        elif isinstance(value, dict):
            stack += [((*keys, key), item) for key, item in reversed(value.items())]
        elif isinstance(value, list):
            stack += [((*keys, index), item) for index, item in reversed(list(enumerate(value)))]
