"""Turn service errors into API responses: 400 for bad input, 409 for state and stale edits."""

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from common.errors import ServiceError, StaleEdit


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ServiceError):
        data = exc.as_dict()
        if isinstance(exc, StaleEdit):
            serializer = getattr(context.get("view"), "stale_serializer", None)
            if serializer is not None:
                data["current"] = None if exc.current is None else serializer(exc.current).data  # not {}
        return Response(data, status=exc.status_code)
    return drf_exception_handler(exc, context)
