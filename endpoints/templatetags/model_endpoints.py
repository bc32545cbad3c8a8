"""Small filters of the model endpoints page: numbers and error kinds as people read them."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import template

from endpoints.forms import stop_to_text
from endpoints.models import ErrorKind

register = template.Library()


@register.filter
def normalize(value: Decimal | None) -> str:
    """A price or cost without trailing zeros (0.15000000 -> 0.15), never in exponent form."""
    if value is None:
        return ""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


@register.filter
def decoding_value(value: Any) -> str:
    """A decoding setting's value; stop sequences quoted, with line breaks written as \\n."""
    if isinstance(value, list):
        return ", ".join(f"“{line}”" for line in stop_to_text(value).split("\n"))
    return str(value)


@register.filter
def error_kind_words(kind: str) -> str:
    return str(ErrorKind(kind).label) if kind in ErrorKind.values else "Failed"


FINISH_WORDS = {
    "stop": "ended by the model",
    "length": "cut off at the most tokens per reply",
    "content_filter": "stopped by the server's content filter",
    "tool_calls": "the model asked to call a tool",
}


@register.filter
def finish_words(reason: str) -> str:
    """Why the reply ended (the server's `finish_reason`), in words; an unknown reason as the server said it."""
    return FINISH_WORDS.get(reason, f"finished: {reason}")
