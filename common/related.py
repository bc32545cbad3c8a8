"""Rows a request has just written or loaded, handed to what reads them next without asking the database again."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import models
from django.db.models import OuterRef, Subquery
from django.db.models.functions import JSONObject


def related_known(instance: models.Model, name: str, rows: Iterable[models.Model]) -> None:
    """Set the rows of `instance`'s reverse foreign key `name` (`item.spans`) as `prefetch_related` does: then
    `instance.<name>.all()` answers with them, in the given order, instead of a query. Only for rows that are all
    of them, in the relation's order (the ones just written, say)."""
    queryset = getattr(instance, name).all()
    queryset._result_cache = list(rows)
    queryset._prefetch_done = True
    cache_name = getattr(type(instance), name).field.remote_field.cache_name
    instance.__dict__.setdefault("_prefetched_objects_cache", {})[cache_name] = queryset


class _JSONRows(models.Aggregate):
    """The rows of a group as one JSON array (PostgreSQL's JSONB_AGG, SQLite's JSON_GROUP_ARRAY); unordered."""

    function = "JSONB_AGG"
    output_field = models.JSONField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return super().as_sql(compiler, connection, function="JSON_GROUP_ARRAY", **extra)


def related_json(model: type[models.Model], key: str, outer: str, fields: Iterable[str]) -> Subquery:
    """`model`'s rows whose foreign key `key` is the outer row's `outer`, read with `fields` as one JSON array
    in the outer query (None when there are none): an annotation that saves the query `prefetch_related` would
    send. Hand the value to `related_known_json`."""
    rows = (
        model._default_manager.filter(**{key: OuterRef(outer)})
        .order_by()
        .values(key)
        .annotate(rows=_JSONRows(JSONObject(**{name: name for name in fields})))
        .values("rows")
    )
    return Subquery(rows, output_field=models.JSONField())


def related_known_json(
    instance: models.Model, name: str, rows: list[dict[str, Any]] | None, order: tuple[str, ...]
) -> None:
    """`related_known` with the rows `related_json` read, made model instances and put in the relation's `order`
    (the field names of its Meta ordering: the aggregate keeps none)."""
    model = getattr(type(instance), name).rel.related_model
    loaded = sorted(rows or [], key=lambda row: tuple(row[field] for field in order))
    db = instance._state.db
    # `from_db` takes the values in the model's field order (a JSON object keeps none on PostgreSQL).
    names = [field.attname for field in model._meta.concrete_fields if loaded and field.attname in loaded[0]]
    related_known(instance, name, [model.from_db(db, names, [row[each] for each in names]) for row in loaded])
