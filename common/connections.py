"""A persistent PostgreSQL connection's health, checked without a round trip when nothing has disturbed it.

With `CONN_HEALTH_CHECKS` (config/settings.py) Django sends `SELECT 1` on a reused connection before each
request's first query, so a connection that died with a PostgreSQL restart is replaced rather than failing the
request. That is a round trip and a cursor on every request. A connection that died says so on its socket: a
server going down (a restart, a crash, a terminated backend) ends each backend's connection, and the socket of an
idle connection becomes readable (the server's last message, then the end of the stream). So when the connection
is idle, libpq sees it as good and its socket has nothing to read, Django's check is marked done; otherwise it
runs as before, the `SELECT 1` deciding.
"""

from __future__ import annotations

import select
from collections.abc import Callable
from typing import Any

from django.db import connections
from django.http import HttpRequest, HttpResponse

try:
    from psycopg import Error as PsycopgError
    from psycopg.pq import ConnStatus, TransactionStatus
except ImportError:  # psycopg2 or no PostgreSQL driver: Django's own check, always
    PsycopgError = None  # type: ignore[assignment,misc]


def connection_untouched(raw: Any) -> bool:
    """True if a psycopg 3 connection is idle, good, and has nothing waiting on its socket."""
    if PsycopgError is None or not hasattr(raw, "pgconn"):
        return False
    try:
        pgconn = raw.pgconn
        if pgconn.status != ConnStatus.OK or pgconn.transaction_status != TransactionStatus.IDLE:
            return False
        poller = select.poll()
        poller.register(pgconn.socket, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except (PsycopgError, OSError, ValueError):
        return False


class ConnectionCheckMiddleware:
    """First in MIDDLEWARE: before any query of the request, after Django's request_started bookkeeping."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for wrapper in connections.all(initialized_only=True):
            connection: Any = wrapper  # the stubs do not know Django's health-check attributes
            if (
                connection.health_check_enabled
                and not connection.health_check_done
                and connection.vendor == "postgresql"
                and connection_untouched(connection.connection)
            ):
                connection.health_check_done = True
        return self.get_response(request)
