"""The JSON parser of every API endpoint (REST_FRAMEWORK's DEFAULT_PARSER_CLASSES, and views that list parsers).

Its own module: DRF reads the default parser classes while `rest_framework.views` is imported, so this module
must not import it (common.api does).
"""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from common import jsontext


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser (the default of every endpoint), refusing a body that nests too deep with a 400.

    Python's reader raises RecursionError at about a thousand levels (a 2 KB body), which would be a 500; a
    value deeper than jsontext.MAX_DEPTH is refused too, before any code walks it recursively.
    """

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(jsontext.TOO_DEEP_MESSAGE) from None
        if jsontext.deeper_than(data):
            raise ParseError(jsontext.TOO_DEEP_MESSAGE)
        return data
