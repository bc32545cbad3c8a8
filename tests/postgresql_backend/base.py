"""PostgreSQL for the test suite: Django's own backend, except how a transactional test empties the database.

Django empties it after every test that commits (the browser walks, the worker tests) with one TRUNCATE of all
67 tables. TRUNCATE gives each table and index new files, and on this machine that takes 0.5-1.3 s; deleting
the few rows a test made takes 15 ms. The foreign keys Django makes are deferrable, so the rows can go in any
order within the one transaction the flush runs in. Everything else (connections, queries, transactions, the
SQL every test sends) is the production backend's.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.core.management.color import Style
from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(
        self, style: Style, tables: Sequence[str], *, reset_sequences: bool = False, allow_cascade: bool = False
    ) -> list[str]:
        if not tables or reset_sequences:  # a test that asks for fresh ids gets Django's TRUNCATE … RESTART IDENTITY
            return super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return ["SET CONSTRAINTS ALL DEFERRED"] + [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};" for table in tables
        ]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
