"""Text from outside that the database cannot store: the one check every import and form uses.

PostgreSQL refuses a NUL character (U+0000) in text and jsonb (a DataError at insert, a 500 long after the line
was read), and no database stores a lone surrogate as a character. `unstorable` says what is wrong with one
string; `first_unstorable` finds the first such string anywhere in a record (keys too) and names where it sits,
so an import refuses the line with its field named.
"""

from __future__ import annotations

from typing import Any


def unstorable(value: str) -> str | None:
    """Why this text cannot be stored as given, or None."""
    if "\x00" in value:
        return f"contains a NUL character (\\u0000) at position {value.index(chr(0))}, which cannot be stored"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"contains a lone surrogate (\\u{ord(value[error.start]):04x}) at position {error.start}, not a character"
        )
    return None


def first_unstorable(value: Any, where: str = "") -> tuple[str, str] | None:
    """The first string in `value` (walked without recursion, dict keys included) that cannot be stored:
    (its place, e.g. `candidates[2]` or `question`, and the reason); None when everything can."""
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        place, item = stack.pop()
        if isinstance(item, str):
            if message := unstorable(item):
                return place, message
        elif isinstance(item, dict):
            children: list[tuple[str, Any]] = []
            for key, child in item.items():
                name = f"{place}.{key}" if place else str(key)
                children += [(name, key), (name, child)]
            stack += reversed(children)
        elif isinstance(item, list | tuple):
            stack += reversed([(f"{place}[{index}]", child) for index, child in enumerate(item)])
    return None
