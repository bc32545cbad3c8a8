"""Every API list pages with `?limit=&offset=`, both checked: a number the database cannot hold is a 400.

DRF's LimitOffsetPagination takes any limit when `max_limit` is unset and any offset, so
`?limit=9223372036854775808` reached PostgreSQL as a LIMIT past bigint: a 500. Text, a negative number or a
number past the bounds here is refused naming the parameter instead of being quietly replaced by a default.
"""

from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

from common.errors import InvalidInput

MAX_LIMIT = 1000
MAX_OFFSET = 2**31 - 1  # far past any list here, and well inside what every database takes


def _bounded(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 12 or not low <= int(raw) <= high:
        raise InvalidInput(f"{name}: a whole number from {low} to {high}.", field=name)
    return int(raw)


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT

    def get_limit(self, request: Request) -> int:
        return _bounded(request, self.limit_query_param, self.default_limit or MAX_LIMIT, 1, MAX_LIMIT)

    def get_offset(self, request: Request) -> int:
        return _bounded(request, self.offset_query_param, 0, 0, MAX_OFFSET)
