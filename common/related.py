"""Rows a request has just written or loaded, handed to what reads them next without asking the database again."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import models


def related_known(instance: models.Model, name: str, rows: Iterable[models.Model]) -> None:
    """Set the rows of `instance`'s reverse foreign key `name` (`item.spans`) as `prefetch_related` does: then
    `instance.<name>.all()` answers with them, in the given order, instead of a query. Only for rows that are all
    of them, in the relation's order (the ones just written, say)."""
    queryset = getattr(instance, name).all()
    queryset._result_cache = list(rows)
    queryset._prefetch_done = True
    cache_name = getattr(type(instance), name).field.remote_field.cache_name
    instance.__dict__.setdefault("_prefetched_objects_cache", {})[cache_name] = queryset
