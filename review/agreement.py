"""Inter-rater agreement statistics: pure functions over judgments, no ORM.

Judgments are coded into a `RatingTable`, from long-format judgments
(`rating_table([(unit, rater, value), ...], level)`) or from a raters × units
matrix with `np.nan` for missing ratings (`rating_table_from_matrix`, the
`krippendorff` package's layout), or added up a unit at a time into a `Tally`
as a database stream gives them. Every statistic reads `Profiles`: each
distinct row of value counts and how many units have it (a table's or a
tally's; units with the same counts are interchangeable for every statistic
here), and returns a `Statistic`: the value (None when undefined, with the
reason in `note`) and the counts behind it. `agreement_summary` computes all of
them at once, overall, per rater pair and per stratum.

Conventions, so a reader of the numbers knows what they mean:

* A unit with a single judgment carries no agreement information: it is left
  out and counted in `excluded_units`. Gwet's AC1 and Fleiss' kappa follow
  Gwet's formulas for missing ratings (Gwet 2014, ch. 5), in which such units
  still inform the category prevalence π_k; this reproduces his software.
* Percent agreement, Fleiss' kappa, Gwet's AC1 and Cohen's kappa compare values
  for equality (unweighted), whatever the level; Krippendorff's alpha is the
  statistic that uses the level of measurement.
* The confidence interval of alpha is a percentile bootstrap over units: units
  are drawn with replacement and alpha is recomputed on each resample with a
  fixed seed. (Krippendorff's own bootstrap (Hayes & Krippendorff 2007)
  resamples pairable values instead; resampling units keeps the judgments of
  one unit together, which is what makes them dependent.)
* r*wg(j) is 1 − s̄²/σ²_EU (Lindell, Brandt & Whitney 1999), with s̄² the mean
  of the per-unit rating variances and σ²_EU = (A² − 1)/12 the variance of the
  uniform null distribution over A response options (James, Demaree & Wolf
  1984). The units of a table (or of a stratum) are the J items.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import numbers
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from itertools import combinations, pairwise
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = get_args(Level)

DEFAULT_BOOTSTRAP = 1000
DEFAULT_SEED = 20110125  # any fixed number: the same data and seed give the same interval
DEFAULT_CONFIDENCE = 0.95
MAX_BOOTSTRAP = 100_000
MAX_CELLS = 50_000_000  # units × categories; beyond this the dense count table would not fit comfortably
MAX_PAIR_INTERVALS = 45  # bootstrap intervals per rater pair up to 10 raters; more pairs get point values only
BOOTSTRAP_METHOD = (
    "percentile bootstrap over units: units drawn with replacement, alpha recomputed on each resample "
    "(resamples without variation are skipped)"
)
NO_STRATUM = "(none)"

LABELS = {
    "krippendorff_alpha": "Krippendorff's alpha",
    "percent_agreement": "Percent agreement",
    "fleiss_kappa": "Fleiss' kappa",
    "gwet_ac1": "Gwet's AC1",
    "cohen_kappa": "Cohen's kappa",
    "cohen_kappa_mean": "Mean pairwise Cohen's kappa",
    "rwg_star_j": "r*wg(j)",
    "rwg_j": "rwg(j)",
}

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class AgreementInputError(ValueError):
    """Judgments that cannot be used as given; `record` is the 0-based position, `field` what is wrong."""

    def __init__(self, message: str, *, record: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.record = record
        self.field = field


# The table


@dataclass(frozen=True, eq=False)
class RatingTable:
    """Judgments coded for computation: one entry per judgment (unit, rater, category index).

    `categories` is the value domain in order (declared, or the sorted observed
    values); `scores` holds each category's number for numeric levels (for an
    ordinal scale of labels, its position 1..C) and is None for nominal data.
    """

    level: Level
    units: tuple[Hashable, ...]
    raters: tuple[Hashable, ...]
    categories: tuple[Any, ...]
    scores: FloatArray | None
    unit_index: IntArray
    rater_index: IntArray
    code: IntArray
    categories_declared: bool = False

    @property
    def n_judgments(self) -> int:
        return len(self.code)

    @cached_property
    def judgments_per_unit(self) -> IntArray:
        return np.bincount(self.unit_index, minlength=len(self.units))

    @cached_property
    def fingerprint(self) -> str:
        """`judgments_fingerprint`, once per table."""
        return judgments_fingerprint(self)

    @cached_property
    def profiles(self) -> Profiles:
        """The units as count profiles: what every statistic reads."""
        return table_profiles(self)

    @cached_property
    def counts(self) -> IntArray:
        """Units × categories: how many raters gave each unit each value (Fleiss' table)."""
        n_categories = len(self.categories)
        flat = self.unit_index * n_categories + self.code
        return np.bincount(flat, minlength=len(self.units) * n_categories).reshape(len(self.units), n_categories)

    def matrix(self) -> FloatArray:
        """Raters × units with `np.nan` for missing: scores for numeric levels, category indices for nominal."""
        values = self.scores[self.code] if self.scores is not None else self.code.astype(float)
        out = np.full((len(self.raters), len(self.units)), np.nan)
        out[self.rater_index, self.unit_index] = values
        return out

    def code_matrix(self) -> FloatArray:
        """Raters × units of category indices, `np.nan` for missing."""
        out = np.full((len(self.raters), len(self.units)), np.nan)
        out[self.rater_index, self.unit_index] = self.code
        return out

    def select(self, keep: npt.NDArray[np.bool_]) -> RatingTable:
        """The table with only the judgments where `keep` is true; units and raters left empty disappear."""
        unit_ids, unit_index = _reindex(self.unit_index[keep], len(self.units))
        rater_ids, rater_index = _reindex(self.rater_index[keep], len(self.raters))
        return RatingTable(
            level=self.level,
            units=_pick(self.units, unit_ids),
            raters=_pick(self.raters, rater_ids),
            categories=self.categories,
            scores=self.scores,
            unit_index=unit_index,
            rater_index=rater_index,
            code=self.code[keep],
            categories_declared=self.categories_declared,
        )

    def select_units(self, units: npt.NDArray[np.bool_]) -> RatingTable:
        return self.select(units[self.unit_index])

    def select_raters(self, *raters: int) -> RatingTable:
        wanted = np.zeros(len(self.raters), dtype=bool)
        wanted[list(raters)] = True
        return self.select(wanted[self.rater_index])


def _pick(names: tuple[Hashable, ...], ids: IntArray) -> tuple[Hashable, ...]:
    """`names` at `ids`, as a tuple. Through an array of references: 8 bytes a name, where a Python int per id
    (itemgetter's arguments) took about 45, and a tenth of the time for a table of 1,000,000 units."""
    return tuple(np.fromiter(names, dtype=object, count=len(names))[ids])


def _reindex(index: IntArray, size: int) -> tuple[IntArray, IntArray]:
    """The ids still used (in their order) and `index` renumbered 0..k-1 over them; linear, no sorting."""
    used = np.zeros(size, dtype=bool)
    used[index] = True
    renumber = np.cumsum(used) - 1
    return np.flatnonzero(used), renumber[index].astype(np.int64)


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise AgreementInputError(
            f"Unknown level of measurement {level!r}: use one of {', '.join(LEVELS)}.", field="level"
        )


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _number(value: Any, position: int) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real | str):
        raise AgreementInputError(
            f"judgment {position}: value {value!r} is not a number.", record=position, field="value"
        )
    try:
        number = float(value)
    except ValueError:
        raise AgreementInputError(
            f"judgment {position}: value {value!r} is not a number.", record=position, field="value"
        ) from None
    if not math.isfinite(number):
        raise AgreementInputError(
            f"judgment {position}: value {value!r} is not finite.", record=position, field="value"
        )
    return number


def _sorted_values(values: Iterable[Any]) -> list[Any]:
    unique = set(values)
    try:
        return sorted(unique)
    except TypeError:  # mixed types (numbers and text): a stable order is all nominal data needs
        return sorted(unique, key=lambda value: (type(value).__name__, str(value)))


def _coding(
    level: Level, values: list[Any], categories: Sequence[Any] | None
) -> tuple[tuple[Any, ...], FloatArray | None, IntArray]:
    """Category domain, numeric scores and the category index of every value."""
    numeric = level in ("interval", "ratio") or (level == "ordinal" and categories is None)
    if numeric:
        numbers_ = np.array([_number(value, position) for position, value in enumerate(values)], dtype=float)
        if categories is not None:
            domain = np.array(
                sorted({_number(category, position) for position, category in enumerate(categories)}), dtype=float
            )
            codes = np.searchsorted(domain, numbers_).clip(0, max(len(domain) - 1, 0))
            off_scale = np.flatnonzero(domain[codes] != numbers_) if len(domain) else np.arange(len(numbers_))
            if len(off_scale):
                position = int(off_scale[0])
                raise AgreementInputError(
                    f"judgment {position}: value {values[position]!r} is not one of the declared categories.",
                    record=position,
                    field="value",
                )
        else:
            domain, codes = np.unique(numbers_, return_inverse=True)
        shown = tuple(int(v) if float(v).is_integer() else float(v) for v in domain)  # 3, not 3.0, in reports
        return shown, domain, codes.astype(np.int64)
    order = list(dict.fromkeys(categories)) if categories is not None else _sorted_values(values)
    index = {category: position for position, category in enumerate(order)}
    codes_list = []
    for position, value in enumerate(values):
        code = index.get(value)
        if code is None:
            raise AgreementInputError(
                f"judgment {position}: value {value!r} is not one of the declared categories.",
                record=position,
                field="value",
            )
        codes_list.append(code)
    scores = np.arange(1, len(order) + 1, dtype=float) if level == "ordinal" else None
    return tuple(order), scores, np.array(codes_list, dtype=np.int64)


def rating_table(
    judgments: Iterable[Sequence[Any]],
    level: Level,
    *,
    categories: Sequence[Any] | None = None,
    raters: Sequence[Hashable] = (),
) -> RatingTable:
    """Code long-format judgments `(unit, rater, value)`; a value of None or NaN is a missing judgment.

    Nominal values may be any hashable; ordinal values are numbers, or labels
    when `categories` gives their order; interval and ratio values are numbers.
    `categories` declares the scale (all possible values, even unused ones);
    `raters` fixes the order of raters (otherwise: order of appearance).
    A rater judging the same unit twice is an error naming the judgment.
    """
    _check_level(level)
    unit_ids: dict[Hashable, int] = {}
    rater_ids: dict[Hashable, int] = {rater: position for position, rater in enumerate(dict.fromkeys(raters))}
    unit_index: list[int] = []
    rater_index: list[int] = []
    values: list[Any] = []
    positions: list[int] = []
    for position, judgment in enumerate(judgments):
        if len(judgment) < 3:
            raise AgreementInputError(
                f"judgment {position}: expected (unit, rater, value), got {judgment!r}.", record=position
            )
        unit, rater, value = judgment[0], judgment[1], judgment[2]
        if _is_missing(value):
            continue
        try:
            unit_index.append(unit_ids.setdefault(unit, len(unit_ids)))
            rater_index.append(rater_ids.setdefault(rater, len(rater_ids)))
        except TypeError:
            raise AgreementInputError(
                f"judgment {position}: unit and rater must be hashable (text or numbers).", record=position
            ) from None
        values.append(value)
        positions.append(position)
    if categories is not None and not len(categories):
        raise AgreementInputError("The declared categories are empty.", field="categories")
    try:
        domain, scores, codes = _coding(level, values, categories)
    except AgreementInputError as error:  # report the caller's position, not the position among non-missing values
        if error.record is None:
            raise
        original = positions[error.record]
        raise AgreementInputError(
            error.message.replace(f"judgment {error.record}:", f"judgment {original}:", 1),
            record=original,
            field=error.field,
        ) from None
    table = RatingTable(
        level=level,
        units=tuple(unit_ids),
        raters=tuple(rater_ids),
        categories=domain,
        scores=scores,
        unit_index=np.array(unit_index, dtype=np.int64),
        rater_index=np.array(rater_index, dtype=np.int64),
        code=codes,
        categories_declared=categories is not None,
    )
    _check_duplicates(table, positions)
    _check_size(table)
    if raters and len(np.unique(table.rater_index)) < len(table.raters):
        table = table.select(np.ones(table.n_judgments, dtype=bool))  # drop listed raters without judgments
    return table


def rating_table_from_indices(
    level: Level,
    *,
    units: Sequence[Hashable],
    raters: Sequence[Hashable],
    categories: Sequence[Any],
    unit_index: npt.ArrayLike,
    rater_index: npt.ArrayLike,
    code: npt.ArrayLike,
) -> RatingTable:
    """Judgments already numbered: judgment i is (units[unit_index[i]], raters[rater_index[i]],
    categories[code[i]]), none missing, the categories declared (nominal, or ordinal labels in order).

    The same table as `rating_table` of those triples (units and raters numbered in order of appearance, only
    those judged), without a Python object per judgment: for a project's hundreds of thousands of judgments.
    """
    _check_level(level)
    if level not in ("nominal", "ordinal"):
        raise AgreementInputError("Numbered judgments need named categories: nominal or ordinal.", field="level")
    order = tuple(dict.fromkeys(categories))
    if not order:
        raise AgreementInputError("The declared categories are empty.", field="categories")
    codes = np.asarray(code, dtype=np.int64)
    if len(codes) and (codes.min() < 0 or codes.max() >= len(order)):
        raise AgreementInputError("A judgment's category number is outside the declared categories.", field="value")
    unit_ids, unit_numbers = _appearance(np.asarray(unit_index, dtype=np.int64), len(units))
    rater_ids, rater_numbers = _appearance(np.asarray(rater_index, dtype=np.int64), len(raters))
    table = RatingTable(
        level=level,
        units=_pick(tuple(units), unit_ids),
        raters=_pick(tuple(raters), rater_ids),
        categories=order,
        scores=np.arange(1, len(order) + 1, dtype=float) if level == "ordinal" else None,
        unit_index=unit_numbers,
        rater_index=rater_numbers,
        code=codes,
        categories_declared=True,
    )
    _check_duplicates(table, range(table.n_judgments))
    _check_size(table)
    return table


def _appearance(index: IntArray, size: int) -> tuple[IntArray, IntArray]:
    """The ids used in `index`, in order of first appearance, and `index` renumbered 0..k-1 in that order."""
    if len(index) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if index.min() < 0 or index.max() >= size:
        raise AgreementInputError("A judgment's unit or rater number is outside the names given.")
    used, first = np.unique(index, return_index=True)
    ids = used[np.argsort(first, kind="stable")]
    renumber = np.empty(size, dtype=np.int64)
    renumber[ids] = np.arange(len(ids), dtype=np.int64)
    return ids, renumber[index]


def rating_table_from_matrix(
    matrix: npt.ArrayLike,
    level: Level,
    *,
    categories: Sequence[Any] | None = None,
    raters: Sequence[Hashable] | None = None,
    units: Sequence[Hashable] | None = None,
) -> RatingTable:
    """Code a raters × units matrix (the `krippendorff` layout) with `np.nan` (or None) for missing ratings."""
    try:
        data = np.asarray(matrix, dtype=object if level == "nominal" or categories is not None else float)
    except (TypeError, ValueError):
        raise AgreementInputError(
            f"The matrix holds values that are not numbers; level {level} needs numbers (or declared categories).",
            field="value",
        ) from None
    if data.ndim != 2:
        raise AgreementInputError("The matrix must be two-dimensional: raters × units.", field="matrix")
    rater_names = list(raters) if raters is not None else list(range(data.shape[0]))
    unit_names = list(units) if units is not None else list(range(data.shape[1]))
    if len(rater_names) != data.shape[0] or len(unit_names) != data.shape[1]:
        raise AgreementInputError("Rater and unit names must match the matrix's shape (raters × units).")
    judgments = (
        (unit_names[u], rater_names[r], data[r, u]) for u in range(data.shape[1]) for r in range(data.shape[0])
    )
    return rating_table(judgments, level, categories=categories, raters=rater_names)


def _check_duplicates(table: RatingTable, positions: Sequence[int]) -> None:
    keys = table.unit_index * max(len(table.raters), 1) + table.rater_index
    ordered = np.sort(keys)
    if (ordered[1:] == ordered[:-1]).any():  # rare: only then the positions, to name the first repeat
        del ordered
        order = np.argsort(keys, kind="stable")
        repeats = np.flatnonzero(keys[order][1:] == keys[order][:-1])
        index = int(order[repeats + 1].min())  # the earliest judgment that repeats an earlier one
        position = positions[index]
        unit, rater = table.units[table.unit_index[index]], table.raters[table.rater_index[index]]
        raise AgreementInputError(
            f"judgment {position}: rater {rater!r} already judged unit {unit!r}; each rater judges a unit once.",
            record=position,
            field="rater",
        )


def _check_size(table: RatingTable) -> None:
    if len(table.units) * len(table.categories) > MAX_CELLS:
        raise AgreementInputError(
            f"{len(table.categories)} distinct values over {len(table.units)} units are too many to tabulate; "
            "round the values or declare a coarser scale.",
            field="value",
        )


# Results


@dataclass(frozen=True)
class Statistic:
    """One agreement figure and what it rests on; `value` is None when undefined, `note` says why."""

    name: str
    value: float | None
    n_units: int
    n_raters: int
    n_judgments: int
    excluded_units: int = 0
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""

    @property
    def label(self) -> str:
        return LABELS.get(self.name, self.name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "value": _json_float(self.value),
            "ci_low": _json_float(self.ci_low),
            "ci_high": _json_float(self.ci_high),
            "n_units": self.n_units,
            "n_raters": self.n_raters,
            "n_judgments": self.n_judgments,
            "excluded_units": self.excluded_units,
            "note": self.note,
        }


def _json_float(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def _json_value(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


# The units as count profiles: what every statistic reads


@dataclass(frozen=True, eq=False)
class Profiles:
    """Units as count profiles: each distinct row of value counts (how many raters gave a unit each value) and how
    many units have it. Every statistic reads these; units with the same counts are interchangeable for all of
    them. A project's millions of units are a few hundred profiles, so a report holds these, never the units.

    `counts` are sorted as `np.unique(..., axis=0)` sorts rows (the bootstrap's draws follow that order). Units
    judged once are rows summing to 1: they count towards Gwet's prevalence and `excluded_units` only.
    """

    level: Level
    categories: tuple[Any, ...]
    scores: FloatArray | None
    categories_declared: bool
    counts: IntArray  # profiles × categories
    frequency: IntArray  # units with each profile
    n_raters: int  # raters with any judgment
    raters_used: int  # raters with a judgment on a unit judged twice or more

    @cached_property
    def judged(self) -> IntArray:
        return self.counts.sum(axis=1)

    @cached_property
    def used(self) -> npt.NDArray[np.bool_]:
        return self.judged >= 2

    @cached_property
    def used_counts(self) -> IntArray:
        return self.counts[self.used]

    @cached_property
    def used_frequency(self) -> IntArray:
        return self.frequency[self.used]

    @property
    def n_judgments(self) -> int:
        return int(self.judged @ self.frequency)


def profiles_from_rows(
    rows: IntArray,
    frequency: IntArray,
    *,
    level: Level,
    categories: tuple[Any, ...],
    scores: FloatArray | None,
    categories_declared: bool,
    n_raters: int,
    raters_used: int,
) -> Profiles:
    """Profiles from count rows with their frequencies (a row may repeat; repeats are added up)."""
    frequency = np.asarray(frequency, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64).reshape(len(frequency), len(categories))
    keep = frequency > 0
    rows, frequency = rows[keep], frequency[keep]
    if len(rows):
        rows, inverse = np.unique(rows, axis=0, return_inverse=True)
        frequency = np.bincount(inverse.reshape(-1), weights=frequency, minlength=len(rows)).astype(np.int64)
    return Profiles(
        level=level,
        categories=categories,
        scores=scores,
        categories_declared=categories_declared,
        counts=rows,
        frequency=frequency,
        n_raters=n_raters,
        raters_used=raters_used,
    )


def table_profiles(table: RatingTable) -> Profiles:
    """A coded table's units as profiles (`RatingTable.profiles`)."""
    per_unit = table.judgments_per_unit
    used = (per_unit >= 2)[table.unit_index]
    return profiles_from_rows(
        table.counts,
        np.ones(len(table.units), dtype=np.int64),
        level=table.level,
        categories=table.categories,
        scores=table.scores,
        categories_declared=table.categories_declared,
        n_raters=len(np.unique(table.rater_index)),
        raters_used=len(np.unique(table.rater_index[used])),
    )


class _ProfileCounter:
    """Profiles added up a unit at a time: a profile is kept as its sorted value codes (short for many values)."""

    def __init__(self) -> None:
        self.frequency: dict[tuple[int, ...], int] = {}
        self.raters_used: set[int] = set()
        self.raters_single: set[int] = set()

    def add(self, key: tuple[int, ...], raters: Sequence[int]) -> None:
        self.frequency[key] = self.frequency.get(key, 0) + 1
        (self.raters_used if len(key) >= 2 else self.raters_single).update(raters)

    def profiles(self, tally: Tally, recode: IntArray) -> Profiles:
        n_categories = len(tally.categories)
        rows = np.zeros((len(self.frequency), n_categories), dtype=np.int64)
        for row, key in enumerate(self.frequency):
            np.add.at(rows[row], recode[list(key)], 1)
        return profiles_from_rows(
            rows,
            np.fromiter(self.frequency.values(), dtype=np.int64, count=len(self.frequency)),
            level=tally.level,
            categories=tally.categories,
            scores=tally.scores,
            categories_declared=tally.categories_declared,
            n_raters=len(self.raters_used | self.raters_single),
            raters_used=len(self.raters_used),
        )


HASH_MODULUS = 2**256


def _record_hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")


class Tally:
    """A scope's judgments added up a unit at a time, in one pass: every figure of its summary (overall, per rater
    pair, per stratum, its most contested units) and its fingerprint, in memory that does not grow with the
    units (profiles, a count table per rater pair, the top contested units). A project's report streams its
    judgments from the database through one; `agreement_summary` feeds a coded table through one.

    `categories` are the declared values; with `fixed=False` (nominal only) values first seen are added and
    `finish(order=...)` puts them in their final order. `strata` given with a unit name its stratum in each
    stratification (a label; NO_STRATUM where none).
    """

    def __init__(
        self,
        level: Level,
        categories: Sequence[Any],
        *,
        scores: FloatArray | None = None,
        declared: bool = True,
        fixed: bool = True,
        contested: int | None = None,
    ) -> None:
        _check_level(level)
        if not fixed and level != "nominal":
            raise AgreementInputError("Only nominal values may be found as they come.", field="level")
        self.level = level
        self.categories: tuple[Any, ...] = tuple(categories)
        self.scores = scores
        self.categories_declared = declared
        self.fixed = fixed
        self.code_of: dict[Any, int] = {category: at for at, category in enumerate(self.categories)}
        self.rater_of: dict[Hashable, int] = {}
        self.texts: dict[tuple[int, int], str] = {}  # (rater, value) -> its JSON text in the fingerprint
        self.overall = _ProfileCounter()
        self.rater_codes: dict[tuple[int, int], int] = {}  # (rater, value) -> units
        self.confusion: dict[tuple[int, int, int, int], int] = {}  # (rater a, rater b, a's value, b's value) -> units
        self.strata: dict[str, dict[str, _ProfileCounter]] = {}
        self.contested_limit = contested
        self.contested: list[tuple[float, float, int, int, Any, tuple[int, ...]]] = []
        self.units = 0
        self.judgments_sum = 0
        self.strata_sum = 0
        self.recode: IntArray = np.arange(len(self.categories), dtype=np.int64)

    def code(self, value: Any) -> int:
        """The number of a value among the categories; a value off a fixed scale is refused, naming it."""
        code = self.code_of.get(value)
        if code is None:
            if self.fixed:
                raise AgreementInputError(f"value {value!r} is not one of the declared categories.", field="value")
            code = self.code_of[value] = len(self.categories)
            self.categories = (*self.categories, value)
        return code

    def add(
        self, unit: Hashable, raters: Sequence[Hashable], codes: Sequence[int], strata: Mapping[str, str] | None = None
    ) -> None:
        """One unit's judgments: `raters[i]` gave value number `codes[i]`."""
        numbers = [self.rater_of.setdefault(rater, len(self.rater_of)) for rater in raters]
        judged = sorted(zip(numbers, codes, strict=True))
        if len(set(numbers)) < len(numbers):
            repeated = next(rater for at, rater in enumerate(raters) if rater in raters[:at])
            raise AgreementInputError(
                f"rater {repeated!r} already judged unit {unit!r}; each rater judges a unit once.", field="rater"
            )
        key = tuple(sorted(codes))
        self.overall.add(key, numbers)
        for number, code in zip(numbers, codes, strict=True):
            self.rater_codes[number, code] = self.rater_codes.get((number, code), 0) + 1
        for (a, code_a), (b, code_b) in combinations(judged, 2):
            cell = (a, b, code_a, code_b)
            self.confusion[cell] = self.confusion.get(cell, 0) + 1
        unit_text = str(unit) if type(unit) is int else _json_text(unit)
        if strata:
            for name, label in strata.items():
                counters = self.strata.setdefault(name, {})
                counter = counters.get(label)
                if counter is None:
                    counter = counters[label] = _ProfileCounter()
                counter.add(key, numbers)
            stratum_texts = _strata_text(tuple(strata.items()))
            self.strata_sum = (self.strata_sum + _record_hash(f"{unit_text}\t{stratum_texts}")) % HASH_MODULUS
        if len(key) >= 2:
            self._contest(unit, key)
        values = sorted(map(self._text, judged))
        self.judgments_sum = (self.judgments_sum + _record_hash("\t".join([unit_text, *values]))) % HASH_MODULUS
        self.units += 1

    def _text(self, judgment: tuple[int, int]) -> str:
        """A judgment's text in the fingerprint, `json.dumps([rater, value])`, made once per rater and value."""
        text = self.texts.get(judgment)
        if text is None:
            rater, code = judgment
            names = list(self.rater_of)  # rare: once per rater and value
            text = self.texts[judgment] = _json_text([names[rater], self.categories[code]])
        return text

    def _contest(self, unit: Hashable, key: tuple[int, ...]) -> None:
        """Keep the unit if it is among the most contested so far: lowest share of agreeing rater pairs, then the
        widest spread (numeric levels), then the most judgments, then the earliest."""
        if self.contested_limit == 0:
            return
        judged = len(key)
        same = sum(n * (n - 1) for n in _run_lengths(key))
        agreement = same / (judged * (judged - 1))
        if agreement >= 1:
            return
        spread = 0.0
        if self.scores is not None:
            scores = [float(self.scores[code]) for code in key]
            total = sum(scores)
            spread = max((sum(score * score for score in scores) - total * total / judged) / (judged - 1), 0.0)
        entry = (-agreement, spread, judged, -self.units, unit, key)
        if self.contested_limit is None or len(self.contested) < self.contested_limit:
            heapq.heappush(self.contested, entry)
        elif entry[:4] > self.contested[0][:4]:
            heapq.heapreplace(self.contested, entry)

    def finish(self, *, order: Sequence[Any] | None = None) -> None:
        """Put values found as they came in `order` (every category, each once), before the figures are read."""
        if order is None:
            return
        final = tuple(dict.fromkeys(order))
        if set(final) != set(self.categories) or len(final) != len(self.categories):
            raise AgreementInputError("The categories' order must name every category once.", field="categories")
        position = {category: at for at, category in enumerate(final)}
        self.recode = np.array([position[category] for category in self.categories], dtype=np.int64)
        self.categories = final
        self.code_of = position
        self.fixed = True

    @property
    def raters(self) -> tuple[Hashable, ...]:
        return tuple(self.rater_of)

    @property
    def n_judgments(self) -> int:
        return sum(len(key) * n for key, n in self.overall.frequency.items())

    @cached_property
    def profiles(self) -> Profiles:
        return self.overall.profiles(self, self.recode)

    @property
    def fingerprint(self) -> str:
        """sha256 of the level, the scale and the judgments, whatever their order: the same data, the same
        fingerprint. Each unit's judgments are hashed as one text (the unit, then each [rater, value] in sorted
        order) and the units' hashes are added modulo 2^256, an order-free multiset hash (Bellare & Micciancio
        1997), so a stream of units needs no sorting."""
        scale = json.dumps([_json_value(category) for category in self.categories], ensure_ascii=False)
        text = f"level\t{self.level}\nscale\t{scale}\nunits\t{self.units}\n{self.judgments_sum:064x}\n"
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

    @property
    def strata_fingerprint(self) -> str:
        """sha256 of every unit's strata, hashed as the judgments are (order-free)."""
        return hashlib.sha256(f"strata\t{self.units}\n{self.strata_sum:064x}\n".encode()).hexdigest()

    def pair_profiles(self) -> dict[tuple[int, int], tuple[Profiles, IntArray]]:
        """Each pair of raters who judged a unit together (by their numbers, in order): the profiles of the units
        either judged (the table of the two alone) and their confusion table (rows: the first rater's values)."""
        n_categories = len(self.categories)
        confusions: dict[tuple[int, int], IntArray] = {}
        for (a, b, code_a, code_b), n in self.confusion.items():
            table = confusions.get((a, b))
            if table is None:
                table = confusions[a, b] = np.zeros((n_categories, n_categories), dtype=np.int64)
            table[self.recode[code_a], self.recode[code_b]] += n
        return {pair: (self._pair(*pair, confusion), confusion) for pair, confusion in confusions.items()}

    def single_profiles(self, a: int, b: int) -> Profiles:
        """Two raters who never judged a unit together: their units, each judged once in the pair."""
        return self._pair(a, b, np.zeros((len(self.categories),) * 2, dtype=np.int64))

    def _rater_values(self, rater: int) -> IntArray:
        values = np.zeros(len(self.categories), dtype=np.int64)
        for code in range(len(self.recode)):
            values[self.recode[code]] += self.rater_codes.get((rater, code), 0)
        return values

    def _pair(self, a: int, b: int, confusion: IntArray) -> Profiles:
        n_categories = len(self.categories)
        eye = np.eye(n_categories, dtype=np.int64)
        first, second = np.nonzero(confusion)
        single = self._rater_values(a) - confusion.sum(axis=1) + self._rater_values(b) - confusion.sum(axis=0)
        rows = np.concatenate([eye[first] + eye[second], eye])
        frequency = np.concatenate([confusion[first, second], single])
        return profiles_from_rows(
            rows,
            frequency,
            level=self.level,
            categories=self.categories,
            scores=self.scores,
            categories_declared=self.categories_declared,
            n_raters=2,
            raters_used=2 if confusion.any() else 0,
        )

    def strata_profiles(self, name: str) -> list[tuple[str, Profiles]]:
        """A stratification's strata in sorted order, each with its units' profiles."""
        counters = self.strata.get(name, {})
        return [(label, counters[label].profiles(self, self.recode)) for label in _sorted_values(counters)]

    def contested_units(self) -> list[ContestedUnit]:
        ranked = sorted(self.contested, reverse=True)
        out = []
        for negative_agreement, spread, judged, _, unit, key in ranked:
            counts = np.bincount(self.recode[list(key)], minlength=len(self.categories))
            out.append(
                ContestedUnit(
                    unit=unit,
                    n_judgments=judged,
                    agreement=-negative_agreement,
                    spread=spread if self.scores is not None else None,
                    values={
                        str(_json_value(self.categories[code])): int(counts[code]) for code in np.flatnonzero(counts)
                    },
                )
            )
        return out


def _json_text(value: Any) -> str:
    if isinstance(value, list):
        return json.dumps([_json_value(part) for part in value], ensure_ascii=False)
    return json.dumps(_json_value(value), ensure_ascii=False)


@lru_cache(maxsize=4096)
def _strata_text(strata: tuple[tuple[str, str], ...]) -> str:
    """A unit's strata as JSON text; units share a few combinations of labels, so each is made once."""
    return json.dumps(sorted(strata), ensure_ascii=False)


def _run_lengths(key: tuple[int, ...]) -> Iterator[int]:
    """How often each value comes in a sorted tuple of values."""
    run = 1
    for before, value in pairwise(key):
        if value == before:
            run += 1
        else:
            yield run
            run = 1
    yield run


def table_tally(
    table: RatingTable, *, strata: Mapping[str, Mapping[Any, str]] | None = None, contested: int | None = None
) -> Tally:
    """A coded table fed through a `Tally` a unit at a time, in the table's unit order. `strata` maps a
    stratification's name to unit -> label (units missing from it: NO_STRATUM)."""
    tally = Tally(
        table.level,
        table.categories,
        scores=table.scores,
        declared=table.categories_declared,
        contested=contested,
    )
    for rater in table.raters:  # raters keep the table's order
        tally.rater_of.setdefault(rater, len(tally.rater_of))
    order = np.argsort(table.unit_index, kind="stable")
    units = table.unit_index[order]
    starts = np.flatnonzero(np.r_[True, units[1:] != units[:-1]]) if len(units) else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], len(units)] if len(units) else starts
    raters, codes = table.rater_index[order].tolist(), table.code[order].tolist()
    names = table.raters
    for unit_number, start, end in zip(units[starts].tolist(), starts.tolist(), ends.tolist(), strict=True):
        unit = table.units[unit_number]
        labels = (
            {name: str(mapping.get(unit, NO_STRATUM) or NO_STRATUM) for name, mapping in strata.items()}
            if strata
            else None
        )
        tally.add(unit, [names[rater] for rater in raters[start:end]], codes[start:end], labels)
    return tally


def judgments_fingerprint(table: RatingTable) -> str:
    """The table's judgments fingerprint (`Tally.fingerprint`)."""
    return table_tally(table, contested=0).fingerprint


@dataclass(frozen=True)
class _Basis:
    n_units: int  # judged at least twice
    n_raters: int
    n_judgments: int
    excluded_units: int

    def statistic(self, name: str, value: float | None, note: str = "", **extra: Any) -> Statistic:
        return Statistic(
            name=name,
            value=None if value is None else float(value),
            n_units=self.n_units,
            n_raters=self.n_raters,
            n_judgments=self.n_judgments,
            excluded_units=self.excluded_units,
            note=note,
            **extra,
        )


Measured = RatingTable | Profiles


def _profiles(data: Measured) -> Profiles:
    return data.profiles if isinstance(data, RatingTable) else data


def _basis(profiles: Profiles) -> _Basis:
    return _Basis(
        n_units=int(profiles.used_frequency.sum()),
        n_raters=profiles.raters_used,
        n_judgments=int(profiles.judged[profiles.used] @ profiles.used_frequency),
        excluded_units=int(profiles.frequency[profiles.judged == 1].sum()),
    )


def _no_pairs_reason(profiles: Profiles, basis: _Basis) -> str | None:
    if profiles.n_judgments == 0:
        return "No judgments."
    if profiles.n_raters < 2:
        return "Only one rater: agreement needs at least two raters."
    if basis.n_units == 0:
        return "No unit was judged by two or more raters, so there is nothing to compare."
    return None


def _no_variation_reason(profiles: Profiles, statistic: str) -> str | None:
    observed = np.flatnonzero(profiles.used_counts.sum(axis=0))
    if len(observed) < 2:
        value = profiles.categories[observed[0]] if len(observed) else None
        return (
            f"No variation: every judgment is {value!r}, so expected disagreement is zero and {statistic} is undefined."
        )
    return None


# The statistics


def krippendorff_alpha(data: Measured) -> Statistic:
    """Krippendorff's alpha at the level of measurement: the `krippendorff` package's formula (its coincidences
    and distances), summed over count profiles weighted by their units (tests hold it to the package's value)."""
    profiles = _profiles(data)
    basis = _basis(profiles)
    reason = _no_pairs_reason(profiles, basis) or _no_variation_reason(profiles, "alpha")
    if reason:
        return basis.statistic("krippendorff_alpha", None, reason)
    value = _weighted_alpha(profiles.used_frequency[None, :].astype(float), profiles.used_counts, profiles)[0]
    if math.isnan(value):
        return basis.statistic(
            "krippendorff_alpha", None, "Too many distinct ordinal values to compute alpha; declare a coarser scale."
        )
    return basis.statistic("krippendorff_alpha", float(value))


def percent_agreement(data: Measured) -> Statistic:
    """Observed agreement: per unit, the share of rater pairs that agree; averaged over units judged twice or more."""
    profiles = _profiles(data)
    basis = _basis(profiles)
    reason = _no_pairs_reason(profiles, basis)
    if reason:
        return basis.statistic("percent_agreement", None, reason)
    return basis.statistic("percent_agreement", _observed_agreement(profiles))


def _observed_agreement(profiles: Profiles) -> float:
    counts, frequency = profiles.used_counts, profiles.used_frequency
    judged = counts.sum(axis=1)
    per_profile = (counts * (counts - 1)).sum(axis=1) / (judged * (judged - 1))
    return float(per_profile @ frequency / frequency.sum())


def _prevalence(profiles: Profiles) -> FloatArray:
    """π_k: the mean over units of the share of a unit's ratings in category k (Gwet 2014, missing ratings)."""
    shares = profiles.counts / profiles.judged[:, None]
    return (profiles.frequency @ shares) / profiles.frequency.sum()


SINGLE_UNIT_NOTE = "Units judged once count towards category prevalence only, as in Gwet's formulas."


def fleiss_kappa(data: Measured) -> Statistic:
    """Fleiss' kappa; with missing ratings, Gwet's generalisation (p_e = Σ π_k²)."""
    profiles = _profiles(data)
    basis = _basis(profiles)
    reason = _no_pairs_reason(profiles, basis)
    if reason:
        return basis.statistic("fleiss_kappa", None, reason)
    agreement = _observed_agreement(profiles)
    chance = float((_prevalence(profiles) ** 2).sum())
    if chance >= 1 - 1e-12:
        return basis.statistic("fleiss_kappa", None, _no_variation_reason(profiles, "kappa") or "")
    note = SINGLE_UNIT_NOTE if basis.excluded_units else ""
    return basis.statistic("fleiss_kappa", (agreement - chance) / (1 - chance), note)


def gwet_ac1(data: Measured) -> Statistic:
    """Gwet's AC1 for nominal categories: p_e = Σ π_k(1 − π_k) / (q − 1), q the number of categories."""
    profiles = _profiles(data)
    basis = _basis(profiles)
    reason = _no_pairs_reason(profiles, basis)
    if reason:
        return basis.statistic("gwet_ac1", None, reason)
    q = len(profiles.categories)
    if q < 2:
        return basis.statistic(
            "gwet_ac1",
            None,
            f"Only one category ({profiles.categories[0]!r}) is known, so AC1 is undefined; "
            "declare the scale's categories to compute it.",
        )
    prevalence = _prevalence(profiles)
    agreement = _observed_agreement(profiles)
    chance = float((prevalence * (1 - prevalence)).sum() / (q - 1))
    notes = [f"q = {q} categories ({'declared' if profiles.categories_declared else 'observed'})."]
    if basis.excluded_units:
        notes.append(SINGLE_UNIT_NOTE)
    return basis.statistic("gwet_ac1", (agreement - chance) / (1 - chance), " ".join(notes))


def cohen_kappa(table: RatingTable, rater_a: Hashable, rater_b: Hashable) -> Statistic:
    """Cohen's (unweighted) kappa of two raters over the units both judged."""
    index = {rater: position for position, rater in enumerate(table.raters)}
    for rater in (rater_a, rater_b):
        if rater not in index:
            raise AgreementInputError(f"Unknown rater {rater!r}.", field="rater")
    pair = table.select_raters(index[rater_a], index[rater_b])
    matrix = pair.code_matrix()
    both = ~np.isnan(matrix).any(axis=0)
    a, b = matrix[:, both].astype(np.int64)
    if index[rater_a] > index[rater_b]:
        a, b = b, a
    n_categories = len(pair.categories)
    confusion = np.bincount(a * n_categories + b, minlength=n_categories**2).reshape(n_categories, n_categories)
    return _cohen_kappa(pair.profiles, confusion)


def _cohen_kappa(profiles: Profiles, confusion: IntArray) -> Statistic:
    """Cohen's kappa from two raters' confusion table (rows: the first rater's values); `profiles` are the units
    either of them judged."""
    basis = _basis(profiles)
    reason = _no_pairs_reason(profiles, basis)
    if reason:
        return basis.statistic("cohen_kappa", None, reason)
    total = confusion.sum()
    observed = np.trace(confusion) / total
    chance = float(confusion.sum(axis=1) @ confusion.sum(axis=0)) / total**2
    if chance >= 1 - 1e-12:
        return basis.statistic("cohen_kappa", None, _no_variation_reason(profiles, "kappa") or "")
    return basis.statistic("cohen_kappa", (observed - chance) / (1 - chance))


def rwg_j(data: Measured, *, options: int | None = None, star: bool = True) -> Statistic:
    """r*wg(j) (default) or James, Demaree & Wolf's rwg(j) over the units as the J items.

    `options` is A, the number of response options; by default the number of
    declared categories, else the observed range of integer ratings.
    """
    profiles = _profiles(data)
    name = "rwg_star_j" if star else "rwg_j"
    basis = _basis(profiles)
    reason = _no_pairs_reason(profiles, basis)
    if reason:
        return basis.statistic(name, None, reason)
    if profiles.scores is None:
        return basis.statistic(name, None, "Needs numeric ratings (ordinal, interval or ratio), not nominal ones.")
    options, source = _response_options(profiles, options)
    if options is None:
        return basis.statistic(name, None, source)
    null_variance = (options**2 - 1) / 12
    if source == "declared scale":  # uniform over the declared points, which need not be 1 apart
        null_variance = float(np.var(profiles.scores))
    counts, frequency = profiles.used_counts, profiles.used_frequency
    judged = counts.sum(axis=1).astype(float)
    sums, squares = counts @ profiles.scores, counts @ profiles.scores**2
    variances = np.clip((squares - sums**2 / judged) / (judged - 1), 0, None)
    ratio = float(variances @ frequency / frequency.sum()) / null_variance
    note = f"A = {options} response options ({source}); J = {basis.n_units} items."
    if star:
        value = 1 - ratio  # may be negative: more spread than random responding (Lindell et al. 1999)
    elif ratio >= 1:
        value = 0.0  # James et al. (1984) truncate observed variance at the random variance
        note += " Observed variance exceeds the random variance: truncated to 0."
    else:
        items = basis.n_units
        value = items * (1 - ratio) / (items * (1 - ratio) + ratio)
    return basis.statistic(name, value, note)


def _response_options(profiles: Profiles, options: int | None) -> tuple[int | None, str]:
    if options is not None:
        if options < 2:
            return None, "The number of response options must be at least 2."
        return options, "given"
    if profiles.categories_declared:
        if len(profiles.categories) < 2:
            return None, "The declared scale has fewer than two response options."
        return len(profiles.categories), "declared scale"
    assert profiles.scores is not None
    observed = profiles.scores[np.flatnonzero(profiles.counts.sum(axis=0))]
    if not np.all(observed == np.round(observed)):
        return None, "The number of response options is unknown for non-integer ratings: declare the scale."
    low, high = int(observed.min()), int(observed.max())
    if high == low:
        return None, f"Every rating is {low}: declare the scale to know the number of response options."
    return high - low + 1, f"inferred from the observed range {low}–{high}; declare the scale to be sure"


# Bootstrap


def alpha_bootstrap(
    data: Measured,
    *,
    replicates: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[float | None, float | None, int]:
    """Percentile interval of alpha over `replicates` unit resamples: (low, high, resamples used).

    Vectorised: units with the same value counts share one coincidence profile,
    so a resample is a weight per profile and alpha follows from weighted sums.
    """
    values = alpha_bootstrap_samples(data, replicates=replicates, seed=seed)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return None, None, 0
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high), len(values)


def alpha_bootstrap_samples(data: Measured, *, replicates: int, seed: int) -> FloatArray:
    """Alpha of each unit resample (NaN where a resample has no variation)."""
    profiles = _profiles(data)
    alphas = [_weighted_alpha(weights, counts, profiles) for weights, counts in _resamples(profiles, replicates, seed)]
    return np.concatenate(alphas) if alphas else np.empty(0)


def _resamples(data: Measured, replicates: int, seed: int) -> Iterator[tuple[FloatArray, IntArray]]:
    """Unit resamples as weights over count profiles, in chunks: (resamples × profiles weights, profiles).

    Units with the same value counts (a profile) are interchangeable, so drawing
    the U units judged at least twice with replacement is drawing how often
    each profile comes up: multinomial(U, profile frequency / U). That costs
    resamples × profiles instead of resamples × units.
    """
    profiles = _profiles(data)
    counts, frequency = profiles.used_counts, profiles.used_frequency
    units = int(frequency.sum())
    if replicates <= 0 or units == 0:
        return
    rng = np.random.default_rng(seed)
    chunk = max(1, min(replicates, 4_000_000 // len(counts)))
    done = 0
    while done < replicates:
        size = min(chunk, replicates - done)
        weights = rng.multinomial(units, frequency / units, size=size)
        yield weights.astype(float), counts
        done += size


def _weighted_alpha(weights: FloatArray, profiles: IntArray, scale: Profiles) -> FloatArray:
    """Alpha for each row of `weights` (how often each count profile was drawn).

    Observed disagreement is a weighted sum over profiles; expected disagreement
    follows from the value totals n_c. Nominal and interval use closed forms
    (Σ n_c(m − n_c) and 2(m·Σv² − (Σv)²)) so many distinct values stay cheap.
    """
    n_categories = profiles.shape[1]
    pairable = profiles.sum(axis=1).astype(float)
    totals = weights @ profiles  # resamples × categories: n_c
    n = totals.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if scale.level == "ordinal":
            if max(len(profiles), len(weights)) * n_categories**2 > MAX_CELLS:
                return np.full(len(weights), np.nan)
            diagonal = profiles[:, :, None] * np.eye(n_categories)[None]
            per_profile = (profiles[:, :, None] * profiles[:, None, :] - diagonal) / (pairable - 1)[:, None, None]
            coincidences = (weights @ per_profile.reshape(len(profiles), -1)).reshape(-1, n_categories, n_categories)
            distance = _ordinal_distances(totals)
            observed = (coincidences * distance).sum(axis=(1, 2))
            expected = (totals[:, :, None] * distance * totals[:, None, :]).sum(axis=(1, 2)) / (n - 1)
        elif scale.level == "nominal":
            observed = weights @ ((pairable**2 - (profiles**2).sum(axis=1)) / (pairable - 1))
            expected = (n**2 - (totals**2).sum(axis=1)) / (n - 1)
        elif scale.level == "interval":
            assert scale.scores is not None
            values = scale.scores - scale.scores.mean()  # distances do not change; the sums stay small
            per_profile = 2 * (pairable * (profiles @ values**2) - (profiles @ values) ** 2) / (pairable - 1)
            observed = weights @ per_profile
            expected = 2 * (n * (totals @ values**2) - (totals @ values) ** 2) / (n - 1)
        else:
            distance = _fixed_distances(scale)
            observed = weights @ (((profiles @ distance) * profiles).sum(axis=1) / (pairable - 1))
            expected = ((totals @ distance) * totals).sum(axis=1) / (n - 1)
        result = 1 - observed / expected
    result[(totals > 0).sum(axis=1) < 2] = np.nan  # a resample without variation has no alpha
    return result


def _fixed_distances(scale: Profiles) -> FloatArray:
    if scale.level == "nominal":
        return 1 - np.eye(len(scale.categories))
    assert scale.scores is not None
    v1, v2 = scale.scores[:, None], scale.scores[None, :]
    if scale.level == "interval":
        return (v1 - v2) ** 2
    total = v1 + v2
    return np.divide(v1 - v2, total, out=np.zeros_like(total * 1.0), where=total != 0) ** 2


def _ordinal_distances(totals: FloatArray) -> FloatArray:
    """Krippendorff's ordinal δ²_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)², one matrix per resample."""
    cumulative = np.cumsum(totals, axis=1)
    index = np.arange(totals.shape[1])
    low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
    between = cumulative[:, high] - cumulative[:, low] + totals[:, low]
    return (between - (totals[:, low] + totals[:, high]) / 2) ** 2


def _alpha_with_interval(profiles: Profiles, bootstrap: int, seed: int, confidence: float) -> Statistic:
    point = krippendorff_alpha(profiles)
    if point.value is None or bootstrap <= 0:
        return point
    low, high, used = alpha_bootstrap(profiles, replicates=bootstrap, seed=seed, confidence=confidence)
    if used:
        note = f"{confidence:.0%} interval from {used} of {bootstrap} bootstrap resamples."
    else:
        note = "No bootstrap interval: no resample had variation, or too many distinct ordinal values."
    return replace(point, ci_low=low, ci_high=high, note=" ".join(filter(None, [point.note, note])))


# Everything at once


@dataclass(frozen=True)
class PairResult:
    rater_a: Hashable
    rater_b: Hashable
    statistics: dict[str, Statistic]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rater_a": _json_value(self.rater_a),
            "rater_b": _json_value(self.rater_b),
            "statistics": {name: stat.to_dict() for name, stat in self.statistics.items()},
        }


@dataclass(frozen=True)
class StratumResult:
    label: str
    statistics: dict[str, Statistic]

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "statistics": {name: stat.to_dict() for name, stat in self.statistics.items()}}


@dataclass(frozen=True)
class AgreementSummary:
    level: str
    categories: tuple[Any, ...]
    n_units: int
    n_raters: int
    n_judgments: int
    excluded_units: int
    statistics: dict[str, Statistic]
    raters: tuple[Hashable, ...]
    pairs: tuple[PairResult, ...]
    strata: tuple[StratumResult, ...]
    bootstrap: dict[str, Any]
    notes: tuple[str, ...] = field(default=())
    fingerprint: str = ""
    contested: tuple[ContestedUnit, ...] = ()

    PAIR_STATISTICS = ("cohen_kappa", "krippendorff_alpha", "percent_agreement")

    def matrix(self, name: str) -> list[list[float | None]]:
        """Raters × raters values of a pair statistic (1.0 on the diagonal, None where undefined)."""
        position = {rater: index for index, rater in enumerate(self.raters)}
        size = len(self.raters)
        out: list[list[float | None]] = [[1.0 if i == j else None for j in range(size)] for i in range(size)]
        for pair in self.pairs:
            value = _json_float(pair.statistics[name].value)
            a, b = position[pair.rater_a], position[pair.rater_b]
            out[a][b] = out[b][a] = value
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "categories": [_json_value(category) for category in self.categories],
            "n_units": self.n_units,
            "n_raters": self.n_raters,
            "n_judgments": self.n_judgments,
            "excluded_units": self.excluded_units,
            "statistics": {name: stat.to_dict() for name, stat in self.statistics.items()},
            "raters": [_json_value(rater) for rater in self.raters],
            "pairs": [pair.to_dict() for pair in self.pairs],
            "matrices": {name: self.matrix(name) for name in self.PAIR_STATISTICS} if self.pairs else {},
            "strata": [stratum.to_dict() for stratum in self.strata],
            "bootstrap": dict(self.bootstrap),
            "notes": list(self.notes),
            "fingerprint": self.fingerprint,
            "contested_units": [unit.to_dict() for unit in self.contested],
        }

    def csv_rows(self) -> list[list[Any]]:
        return summary_csv_rows(self.to_dict())


CSV_HEADER = (
    "scope",
    "rater_a",
    "rater_b",
    "stratum",
    "statistic",
    "value",
    "ci_low",
    "ci_high",
    "n_units",
    "n_raters",
    "n_judgments",
    "excluded_units",
    "note",
)


def summary_csv_rows(summary: Mapping[str, Any]) -> list[list[Any]]:
    """One row per figure of `AgreementSummary.to_dict()`: overall, per rater pair, per stratum; header first."""
    rows: list[list[Any]] = [list(CSV_HEADER)]

    def add(scope: str, rater_a: Any, rater_b: Any, stratum: str, statistics: Mapping[str, Any]) -> None:
        for stat in statistics.values():
            values = ["" if stat[key] is None else stat[key] for key in CSV_HEADER[5:]]
            rows.append([scope, rater_a, rater_b, stratum, stat["name"], *values])

    add("overall", "", "", "", summary["statistics"])
    for pair in summary["pairs"]:
        add("pair", pair["rater_a"], pair["rater_b"], "", pair["statistics"])
    for stratum in summary["strata"]:
        add("stratum", "", "", stratum["label"], stratum["statistics"])
    return rows


CONTESTED_IN_SUMMARY = 50


@dataclass(frozen=True)
class ContestedUnit:
    """A unit the raters disagree on: the share of its rater pairs that agree, and who said what."""

    unit: Hashable
    n_judgments: int
    agreement: float
    spread: float | None  # sample variance of numeric ratings; None for nominal data
    values: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit": _json_value(self.unit),
            "n_judgments": self.n_judgments,
            "agreement": self.agreement,
            "spread": _json_float(self.spread),
            "values": self.values,
        }


def _table_statistics(
    profiles: Profiles, *, bootstrap: int, seed: int, confidence: float, options: int | None
) -> dict[str, Statistic]:
    statistics = {
        "krippendorff_alpha": _alpha_with_interval(profiles, bootstrap, seed, confidence),
        "percent_agreement": percent_agreement(profiles),
        "fleiss_kappa": fleiss_kappa(profiles),
        "gwet_ac1": gwet_ac1(profiles),
    }
    if profiles.scores is not None:
        statistics["rwg_star_j"] = rwg_j(profiles, options=options)
    return statistics


def _pairs(
    tally: Tally, *, bootstrap: int, seed: int, confidence: float, kappa_only: bool = False
) -> tuple[tuple[PairResult, ...], bool]:
    raters = tally.raters
    pairs = list(combinations(range(len(raters)), 2))
    with_intervals = len(pairs) <= MAX_PAIR_INTERVALS
    together = tally.pair_profiles()
    no_units = np.zeros((len(tally.categories),) * 2, dtype=np.int64)
    results = []
    for a, b in pairs:
        profiles, confusion = together.get((a, b)) or (tally.single_profiles(a, b), no_units)
        statistics = {"cohen_kappa": _cohen_kappa(profiles, confusion)}
        if not kappa_only:
            statistics["krippendorff_alpha"] = (
                _alpha_with_interval(profiles, bootstrap, seed, confidence)
                if with_intervals
                else krippendorff_alpha(profiles)
            )
            statistics["percent_agreement"] = percent_agreement(profiles)
        results.append(PairResult(raters[a], raters[b], statistics))
    return tuple(results), with_intervals


def contested_units(table: RatingTable, *, limit: int | None = None) -> list[ContestedUnit]:
    """Units judged at least twice where raters differ, most contested first.

    Order: lowest share of agreeing rater pairs, then (numeric levels) the widest
    spread, then the most judgments; ties keep the table's unit order.
    """
    return table_tally(table, contested=limit).contested_units()


def _mean_kappa(profiles: Profiles, pairs: Sequence[PairResult]) -> Statistic:
    basis = _basis(profiles)
    reason = _no_pairs_reason(profiles, basis)
    kappas = [pair.statistics["cohen_kappa"].value for pair in pairs]
    defined = [kappa for kappa in kappas if kappa is not None]
    if reason or not defined:
        return basis.statistic("cohen_kappa_mean", None, reason or "No rater pair has a defined Cohen's kappa.")
    note = f"Mean of {len(defined)} pairwise Cohen's kappas (Light 1971)."
    if len(defined) < len(kappas):
        note += f" {len(kappas) - len(defined)} pair(s) without a defined kappa left out."
    return basis.statistic("cohen_kappa_mean", float(np.mean(defined)), note)


STRATA_NAME = "stratum"  # the one stratification `agreement_summary(strata=...)` is given


def agreement_summary(
    judgments: Iterable[Sequence[Any]] | RatingTable | Tally,
    level: Level,
    *,
    strata: Mapping[Any, str] | None = None,
    categories: Sequence[Any] | None = None,
    options: int | None = None,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    pairwise: bool = True,
) -> AgreementSummary:
    """Every statistic overall, per rater pair and per stratum (`strata` maps unit → label).

    Units missing from `strata` form the stratum "(none)". `options` is the
    number of response options for r*wg(j) (default: the declared categories).
    `pairwise=False` leaves out the per-pair figures and matrices (and their
    cost); the mean pairwise kappa is still given. A `Tally` already holds its units (and its strata, computed
    by `tally_strata_statistics`).
    """
    if not isinstance(bootstrap, int) or not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise AgreementInputError(f"bootstrap must be a whole number from 0 to {MAX_BOOTSTRAP}.", field="bootstrap")
    if not 0 < confidence < 1:
        raise AgreementInputError("confidence must lie between 0 and 1.", field="confidence")
    if isinstance(judgments, Tally):
        tally = judgments
    else:
        table = (
            judgments if isinstance(judgments, RatingTable) else rating_table(judgments, level, categories=categories)
        )
        tally = table_tally(
            table, strata={STRATA_NAME: strata} if strata is not None else None, contested=CONTESTED_IN_SUMMARY
        )
    if tally.level != level:
        raise AgreementInputError(f"The table was coded at level {tally.level!r}, not {level!r}.", field="level")
    profiles = tally.profiles
    basis = _basis(profiles)
    statistics = _table_statistics(profiles, bootstrap=bootstrap, seed=seed, confidence=confidence, options=options)
    pairs, pair_intervals = _pairs(
        tally, bootstrap=bootstrap, seed=seed, confidence=confidence, kappa_only=not pairwise
    )
    statistics["cohen_kappa_mean"] = _mean_kappa(profiles, pairs)
    if not pairwise:
        pairs = ()
    notes = []
    if basis.excluded_units:
        notes.append(f"{basis.excluded_units} unit(s) judged only once were left out of the agreement figures.")
    if pairs and not pair_intervals:
        notes.append(f"{len(pairs)} rater pairs: pairwise alpha is shown without bootstrap intervals.")
    if tally.level != "nominal":
        notes.append("Percent agreement, kappas and AC1 compare values for equality (unweighted).")
    stratum_results = (
        tally_strata_statistics(
            tally, STRATA_NAME, bootstrap=bootstrap, seed=seed, confidence=confidence, options=options
        )
        if strata is not None and not isinstance(judgments, Tally)
        else ()
    )
    return AgreementSummary(
        fingerprint=tally.fingerprint,
        level=tally.level,
        categories=tally.categories,
        n_units=basis.n_units,
        n_raters=basis.n_raters,
        n_judgments=basis.n_judgments,
        excluded_units=basis.excluded_units,
        statistics=statistics,
        raters=tally.raters,
        pairs=pairs,
        strata=stratum_results,
        bootstrap={
            "replicates": bootstrap,
            "seed": seed,
            "confidence": confidence,
            "method": BOOTSTRAP_METHOD,
        },
        notes=tuple(notes),
        contested=tuple(tally.contested_units()[:CONTESTED_IN_SUMMARY]),
    )


def tally_strata_statistics(
    tally: Tally,
    name: str,
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    options: int | None = None,
) -> tuple[StratumResult, ...]:
    """The figures of each stratum of one stratification the tally was given, in sorted order of their labels."""
    return tuple(
        StratumResult(
            label, _table_statistics(part, bootstrap=bootstrap, seed=seed, confidence=confidence, options=options)
        )
        for label, part in tally.strata_profiles(name)
    )


def strata_statistics(
    table: RatingTable,
    strata: Mapping[Any, str],
    *,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    options: int | None = None,
) -> tuple[StratumResult, ...]:
    """The figures of each stratum (`strata` maps unit → label), as `agreement_summary(strata=...)` gives them.
    Units missing from `strata` form "(none)"."""
    tally = table_tally(table, strata={STRATA_NAME: strata}, contested=0)
    return tally_strata_statistics(
        tally, STRATA_NAME, bootstrap=bootstrap, seed=seed, confidence=confidence, options=options
    )
