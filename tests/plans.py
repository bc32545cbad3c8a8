"""PostgreSQL's plan for a query, read from EXPLAIN's JSON form: what a plan test asserts on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.db import connection, transaction
from django.db.models import QuerySet


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

    def nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    return [node for node in nodes(plan) if node.get("Relation Name") == relation]
