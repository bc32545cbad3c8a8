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
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from django.db import connections, transaction
from django.db.models import Field, Model, QuerySet
from django.db.models.expressions import Combinable
from django.db.models.fields import AutoFieldMixin
from django.db.models.query import ModelIterable, get_related_populators
from django.db.models.sql import DeleteQuery, UpdateQuery

M = TypeVar("M", bound=Model)

# Values no real id, slug or digest takes: negative ids, text with control characters.
_INT_PROBE = -7_340_000_000
# A write's WHERE may compare small columns (a version, a position): Django leaves out a comparison with a number
# outside the column's range, so its probes are in the range of every integer column, and unlike any constant.
_SMALL_INT_PROBE = 29_717
_STR_PROBE = "\x1fprobe-{}\x1f"
_DATETIME_PROBE = datetime(1901, 2, 3, 4, 5, 6, 7000, tzinfo=UTC)  # + i microseconds
Value = int | str | datetime


def probes_of(kinds: tuple[type, ...], *, small: bool = False) -> tuple[Value, ...]:
    """The values a prepared query is first built with, one of each kind, each unlike any real one (`small`: ints
    in the range of every integer column)."""

    def probe(i: int, kind: type) -> Value:
        if kind is int:
            return _SMALL_INT_PROBE + i if small else _INT_PROBE - i
        if kind is str:
            return _STR_PROBE.format(i)
        return _DATETIME_PROBE.replace(microsecond=_DATETIME_PROBE.microsecond + i)

    return tuple(probe(i, kind) for i, kind in enumerate(kinds))


# How a value is put in its slot: as it is, adapted as the engine writes a datetime, or wrapped in the integer
# type the engine's parameters carry (psycopg's Int4 for a small integer column, on PostgreSQL).
Slot = tuple[int, int, Any]  # (position in the parameters, index of the caller's value, how)
_AS_IS, _ADAPTED = None, "adapted"


def _slots(sql: str, params: Any, probes: tuple[Value, ...], ops: Any) -> tuple[Slot, ...]:
    """Where each probe value sits in the compiled parameters."""
    slots: list[Slot] = []
    for index, probe in enumerate(probes):
        # A datetime is in the parameters as the engine adapted it (SQLite: text): put back the same way.
        adapted = ops.adapt_datetimefield_value(probe) if isinstance(probe, datetime) else probe
        for at, param in enumerate(params):
            if type(param) is type(probe) and param == probe:
                slots.append((at, index, _AS_IS))
            elif adapted is not probe and type(param) is type(adapted) and param == adapted:
                slots.append((at, index, _ADAPTED))
            elif type(probe) is int and isinstance(param, int) and not isinstance(param, bool) and param == probe:
                slots.append((at, index, type(param)))
        if str(probe) in sql or str(adapted) in sql:  # written into the SQL text: it could not vary
            raise ValueError(f"Value {index} of the prepared query is written into its SQL, not a parameter.")
    return tuple(slots)


def _checked(values: tuple[Value, ...], kinds: tuple[type, ...]) -> None:
    if len(values) != len(kinds):
        raise TypeError(f"This prepared query takes {len(kinds)} values, not {len(values)}.")
    for value, kind in zip(values, kinds, strict=True):
        if type(value) is not kind:
            raise TypeError(f"A prepared query's value must be {kind.__name__}, not {type(value).__name__}.")
        if isinstance(value, datetime) and value.tzinfo is None:
            raise TypeError("A prepared query's datetime must be aware (timezone.now()).")


def _bound(params: tuple[Any, ...], slots: tuple[Slot, ...], values: tuple[Value, ...], ops: Any) -> list[Any]:
    bound = list(params)
    for at, index, how in slots:
        value = values[index]
        if how is _AS_IS:
            bound[at] = value
        elif how == _ADAPTED:
            bound[at] = ops.adapt_datetimefield_value(value)
        else:
            bound[at] = how(value)
    return bound


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[Slot, ...]
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


# Every prepared query of the process, for `prepared_queries_compile` (a server compiles them as it starts).
_EVERY: weakref.WeakSet[Prepared[Any]] = weakref.WeakSet()


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
        _EVERY.add(self)

    def _probes(self) -> tuple[Value, ...]:
        return probes_of(self.kinds)

    def _compile(self) -> _Compiled:
        probes = self._probes()
        queryset = self.build(*probes)
        if queryset._known_related_objects or queryset._prefetch_related_lookups:  # type: ignore[attr-defined]
            raise ValueError("A prepared query cannot prefetch or carry known related objects.")
        compiler = queryset.query.get_compiler(using=queryset.db)
        sql, params = compiler.as_sql()
        slots = _slots(sql, params, probes, compiler.connection.ops)
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
        _checked(values, self.kinds)
        compiled = self.compiled(alias)
        connection = connections[alias]
        params = _bound(compiled.params, compiled.slots, values, connection.ops)
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


class PreparedWrite:
    """An UPDATE or DELETE compiled once, its values varying as in `Prepared`: `statement(*values)` returns the SQL
    and parameters Django compiles for them (`update_statement`, `delete_statement`); `run(*values)` returns how
    many rows it changed."""

    def __init__(self, statement: Callable[..., tuple[str, Any]], *kinds: type) -> None:
        unsupported = [kind for kind in kinds if kind not in (int, str, datetime)]
        if unsupported:
            raise TypeError(f"Prepared writes take int, str and datetime values only, not {unsupported}.")
        self.statement = statement
        self.kinds = kinds
        self._compiled: dict[str, tuple[str, tuple[Any, ...], tuple[Slot, ...]]] = {}
        self._lock = threading.Lock()

    def _compile(self, alias: str) -> tuple[str, tuple[Any, ...], tuple[Slot, ...]]:
        probes = probes_of(self.kinds, small=True)
        sql, params = self.statement(*probes, alias=alias)
        slots = _slots(sql, params, probes, connections[alias].ops)
        missing = set(range(len(probes))) - {index for _at, index, _how in slots}
        if missing:  # a value the statement would not take: it would always write with the probe
            raise ValueError(f"Values {sorted(missing)} of the prepared write are not parameters of its SQL.")
        return sql, tuple(params), slots

    def run(self, *values: Value, alias: str = "default") -> int:
        _checked(values, self.kinds)
        compiled = self._compiled.get(alias)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(alias) or self._compile(alias)
                self._compiled[alias] = compiled
        sql, params, slots = compiled
        connection = connections[alias]
        with transaction.mark_for_rollback_on_error(using=alias), connection.cursor() as cursor:
            cursor.execute(sql, _bound(params, slots, values, connection.ops))
            return cursor.rowcount


def update_statement(queryset: QuerySet[Any], changes: dict[str, Any], alias: str) -> tuple[str, Any]:
    """The UPDATE `queryset.update(**changes)` sends (a model's own columns only)."""
    query: UpdateQuery = queryset.query.chain(UpdateQuery)  # type: ignore[assignment]
    query.add_update_values(changes)
    query.clear_select_clause()
    if query.get_related_updates():  # a parent model's columns: Django sends more than one statement
        raise ValueError("A prepared update changes the columns of one table only.")
    return query.get_compiler(using=alias).as_sql()


def delete_statement(queryset: QuerySet[Any], alias: str) -> tuple[str, Any]:
    """The DELETE of `queryset`'s rows alone, as Django's fast delete sends it: no cascade, no signals (for rows
    no other table refers to)."""
    query = queryset.query.clone()
    query.__class__ = DeleteQuery
    return query.get_compiler(using=alias).as_sql()


def prepared_queries_compile(alias: str = "default") -> int:
    """Compile every prepared query made so far (those of the modules imported) that is not compiled yet; how many
    were. In a transaction: a locking read (FOR UPDATE) is compiled only inside one."""
    waiting = [prepared for prepared in list(_EVERY) if alias not in prepared._compiled]
    with transaction.atomic(using=alias):
        for prepared in waiting:
            prepared.compiled(alias)
    return len(waiting)


_INSERTS: dict[tuple[str, type[Model], int], tuple[str, tuple[Field, ...], Field]] = {}


def rows_insert(rows: Sequence[M], *, alias: str = "default") -> list[M]:
    """`bulk_create(rows)` for the hot path: the same INSERT (each value through its field's `pre_save` and
    `get_db_prep_save`, every concrete column but the id written, the ids read back with RETURNING on both
    engines), its SQL made once per model and number of rows instead of compiled on every call. Rows of one
    model with an auto-incremented id and no parent table; no signals are sent (bulk_create sends none)."""
    if not rows:
        return []
    model = type(rows[0])
    if any(type(row) is not model for row in rows):
        raise TypeError("rows_insert writes rows of one model at a time.")
    connection = connections[alias]
    key = (alias, model, len(rows))
    made = _INSERTS.get(key)
    if made is None:
        opts = model._meta
        if opts.parents or not isinstance(opts.pk, AutoFieldMixin):
            raise TypeError(f"rows_insert cannot write {opts.label}: it needs an auto id and no parent table.")
        fields = tuple(field for field in opts.concrete_fields if field is not opts.pk)
        ops = connection.ops
        columns = ", ".join(ops.quote_name(field.column) for field in fields)
        placeholders = [["%s"] * len(fields) for _row in rows]
        returning, _params = ops.return_insert_columns([opts.pk])
        sql = f"INSERT INTO {ops.quote_name(opts.db_table)} ({columns}) {ops.bulk_insert_sql(fields, placeholders)}"
        made = (f"{sql} {returning}", fields, opts.pk)
        _INSERTS[key] = made
    sql, fields, pk = made
    params = [field.get_db_prep_save(field.pre_save(row, True), connection) for row in rows for field in fields]
    with transaction.mark_for_rollback_on_error(using=alias), connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids = cursor.fetchall()
    if len(ids) != len(rows):
        raise RuntimeError(f"{len(rows)} rows written, {len(ids)} ids returned.")
    for row, (pk_value,) in zip(rows, ids, strict=True):
        setattr(row, pk.attname, pk_value)
        row._state.adding = False
        row._state.db = alias
    return list(rows)


_WRITES: dict[tuple[Any, ...], PreparedWrite] = {}


def _part(value: Any) -> tuple[str, Any]:
    """How a value takes part in a statement's shape: a varying value by its kind, a list by its kinds; None, True,
    False and expressions (`F("version") + 1`) compiled in, by their repr."""
    if isinstance(value, str):
        return ("value", str)
    if isinstance(value, datetime):
        return ("value", datetime)
    if isinstance(value, int) and not isinstance(value, bool):
        return ("value", int)
    if isinstance(value, list | tuple) and all(_part(each)[0] == "value" for each in value):
        return ("list", tuple(_part(each)[1] for each in value))
    if value is None or isinstance(value, bool | Combinable):
        return ("fixed", repr(value))
    raise TypeError(f"A prepared write takes str, int, datetime, None, booleans and expressions, not {value!r}.")


def preparable(values: Iterable[Any]) -> bool:
    """Whether `rows_update` can take these values (else the caller writes through the ORM)."""
    try:
        for value in values:
            _part(value)
    except TypeError:
        return False
    return True


def _plain(value: Any) -> Value:
    """A str, int or datetime as its own type (choices are str and int subclasses)."""
    if isinstance(value, datetime):
        return value
    return str(value) if isinstance(value, str) else int(value)


def _shaped(
    key: tuple[Any, ...], parts: tuple[tuple[dict[str, Any], tuple[tuple[str, tuple[str, Any]], ...]], ...]
) -> tuple[PreparedWrite | None, list[Value]]:
    """The write compiled for `key` (None the first time) and the varying values of `parts`, in order."""
    values: list[Value] = []
    for source, shape in parts:
        for name, (how, _kind) in shape:
            if how == "value":
                values.append(_plain(source[name]))
            elif how == "list":
                values.extend(_plain(each) for each in source[name])
    return _WRITES.get(key), values


def _kinds(*shapes: tuple[tuple[str, tuple[str, Any]], ...]) -> list[type]:
    kinds: list[type] = []
    for shape in shapes:
        for _name, (how, kind) in shape:
            if how == "value":
                kinds.append(kind)
            elif how == "list":
                kinds.extend(kind)
    return kinds


def _rebuilt(
    values: tuple[Value, ...], *parts: tuple[dict[str, Any], tuple[tuple[str, tuple[str, Any]], ...]]
) -> list[dict[str, Any]]:
    """Each source dict again, its varying values taken from `values` in order (the probes, when compiling)."""
    taken = iter(values)
    rebuilt = []
    for source, shape in parts:
        made: dict[str, Any] = {}
        for name, (how, kind) in shape:
            if how == "value":
                made[name] = next(taken)
            elif how == "list":
                made[name] = [next(taken) for _each in kind]
            else:
                made[name] = source[name]
        rebuilt.append(made)
    return rebuilt


def rows_update(model: type[Model], where: dict[str, Any], changes: dict[str, Any], *, alias: str = "default") -> int:
    """`model._base_manager.filter(**where).update(**changes)` with its SQL compiled once per shape (which lookups
    and columns, how many values in each list): str, int and datetime values (and lists of them, for `__in`) vary;
    None, booleans and expressions (`F("version") + 1`) are part of the shape. Every row of the table is in reach
    (no manager's filter: say `deleted_at__isnull=True` where it matters). Returns how many rows changed."""
    where_shape = tuple((name, _part(value)) for name, value in where.items())
    change_shape = tuple((name, _part(value)) for name, value in changes.items())
    key = ("update", alias, model, where_shape, change_shape)
    prepared, values = _shaped(key, ((where, where_shape), (changes, change_shape)))
    if prepared is None:

        def statement(*probes: Value, alias: str) -> tuple[str, Any]:
            filters, updates = _rebuilt(probes, (where, where_shape), (changes, change_shape))
            return update_statement(model._base_manager.filter(**filters), updates, alias)

        prepared = _WRITES[key] = PreparedWrite(statement, *_kinds(where_shape, change_shape))
    return prepared.run(*values, alias=alias)


def rows_delete(model: type[Model], where: dict[str, Any], *, alias: str = "default") -> int:
    """Delete the rows `where` (as `rows_update` reads it) in one statement compiled once per shape, without
    Django's collector: for rows no other table refers to. Returns how many rows went."""
    where_shape = tuple((name, _part(value)) for name, value in where.items())
    key = ("delete", alias, model, where_shape)
    prepared, values = _shaped(key, ((where, where_shape),))
    if prepared is None:

        def statement(*probes: Value, alias: str) -> tuple[str, Any]:
            (filters,) = _rebuilt(probes, (where, where_shape))
            return delete_statement(model._base_manager.filter(**filters), alias)

        prepared = _WRITES[key] = PreparedWrite(statement, *_kinds(where_shape))
    return prepared.run(*values, alias=alias)
