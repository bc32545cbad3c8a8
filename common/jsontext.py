"""JSON text from outside, read as JSON defines it: NaN, Infinity and numbers too large for a float are refused.

Python's `json` reads `NaN`, `Infinity` and `1e400` as floats that no JSON writer may write back and that
PostgreSQL's jsonb refuses (a `DataError` at insert, long after the line was read). `loads` refuses them
while reading, naming where in the value they sit, so an import can say "line 3, metadata.score".
"""

from __future__ import annotations

import json
import math
from typing import Any


class NonFiniteNumber(json.JSONDecodeError):
    """A NaN or infinite number; `path` names where (`metadata.score`, `candidates[2]`), `key` its top key."""

    def __init__(self, path: str, value: str, doc: str) -> None:
        self.path, self.value = path, value
        self.key = path.split(".")[0].split("[")[0]
        super().__init__(f"{path or 'the value'} is {value}, which is not a number JSON allows", doc, 0)


def loads(text: str | bytes, **kwargs: Any) -> Any:
    seen: list[str] = []

    def constant(name: str) -> float:
        seen.append(name)
        return float(name)

    def number(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            seen.append(text)
        return value

    data = json.loads(text, parse_constant=constant, parse_float=number, **kwargs)
    if seen:
        raise NonFiniteNumber(_first_non_finite(data), seen[0], text if isinstance(text, str) else "")
    return data


def _first_non_finite(data: Any) -> str:
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return path
        if isinstance(value, dict):
            stack += [(f"{path}.{key}" if path else str(key), item) for key, item in reversed(value.items())]
        elif isinstance(value, list):
            stack += [(f"{path}[{index}]", item) for index, item in reversed(list(enumerate(value)))]
    return ""
