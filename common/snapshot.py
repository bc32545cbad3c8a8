"""One consistent read of the database for a long job: a release build, an agreement report.

A job reads for minutes while people keep working: a pair deleted, an item
rejected or edited, a judgment saved between two of its reads must neither fail
the job nor half appear in it. Every read of such a job happens inside one
snapshot, so what it makes (a release, a report) is the state of the project at
the moment it began reading:

- PostgreSQL: a REPEATABLE READ READ ONLY transaction; its snapshot is exported
  (`pg_export_snapshot`), and the threads that read ahead or compute the figures
  join it with `SET TRANSACTION SNAPSHOT`, so every connection sees the same rows.
- SQLite (WAL): a deferred read transaction (`BEGIN DEFERRED`, not the IMMEDIATE
  transactions of the settings, which would take the write lock and stop every
  writer for the length of the job). Writers go on; this connection keeps
  reading the state of its first read. A snapshot cannot be shared between
  SQLite connections, so a release build reads in its own thread.
- Inside a caller's transaction (tests, an atomic block) that transaction is the
  snapshot already.

The job's own writes (progress and heartbeat, which a cancel must be able to
stop) go through the job's heartbeat connection (`JobRun.aside`, common/jobs.py)
and are committed at once; its result is written after the snapshot ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from django.db import connection, transaction

T = TypeVar("T")


@dataclass(frozen=True)
class Snapshot:
    """The job's read: `kind` is "postgresql", "sqlite" or "caller" (the caller's transaction)."""

    kind: str
    ident: str = ""  # the exported PostgreSQL snapshot

    @property
    def shareable(self) -> bool:
        """Whether a thread with a connection of its own can read this snapshot (`join`)."""
        return self.kind == "postgresql"

    @property
    def own(self) -> bool:
        """Whether the job opened this read itself (its writes then go aside: `JobRun.aside`)."""
        return self.kind != "caller"

    @contextmanager
    def join(self) -> Iterator[None]:
        """In another thread: read exactly what the job reads (PostgreSQL only)."""
        if not self.shareable:
            raise RuntimeError("Only a PostgreSQL snapshot can be shared between connections.")
        _health_checked()
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                cursor.execute("SET TRANSACTION SNAPSHOT %s", [self.ident])
            yield


def _health_checked() -> None:
    """Open the connection (and run its health check) before the transaction: its first statement must be SET."""
    with connection.cursor():
        pass


@contextmanager
def read_snapshot() -> Iterator[Snapshot]:
    """Everything read inside sees the database as it was when this began."""
    if connection.in_atomic_block:
        yield Snapshot("caller")
        return
    _health_checked()
    if connection.vendor == "postgresql":
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                cursor.execute("SELECT pg_export_snapshot()")
                ident = cursor.fetchone()[0]
            yield Snapshot("postgresql", ident)
        return
    with connection.cursor() as cursor:
        cursor.execute("BEGIN DEFERRED")
        cursor.execute("SELECT count(*) FROM sqlite_master")  # the first read fixes what the transaction sees
    try:
        yield Snapshot(connection.vendor)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ROLLBACK")  # nothing was written: ending the read is all that is left
