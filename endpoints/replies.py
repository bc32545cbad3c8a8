"""Reading what a model answered when it was asked for a JSON object: the one reader every feature uses."""

from __future__ import annotations

from typing import Any

from common.jsontext import NonFiniteNumber, loads


class NotUnderstood(ValueError):
    """The reply is not the JSON object asked for; the message says what is wrong, in words."""


def reply_object(text: str) -> dict[str, Any]:
    """The JSON object in a model's reply (code fences and words around it allowed), else NotUnderstood."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise NotUnderstood("no JSON object in the reply")
    try:
        value = loads(text[start : end + 1])
    except (ValueError, NonFiniteNumber, RecursionError):
        raise NotUnderstood("the JSON object in the reply does not parse") from None
    if not isinstance(value, dict):
        raise NotUnderstood("the reply is not a JSON object")
    return value


def reply_start(text: str, limit: int = 200) -> str:
    """The start of a reply on one line, to quote it in an error."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
