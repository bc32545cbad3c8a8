"""The 500 handler (`handler500` in config/urls.py): a database that cannot be reached is a 503 that says so.

While PostgreSQL restarts, every request that needs it fails: this turns those failures into a short "try
again in a moment" (JSON under /api/, a plain page elsewhere) with a Retry-After header, instead of a
generic server error. Nothing here touches the database, so it works while the database is away. Once
PostgreSQL is back the next request reconnects by itself (CONN_HEALTH_CHECKS drops a dead persistent
connection), without restarting the app. Any other error stays a plain 500.
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views.defaults import server_error as django_server_error

DATABASE_UNAVAILABLE = (
    "The database cannot be reached at the moment (it may be restarting). Nothing was saved by this request; "
    "try again in a minute."
)
RETRY_AFTER_SECONDS = 30


def database_unavailable(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", ""):
        response: HttpResponse = JsonResponse({"detail": DATABASE_UNAVAILABLE, "code": "database_unavailable"})
    else:
        response = HttpResponse(render_to_string("503.html", {"message": DATABASE_UNAVAILABLE}))
    response.status_code = 503
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def server_error(request: HttpRequest, template_name: str = "500.html") -> HttpResponse:
    # Django calls the handler while handling the exception, so it is still the current one.
    if isinstance(sys.exc_info()[1], (OperationalError, InterfaceError)):
        return database_unavailable(request)
    return django_server_error(request, template_name=template_name)
