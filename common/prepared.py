"""Querysets compiled to SQL once per process: the hot requests' lookups skip Django's SQL compiler.

Django builds and compiles a queryset's SQL again on every evaluation. For the wide joins every hot request
makes (the API token with its user; a pair with its project, the viewer's membership and the assignee) that
was most of the request's CPU: some 120 columns named, quoted and converted per request before one indexed
lookup. A `Prepared` query is written as an ordinary queryset, by a function of its variable values. The first
call compiles it with probe values standing for them and notes where the probes sit in the compiled
parameters; every call after that puts its own values there and runs the same SQL. Rows come back as the
queryset gives them (model instances with their `select_related` relations, filtered relations and
annotations), through Django's own converters and populators, so both engines read them as the ORM does.

Only plain `int` and `str` values and aware datetimes may vary (ids, slugs, digests, "now"): a datetime goes in
as the engine's adapter writes it (SQLite keeps text), and a value the ORM inlines into the SQL text, or does
not pass on as one parameter, is refused when compiling. The function must build the queryset from its values
alone: anything else it reads is compiled in for good (a value it leaves out of one query is simply unused).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable, get_related_populators

M = TypeVar("M", bound=Model)

# Values no real id, slug or digest takes: negative ids, text with control characters.
_INT_PROBE = -7_340_000_000
_STR_PROBE = "\x1fprobe-{}\x1f"
_DATETIME_PROBE = datetime(1901, 2, 3, 4, 5, 6, 7000, tzinfo=UTC)  # + i microseconds
Value = int | str | datetime


def probes_of(kinds: tuple[type, ...]) -> tuple[Value, ...]:
    """The values a prepared query is first built with, one of each kind, each unlike any real one."""

    def probe(i: int, kind: type) -> Value:
        if kind is int:
            return _INT_PROBE - i
        if kind is str:
            return _STR_PROBE.format(i)
        return _DATETIME_PROBE.replace(microsecond=_DATETIME_PROBE.microsecond + i)

    return tuple(probe(i, kind) for i, kind in enumerate(kinds))


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, int, bool], ...]  # (position in params, index of the caller's value, adapted)
    # Per column: the engine's and the field's converters (bound to the compiling thread's connection; they
    # read only settings such as its time zone, the same on every connection of one database).
    converters: tuple[tuple[int, tuple[list[Any], Any]], ...]
    model: type[Model] | None  # None for a values() query
    model_start: int
    model_end: int
    init_list: tuple[str, ...]
    populators: tuple[Any, ...]
    annotations: tuple[tuple[str, int], ...]
    names: tuple[str, ...]  # a values() query's columns


class Prepared(Generic[M]):
    """`Prepared(lambda pk, slug: Row.objects.filter(pk=pk, project__slug=slug)[:1], int, str).first(3, "x")`"""

    def __init__(self, build: Callable[..., QuerySet[M]], *kinds: type) -> None:
        unsupported = [kind for kind in kinds if kind not in (int, str, datetime)]
        if unsupported:
            raise TypeError(f"Prepared queries take int, str and datetime values only, not {unsupported}.")
        self.build = build
        self.kinds = kinds
        self._compiled: dict[str, _Compiled] = {}  # per database alias
        self._lock = threading.Lock()

    def _probes(self) -> tuple[Value, ...]:
        return probes_of(self.kinds)

    def _compile(self) -> _Compiled:
        probes = self._probes()
        queryset = self.build(*probes)
        if queryset._known_related_objects or queryset._prefetch_related_lookups:  # type: ignore[attr-defined]
            raise ValueError("A prepared query cannot prefetch or carry known related objects.")
        compiler = queryset.query.get_compiler(using=queryset.db)
        sql, params = compiler.as_sql()
        ops = compiler.connection.ops
        slots: list[tuple[int, int, bool]] = []
        for index, probe in enumerate(probes):
            # A datetime is in the parameters as the engine adapted it (SQLite: text): put back the same way.
            adapted = ops.adapt_datetimefield_value(probe) if isinstance(probe, datetime) else probe
            found = []
            for at, param in enumerate(params):
                if type(param) is type(probe) and param == probe:
                    found.append((at, index, False))
                elif adapted is not probe and type(param) is type(adapted) and param == adapted:
                    found.append((at, index, True))
            if str(probe) in sql or str(adapted) in sql:  # written into the SQL text: it could not vary
                raise ValueError(f"Value {index} of the prepared query is written into its SQL, not a parameter.")
            slots.extend(found)
        select, klass_info = compiler.select, compiler.klass_info
        fields = [column[0] for column in select[0 : compiler.col_count]]
        query = queryset.query
        names = (*query.extra_select, *query.values_select, *query.annotation_select)
        if queryset._iterable_class is not ModelIterable:  # values(): rows by name
            return _Compiled(sql, tuple(params), tuple(slots), tuple(compiler.get_converters(fields).items()),
                             None, 0, 0, (), (), (), names)  # fmt: skip
        start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
        return _Compiled(
            sql=sql,
            params=tuple(params),
            slots=tuple(slots),
            converters=tuple(compiler.get_converters(fields).items()),
            model=klass_info["model"],
            model_start=start,
            model_end=end,
            init_list=tuple(column[0].target.attname for column in select[start:end]),
            # The stubs name a newer Django's signature.
            populators=tuple(get_related_populators(klass_info, select, queryset.db)),  # type: ignore[call-arg]
            annotations=tuple((compiler.annotation_col_map or {}).items()),
            names=(),
        )

    def compiled(self, alias: str = "default") -> _Compiled:
        compiled = self._compiled.get(alias)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(alias) or self._compile()
                self._compiled[alias] = compiled
        return compiled

    def _rows(self, values: tuple[Value, ...], alias: str) -> tuple[_Compiled, list[list[Any]]]:
        """The compiled query run with `values`, its rows converted as the ORM converts them."""
        if len(values) != len(self.kinds):
            raise TypeError(f"This prepared query takes {len(self.kinds)} values, not {len(values)}.")
        for value, kind in zip(values, self.kinds, strict=True):
            if type(value) is not kind:
                raise TypeError(f"A prepared query's value must be {kind.__name__}, not {type(value).__name__}.")
            if isinstance(value, datetime) and value.tzinfo is None:
                raise TypeError("A prepared query's datetime must be aware (timezone.now()).")
        compiled = self.compiled(alias)
        connection = connections[alias]
        params = list(compiled.params)
        for at, index, adapted in compiled.slots:
            value = values[index]
            params[at] = connection.ops.adapt_datetimefield_value(value) if adapted else value  # type: ignore[arg-type]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            fetched: Any = cursor.fetchall()
        rows = []
        for fetched_row in fetched:
            row = list(fetched_row)
            for position, (converters, expression) in compiled.converters:
                value = row[position]
                for converter in converters:
                    value = converter(value, expression, connection)
                row[position] = value
            rows.append(row)
        return compiled, rows

    def dicts(self, *values: Value, alias: str = "default") -> list[dict[str, Any]]:
        """The rows of a `values()` / `values_list()` query, each by column name."""
        compiled, rows = self._rows(values, alias)
        if compiled.model is not None:
            raise TypeError("dicts() reads a values() query; use all() for model rows.")
        return [dict(zip(compiled.names, row, strict=True)) for row in rows]

    def all(self, *values: Value, alias: str = "default") -> list[M]:
        compiled, rows = self._rows(values, alias)
        if compiled.model is None:
            raise TypeError("all() reads model rows; use dicts() for a values() query.")
        found = []
        for row in rows:
            instance = compiled.model.from_db(alias, compiled.init_list, row[compiled.model_start : compiled.model_end])
            for populator in compiled.populators:
                populator.populate(row, instance)
            for name, position in compiled.annotations:
                setattr(instance, name, row[position])
            found.append(instance)
        return found  # type: ignore[return-value]

    def first(self, *values: Value, alias: str = "default") -> M | None:
        """The first row (the queryset should be sliced `[:1]`: it names one row by a unique key)."""
        rows = self.all(*values, alias=alias)
        return rows[0] if rows else None
