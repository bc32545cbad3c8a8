"""Claim the next piece of work of a queue (a page pair, a review slot, an item to translate…): one helper for all.

Each waiting condition is asked on its own (`status = new`, `status = claimed AND expires < now`…), so the
(status, id) index serves each with LIMIT 1; one OR of them made PostgreSQL walk or sort every candidate
(bench/explain.py). The first condition's read also says, per other condition, whether a candidate with a lower
id waits under it (an EXISTS on the same index): only then is that condition read too. The lowest id among them
is taken FOR UPDATE SKIP LOCKED (on PostgreSQL; SQLite serialises writers), and claimed while still locked by
the caller's conditional update, so people asking at once get different rows and a second delivery is harmless.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from django.db import models, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet

from common.prepared import Prepared, probes_of

Row = TypeVar("Row", bound=models.Model)

ATTEMPTS = 5


def _locked(candidates: QuerySet[Row]) -> QuerySet[Row]:
    return candidates.select_for_update(skip_locked=True, of=("self",))


def _older(number: int) -> str:
    return f"older_waiting_{number}"


def _condition_read(
    candidates: QuerySet[Row],
    condition: Q,
    *,
    read_whole: bool,
    fields: tuple[str, ...],
    shown: Mapping[str, Any],
    others: Mapping[int, Q] | None = None,
) -> QuerySet[Row]:
    """The first candidate waiting under `condition`, locked; with `others` (the other conditions, by number), also
    whether a candidate with a lower id waits under each (`older_waiting_<number>`): when none does, this row is
    the one to take and the other conditions need no read of their own."""
    locked = _locked(candidates)
    chosen = locked.annotate(**shown) if read_whole else locked.select_related(None).only(*fields)
    if others:
        older = {
            _older(number): Exists(candidates.filter(other, id__lt=OuterRef("id"))) for number, other in others.items()
        }
        chosen = chosen.annotate(**older)
    return chosen.filter(condition).order_by("id")[:1]


def _whole_read(candidates: QuerySet[Row], pk: int, *, shown: Mapping[str, Any]) -> QuerySet[Row]:
    return _locked(candidates).annotate(**shown).filter(pk=pk)[:1]


# Every prepared queue of the process: a starting server makes their reads (`prepared_queues_read`).
_EVERY: weakref.WeakSet[PreparedQueue[Any]] = weakref.WeakSet()


def prepared_queues_read() -> None:
    """Make the prepared reads of every queue made so far (compiled with the other prepared queries)."""
    for queue in list(_EVERY):
        queue.reads  # noqa: B018 - the property makes them


class PreparedQueue(Generic[Row]):
    """A queue's candidates and waiting conditions written as a function of plain values (ids, now), so that
    `queue_claim_next` reads them with SQL compiled once per process (common/prepared.py) rather than building
    and compiling the same wide query on every claim. `build(*values)` returns (candidates, waiting), as
    `queue_claim_next` takes them; it must read nothing but its values (see common/prepared.py)."""

    def __init__(
        self,
        build: Callable[..., tuple[QuerySet[Row], list[Q]]],
        *kinds: type,
        fields: tuple[str, ...] = ("id",),
        whole: bool = False,
        shown: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self.build, self.kinds, self.fields, self.whole = build, kinds, fields, whole
        self.shown = shown or dict
        self._reads: list[Prepared[Row]] | None = None
        self.whole_read: Prepared[Row] = Prepared(
            lambda *values: _whole_read(self.build(*values[:-1])[0], values[-1], shown=self.shown()), *kinds, int
        )
        _EVERY.add(self)

    @property
    def reads(self) -> list[Prepared[Row]]:
        """One prepared read per waiting condition (as many as `build` gives)."""
        if self._reads is None:
            probes = probes_of(self.kinds)
            self._reads = [self._condition(number) for number in range(len(self.build(*probes)[1]))]
        return self._reads

    def _condition(self, number: int) -> Prepared[Row]:
        def read(*values: Any) -> QuerySet[Row]:
            candidates, waiting = self.build(*values)
            whole = self.whole and number == 0
            shown = self.shown() if whole else {}
            others = dict(enumerate(waiting[1:], start=1)) if number == 0 else None
            return _condition_read(
                candidates, waiting[number], read_whole=whole, fields=self.fields, shown=shown, others=others
            )

        return Prepared(read, *self.kinds)


def queue_claim_next(
    *,
    candidates: QuerySet[Row] | None = None,
    waiting: Iterable[Q] = (),
    prepared: PreparedQueue[Row] | None = None,
    values: tuple[Any, ...] = (),
    claim: Callable[[Row], bool],
    fields: tuple[str, ...] = ("id",),
    whole: bool = False,
    shown: Mapping[str, Any] | None = None,
    attempts: int = ATTEMPTS,
) -> Row | None:
    """The row claimed for the caller, or None when nothing waits.

    `candidates`: the rows this person may take (their own exclusions applied); `waiting`: the conditions under
    which a row waits to be taken; `claim(row)`: the caller's conditional update, True when it took the row;
    `fields`: the columns read of each candidate. `whole`: the row is claimed read whole, with what `candidates`
    selects with it, for the caller to show without reading it again: the first condition's candidate is read so
    (it is the one taken, mostly), the others' by `fields` and read again whole when one of them is taken;
    `shown`: annotations of the row read whole only (what the caller shows, the claimed slot's spans).
    Or `prepared` (a `PreparedQueue`, which names `fields`, `whole` and `shown` itself) with its `values`.
    A claim lost to someone else at the same moment is retried (up to `attempts` times).
    """
    conditions = list(waiting)
    if prepared is not None:
        whole = prepared.whole
    elif candidates is None:
        raise TypeError("queue_claim_next takes candidates and waiting, or a prepared queue and its values.")
    shown = shown or {}

    def read(number: int) -> Row | None:
        if prepared is not None:
            return prepared.reads[number].first(*values)
        assert candidates is not None
        others = dict(enumerate(conditions[1:], start=1)) if number == 0 else None
        query = _condition_read(
            candidates, conditions[number], read_whole=whole and number == 0, fields=fields, shown=shown, others=others
        )
        return next(iter(query), None)

    def read_whole(pk: int) -> Row | None:
        if prepared is not None:
            return prepared.whole_read.first(*values, pk)
        assert candidates is not None
        return next(iter(_whole_read(candidates, pk, shown=shown)), None)

    count = len(prepared.reads) if prepared is not None else len(conditions)
    for _attempt in range(attempts):
        with transaction.atomic():
            first = read(0)
            # The other conditions are read only where the first's row says an older candidate waits under them
            # (or where it found none): mostly the first read is the only one.
            found = [first] + [
                read(number) if first is None or getattr(first, _older(number)) else None for number in range(1, count)
            ]
            candidate = min((row for row in found if row is not None), key=lambda row: row.pk, default=None)
            if candidate is None:
                return None
            if whole and candidate is not found[0]:
                candidate = read_whole(candidate.pk)  # locked by this transaction already
                if candidate is None:
                    continue
            if claim(candidate):
                return candidate
    return None
