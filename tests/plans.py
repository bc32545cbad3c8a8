"""PostgreSQL's plan for a query, read from EXPLAIN's JSON form: what a plan test asserts on."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext


def analyze(*tables: str) -> None:
    """Fresh statistics, as autovacuum would have them after a bulk load."""
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"ANALYZE {table}")


def scans(queryset: QuerySet, relation: str) -> list[dict[str, Any]]:
    """The plan's scans of `relation`, outermost first, as run (EXPLAIN ANALYZE: actual rows and rows filtered),
    in a transaction (the queue reads lock what they read)."""
    with transaction.atomic():
        plan = json.loads(queryset.explain(format="json", analyze=True))[0]["Plan"]
    return [node for node in _nodes(plan) if node.get("Relation Name") == relation]


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def rows_read(run: Callable[[], object]) -> list[tuple[str, dict[str, int]]]:
    """Each SELECT that `run` sends, with the table rows each relation gave it as PostgreSQL ran it (EXPLAIN ANALYZE,
    rolled back): rows returned plus rows a filter discarded, times loops, summed over the relation's scans."""
    with CaptureQueriesContext(connection) as queries:
        run()
    read = []
    for query in queries.captured_queries:
        sql = query["sql"]
        if not sql.lstrip().upper().startswith("SELECT"):
            continue
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
            plan = cursor.fetchone()[0]
            transaction.set_rollback(True)
        plan = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
        touched: dict[str, int] = defaultdict(int)
        for node in _nodes(plan):
            if "Relation Name" in node:
                rows = node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
                touched[node["Relation Name"]] += rows * node.get("Actual Loops", 1)
        read.append((sql, dict(touched)))
    return read
