"""Inter-rater agreement statistics: pure functions over judgments, no ORM.

Everything starts from a `RatingTable`, built from long-format judgments
(`rating_table([(unit, rater, value), ...], level)`) or from a raters × units
matrix with `np.nan` for missing ratings (`rating_table_from_matrix`, the
`krippendorff` package's layout). Each statistic takes the table and returns a
`Statistic`: the value (None when undefined, with the reason in `note`) and the
counts behind it. `agreement_summary` computes all of them at once, overall,
per rater pair and per stratum.

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
import json
import math
import numbers
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import combinations
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
PACKAGE_MAX_CELLS = 20_000_000  # units × categories²: the krippendorff package's intermediate array
SLICE_CELLS = 250_000  # units × categories² of the package's coincidence sum taken at a time (2 MB an array)
FINGERPRINT_BLOCK = 65_536  # names or judgments hashed at a time
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
        """`judgments_fingerprint`, once per table: a report hashes a scope's table before it computes it."""
        return judgments_fingerprint(self)

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


def _name_texts(names: Sequence[Any]) -> npt.NDArray[Any]:
    """Each name as JSON text. Whole numbers (database ids) as their decimal text in fixed-width bytes: ASCII, so
    they sort in the order of the texts, at 21 bytes a name where a str object takes about 60."""
    if all(type(name) is int for name in names):
        try:
            return np.array(names, dtype=np.int64).astype("S")
        except OverflowError:  # beyond 64 bits: not a database id; the texts below
            pass
    return np.array([json.dumps(_json_value(name), ensure_ascii=False) for name in names], dtype=object)


def _digest_names(digest: Any, names: Sequence[Any]) -> IntArray:
    """Hash the names' texts in sorted order, tab-separated, a line; return each name's rank in that order."""
    texts = _name_texts(names)
    order = np.argsort(texts, kind="stable")
    rank = np.empty(len(texts), dtype=np.int64)
    rank[order] = np.arange(len(texts))
    for start in range(0, len(order), FINGERPRINT_BLOCK):
        block = texts[order[start : start + FINGERPRINT_BLOCK]].tolist()
        text = b"\t".join(block) if texts.dtype.kind == "S" else "\t".join(block).encode()
        digest.update(b"\t" + text if start else text)
    digest.update(b"\n")
    return rank


def judgments_fingerprint(table: RatingTable) -> str:
    """sha256 of the level, the scale and the judgments, whatever their order: the same data, the same fingerprint.

    The judgments are hashed as (unit, rater, category) rank triples in sorted order. Each triple is sorted as one
    number, unit · raters · categories + rater · categories + category (below 2^63: `_check_size` bounds units ×
    categories at 50 million), and hashed a block at a time: 8 bytes a judgment where the triples took 56."""
    digest = hashlib.sha256(f"level\t{table.level}\n".encode())
    unit_rank, rater_rank, code_rank = (
        _digest_names(digest, names) for names in (table.units, table.raters, table.categories)
    )
    raters, categories = max(len(table.raters), 1), max(len(table.categories), 1)
    key = unit_rank[table.unit_index]
    key *= raters
    key += rater_rank[table.rater_index]
    key *= categories
    key += code_rank[table.code]
    key.sort()
    for start in range(0, len(key), FINGERPRINT_BLOCK):
        block = key[start : start + FINGERPRINT_BLOCK]
        triples = np.stack([block // (raters * categories), block // categories % raters, block % categories], axis=1)
        digest.update(triples.astype("<i8").tobytes())
    return "sha256:" + digest.hexdigest()


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


@dataclass(frozen=True)
class _Basis:
    used: npt.NDArray[np.bool_]  # per unit: judged at least twice
    n_units: int
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


def _basis(table: RatingTable) -> _Basis:
    per_unit = table.judgments_per_unit
    used = per_unit >= 2
    judged = used[table.unit_index]
    return _Basis(
        used=used,
        n_units=int(used.sum()),
        n_raters=len(np.unique(table.rater_index[judged])),
        n_judgments=int(per_unit[used].sum()),
        excluded_units=int((per_unit == 1).sum()),
    )


def _used_counts(table: RatingTable, basis: _Basis) -> IntArray:
    """The count rows (`RatingTable.counts`) of the units judged at least twice: the table's own rows, not a copy,
    when every unit was (a big table's copy would be held beside it at every statistic). Read only."""
    return table.counts if basis.n_units == len(table.units) else table.counts[basis.used]


def _no_pairs_reason(table: RatingTable, basis: _Basis) -> str | None:
    if table.n_judgments == 0:
        return "No judgments."
    if len(table.raters) < 2:
        return "Only one rater: agreement needs at least two raters."
    if basis.n_units == 0:
        return "No unit was judged by two or more raters, so there is nothing to compare."
    return None


def _no_variation_reason(table: RatingTable, basis: _Basis, statistic: str) -> str | None:
    observed = np.flatnonzero(_used_counts(table, basis).sum(axis=0))
    if len(observed) < 2:
        value = table.categories[observed[0]] if len(observed) else None
        return (
            f"No variation: every judgment is {value!r}, so expected disagreement is zero and {statistic} is undefined."
        )
    return None


# The statistics


def krippendorff_alpha(table: RatingTable) -> Statistic:
    """Krippendorff's alpha at the table's level of measurement, by the `krippendorff` package."""
    basis = _basis(table)
    reason = _no_pairs_reason(table, basis) or _no_variation_reason(table, basis, "alpha")
    if reason:
        return basis.statistic("krippendorff_alpha", None, reason)
    counts = _used_counts(table, basis)
    if len(counts) * len(table.categories) ** 2 <= PACKAGE_MAX_CELLS:
        value = _package_alpha(counts, _alpha_domain(table), table.level)
        return basis.statistic("krippendorff_alpha", float(value))
    # The package holds a units × values × values array; with many distinct values that does not fit.
    profiles, frequency = np.unique(counts, axis=0, return_counts=True)
    value = _weighted_alpha(frequency[None, :].astype(float), profiles, table)[0]
    note = "Computed by localqa's vectorised form of the package's formula (too many distinct values for it)."
    return basis.statistic("krippendorff_alpha", None if math.isnan(value) else float(value), note)


def _package_alpha(counts: IntArray, domain: FloatArray, level: Level) -> float:
    """`krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level)`, step by step
    as the package (0.9) takes it, but with its units × values² coincidence array made a slice of units at a time.

    The package sums that array over units in order (numpy adds along the first axis one row after the other);
    each slice's sum starts from the total so far, so the additions, their order and the number are the same,
    while the memory is a slice's (that array was 128 MB per table for 40,000 units of 20 topics).
    """
    n_values = counts.shape[1]
    eye = np.eye(n_values)[np.newaxis, ...]
    step = max(1, SLICE_CELLS // max(n_values**2, 1))
    coincidences: FloatArray | None = None
    for start in range(0, len(counts), step):
        part = counts[start : start + step]
        pairable = np.maximum(part.sum(axis=1), 2)
        diagonals = part[:, np.newaxis, :] * eye
        unnormalized = part[..., np.newaxis] * part[:, np.newaxis, :] - diagonals
        terms = np.divide(unnormalized, (pairable - 1).reshape((-1, 1, 1)), dtype=np.float64)
        if coincidences is not None:
            terms = np.concatenate([coincidences[np.newaxis], terms])
        coincidences = terms.sum(axis=0)
    assert coincidences is not None
    totals = coincidences.sum(axis=0)
    expected = np.divide(np.outer(totals, totals) - np.diagflat(totals), totals.sum() - 1, dtype=np.float64)
    distances = _package_distances(domain, totals, level)
    return float(1 - (coincidences * distances).sum() / (expected * distances).sum())


def _package_distances(domain: FloatArray, totals: FloatArray, level: Level) -> FloatArray:
    """The package's distance of every pair of values (its `_distances` with its metric of each level)."""
    v1, v2 = domain[:, np.newaxis], domain[np.newaxis, :]
    if level == "nominal":
        return (v1 != v2).astype(np.float64)
    if level == "interval":
        return (v1 - v2).astype(np.float64) ** 2
    if level == "ratio":
        total = v1 + v2
        return np.divide(v1 - v2, total, out=np.zeros(np.broadcast(v1, v2).shape), where=total != 0) ** 2
    indices = np.arange(len(domain))
    i1, i2 = (
        np.minimum(indices[:, np.newaxis], indices[np.newaxis, :]),
        np.maximum(indices[:, np.newaxis], indices[np.newaxis, :]),
    )
    ranges = np.dstack((i1, i2 + 1))
    between = np.add.reduceat(np.append(totals, 0), ranges.reshape(-1))[::2].reshape(*i1.shape)
    return (between - np.divide(totals[i1] + totals[i2], 2, dtype=np.float64)) ** 2


def _alpha_domain(table: RatingTable) -> FloatArray:
    if table.level in ("interval", "ratio"):
        assert table.scores is not None
        return table.scores
    return np.arange(len(table.categories), dtype=float)  # nominal: labels; ordinal: only the order matters


def percent_agreement(table: RatingTable) -> Statistic:
    """Observed agreement: per unit, the share of rater pairs that agree; averaged over units judged twice or more."""
    basis = _basis(table)
    reason = _no_pairs_reason(table, basis)
    if reason:
        return basis.statistic("percent_agreement", None, reason)
    return basis.statistic("percent_agreement", _observed_agreement(_used_counts(table, basis)))


def _observed_agreement(counts: IntArray) -> float:
    judged = counts.sum(axis=1)
    return float(((counts * (counts - 1)).sum(axis=1) / (judged * (judged - 1))).mean())


def _prevalence(table: RatingTable) -> FloatArray:
    """π_k: the mean over units of the share of a unit's ratings in category k (Gwet 2014, missing ratings)."""
    counts = table.counts
    return (counts / counts.sum(axis=1, keepdims=True)).mean(axis=0)


SINGLE_UNIT_NOTE = "Units judged once count towards category prevalence only, as in Gwet's formulas."


def fleiss_kappa(table: RatingTable) -> Statistic:
    """Fleiss' kappa; with missing ratings, Gwet's generalisation (p_e = Σ π_k²)."""
    basis = _basis(table)
    reason = _no_pairs_reason(table, basis)
    if reason:
        return basis.statistic("fleiss_kappa", None, reason)
    agreement = _observed_agreement(_used_counts(table, basis))
    chance = float((_prevalence(table) ** 2).sum())
    if chance >= 1 - 1e-12:
        return basis.statistic("fleiss_kappa", None, _no_variation_reason(table, basis, "kappa") or "")
    note = SINGLE_UNIT_NOTE if basis.excluded_units else ""
    return basis.statistic("fleiss_kappa", (agreement - chance) / (1 - chance), note)


def gwet_ac1(table: RatingTable) -> Statistic:
    """Gwet's AC1 for nominal categories: p_e = Σ π_k(1 − π_k) / (q − 1), q the number of categories."""
    basis = _basis(table)
    reason = _no_pairs_reason(table, basis)
    if reason:
        return basis.statistic("gwet_ac1", None, reason)
    q = len(table.categories)
    if q < 2:
        return basis.statistic(
            "gwet_ac1",
            None,
            f"Only one category ({table.categories[0]!r}) is known, so AC1 is undefined; "
            "declare the scale's categories to compute it.",
        )
    prevalence = _prevalence(table)
    agreement = _observed_agreement(_used_counts(table, basis))
    chance = float((prevalence * (1 - prevalence)).sum() / (q - 1))
    notes = [f"q = {q} categories ({'declared' if table.categories_declared else 'observed'})."]
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
    return _cohen_kappa(pair, index[rater_a] < index[rater_b])


def _cohen_kappa(pair: RatingTable, first_is_a: bool = True) -> Statistic:
    basis = _basis(pair)
    reason = _no_pairs_reason(pair, basis)
    if reason:
        return basis.statistic("cohen_kappa", None, reason)
    matrix = pair.code_matrix()
    both = ~np.isnan(matrix).any(axis=0)
    a, b = matrix[:, both].astype(np.int64)
    if not first_is_a:
        a, b = b, a
    n_categories = len(pair.categories)
    confusion = np.bincount(a * n_categories + b, minlength=n_categories**2).reshape(n_categories, n_categories)
    total = confusion.sum()
    observed = np.trace(confusion) / total
    chance = float(confusion.sum(axis=1) @ confusion.sum(axis=0)) / total**2
    if chance >= 1 - 1e-12:
        return basis.statistic("cohen_kappa", None, _no_variation_reason(pair, basis, "kappa") or "")
    return basis.statistic("cohen_kappa", (observed - chance) / (1 - chance))


def rwg_j(table: RatingTable, *, options: int | None = None, star: bool = True) -> Statistic:
    """r*wg(j) (default) or James, Demaree & Wolf's rwg(j) over the table's units as the J items.

    `options` is A, the number of response options; by default the number of
    declared categories, else the observed range of integer ratings.
    """
    name = "rwg_star_j" if star else "rwg_j"
    basis = _basis(table)
    reason = _no_pairs_reason(table, basis)
    if reason:
        return basis.statistic(name, None, reason)
    if table.scores is None:
        return basis.statistic(name, None, "Needs numeric ratings (ordinal, interval or ratio), not nominal ones.")
    options, source = _response_options(table, options)
    if options is None:
        return basis.statistic(name, None, source)
    null_variance = (options**2 - 1) / 12
    if source == "declared scale":  # uniform over the declared points, which need not be 1 apart
        assert table.scores is not None
        null_variance = float(np.var(table.scores))
    scores = table.scores[table.code]
    per_unit = table.judgments_per_unit.astype(float)
    sums = np.bincount(table.unit_index, weights=scores, minlength=len(table.units))
    squares = np.bincount(table.unit_index, weights=scores**2, minlength=len(table.units))
    used = basis.used
    variances = (squares[used] - sums[used] ** 2 / per_unit[used]) / (per_unit[used] - 1)
    ratio = float(np.clip(variances, 0, None).mean()) / null_variance
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


def _response_options(table: RatingTable, options: int | None) -> tuple[int | None, str]:
    if options is not None:
        if options < 2:
            return None, "The number of response options must be at least 2."
        return options, "given"
    if table.categories_declared:
        if len(table.categories) < 2:
            return None, "The declared scale has fewer than two response options."
        return len(table.categories), "declared scale"
    assert table.scores is not None
    observed = table.scores[np.unique(table.code)]
    if not np.all(observed == np.round(observed)):
        return None, "The number of response options is unknown for non-integer ratings: declare the scale."
    low, high = int(observed.min()), int(observed.max())
    if high == low:
        return None, f"Every rating is {low}: declare the scale to know the number of response options."
    return high - low + 1, f"inferred from the observed range {low}–{high}; declare the scale to be sure"


# Bootstrap


def alpha_bootstrap(
    table: RatingTable,
    *,
    replicates: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[float | None, float | None, int]:
    """Percentile interval of alpha over `replicates` unit resamples: (low, high, resamples used).

    Vectorised: units with the same value counts share one coincidence profile,
    so a resample is a weight per profile and alpha follows from weighted sums.
    """
    values = alpha_bootstrap_samples(table, replicates=replicates, seed=seed)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return None, None, 0
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high), len(values)


def alpha_bootstrap_samples(table: RatingTable, *, replicates: int, seed: int) -> FloatArray:
    """Alpha of each unit resample (NaN where a resample has no variation)."""
    alphas = [_weighted_alpha(weights, profiles, table) for weights, profiles in _resamples(table, replicates, seed)]
    return np.concatenate(alphas) if alphas else np.empty(0)


def _resamples(table: RatingTable, replicates: int, seed: int) -> Iterator[tuple[FloatArray, IntArray]]:
    """Unit resamples as weights over count profiles, in chunks: (resamples × profiles weights, profiles).

    Units with the same value counts (a profile) are interchangeable, so drawing
    the U units judged at least twice with replacement is drawing how often
    each profile comes up: multinomial(U, profile frequency / U). That costs
    resamples × profiles instead of resamples × units.
    """
    counts = _used_counts(table, _basis(table))
    if replicates <= 0 or len(counts) == 0:
        return
    profiles, frequency = np.unique(counts, axis=0, return_counts=True)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(replicates, 4_000_000 // len(profiles)))
    done = 0
    while done < replicates:
        size = min(chunk, replicates - done)
        weights = rng.multinomial(len(counts), frequency / len(counts), size=size)
        yield weights.astype(float), profiles
        done += size


def _weighted_alpha(weights: FloatArray, profiles: IntArray, table: RatingTable) -> FloatArray:
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
        if table.level == "ordinal":
            if max(len(profiles), len(weights)) * n_categories**2 > MAX_CELLS:
                return np.full(len(weights), np.nan)
            diagonal = profiles[:, :, None] * np.eye(n_categories)[None]
            per_profile = (profiles[:, :, None] * profiles[:, None, :] - diagonal) / (pairable - 1)[:, None, None]
            coincidences = (weights @ per_profile.reshape(len(profiles), -1)).reshape(-1, n_categories, n_categories)
            distance = _ordinal_distances(totals)
            observed = (coincidences * distance).sum(axis=(1, 2))
            expected = (totals[:, :, None] * distance * totals[:, None, :]).sum(axis=(1, 2)) / (n - 1)
        elif table.level == "nominal":
            observed = weights @ ((pairable**2 - (profiles**2).sum(axis=1)) / (pairable - 1))
            expected = (n**2 - (totals**2).sum(axis=1)) / (n - 1)
        elif table.level == "interval":
            assert table.scores is not None
            values = table.scores - table.scores.mean()  # distances do not change; the sums stay small
            per_profile = 2 * (pairable * (profiles @ values**2) - (profiles @ values) ** 2) / (pairable - 1)
            observed = weights @ per_profile
            expected = 2 * (n * (totals @ values**2) - (totals @ values) ** 2) / (n - 1)
        else:
            distance = _fixed_distances(table)
            observed = weights @ (((profiles @ distance) * profiles).sum(axis=1) / (pairable - 1))
            expected = ((totals @ distance) * totals).sum(axis=1) / (n - 1)
        result = 1 - observed / expected
    result[(totals > 0).sum(axis=1) < 2] = np.nan  # a resample without variation has no alpha
    return result


def _fixed_distances(table: RatingTable) -> FloatArray:
    if table.level == "nominal":
        return 1 - np.eye(len(table.categories))
    assert table.scores is not None
    v1, v2 = table.scores[:, None], table.scores[None, :]
    if table.level == "interval":
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


def _alpha_with_interval(table: RatingTable, bootstrap: int, seed: int, confidence: float) -> Statistic:
    point = krippendorff_alpha(table)
    if point.value is None or bootstrap <= 0:
        return point
    low, high, used = alpha_bootstrap(table, replicates=bootstrap, seed=seed, confidence=confidence)
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


def _table_statistics(
    table: RatingTable, *, bootstrap: int, seed: int, confidence: float, options: int | None
) -> dict[str, Statistic]:
    statistics = {
        "krippendorff_alpha": _alpha_with_interval(table, bootstrap, seed, confidence),
        "percent_agreement": percent_agreement(table),
        "fleiss_kappa": fleiss_kappa(table),
        "gwet_ac1": gwet_ac1(table),
    }
    if table.scores is not None:
        statistics["rwg_star_j"] = rwg_j(table, options=options)
    return statistics


def _pairs(
    table: RatingTable, *, bootstrap: int, seed: int, confidence: float, kappa_only: bool = False
) -> tuple[tuple[PairResult, ...], bool]:
    pairs = list(combinations(range(len(table.raters)), 2))
    with_intervals = len(pairs) <= MAX_PAIR_INTERVALS
    results = []
    for a, b in pairs:
        pair = table.select_raters(a, b)
        statistics = {"cohen_kappa": _cohen_kappa(pair)}
        if not kappa_only:
            statistics["krippendorff_alpha"] = (
                _alpha_with_interval(pair, bootstrap, seed, confidence) if with_intervals else krippendorff_alpha(pair)
            )
            statistics["percent_agreement"] = percent_agreement(pair)
        results.append(PairResult(table.raters[a], table.raters[b], statistics))
    return tuple(results), with_intervals


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


def contested_units(table: RatingTable, *, limit: int | None = None) -> list[ContestedUnit]:
    """Units judged at least twice where raters differ, most contested first.

    Order: lowest share of agreeing rater pairs, then (numeric levels) the widest
    spread, then the most judgments; ties keep the table's unit order.
    """
    counts = table.counts
    judged = table.judgments_per_unit
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = (counts * (counts - 1)).sum(axis=1) / (judged * (judged - 1))
    candidates = np.flatnonzero((judged >= 2) & (agreement < 1))
    spread = np.zeros(len(table.units))
    if table.scores is not None:
        scores = table.scores[table.code]
        sums = np.bincount(table.unit_index, weights=scores, minlength=len(table.units))
        squares = np.bincount(table.unit_index, weights=scores**2, minlength=len(table.units))
        with np.errstate(divide="ignore", invalid="ignore"):
            spread = np.clip((squares - sums**2 / judged) / (judged - 1), 0, None)
    order = candidates[np.lexsort((-judged[candidates], -spread[candidates], agreement[candidates]))]
    if limit is not None:
        order = order[:limit]
    return [
        ContestedUnit(
            unit=table.units[u],
            n_judgments=int(judged[u]),
            agreement=float(agreement[u]),
            spread=float(spread[u]) if table.scores is not None else None,
            values={str(_json_value(table.categories[c])): int(counts[u, c]) for c in np.flatnonzero(counts[u])},
        )
        for u in order
    ]


def _mean_kappa(table: RatingTable, pairs: Sequence[PairResult]) -> Statistic:
    basis = _basis(table)
    reason = _no_pairs_reason(table, basis)
    kappas = [pair.statistics["cohen_kappa"].value for pair in pairs]
    defined = [kappa for kappa in kappas if kappa is not None]
    if reason or not defined:
        return basis.statistic("cohen_kappa_mean", None, reason or "No rater pair has a defined Cohen's kappa.")
    note = f"Mean of {len(defined)} pairwise Cohen's kappas (Light 1971)."
    if len(defined) < len(kappas):
        note += f" {len(kappas) - len(defined)} pair(s) without a defined kappa left out."
    return basis.statistic("cohen_kappa_mean", float(np.mean(defined)), note)


def agreement_summary(
    judgments: Iterable[Sequence[Any]] | RatingTable,
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
    cost); the mean pairwise kappa is still given.
    """
    if not isinstance(bootstrap, int) or not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise AgreementInputError(f"bootstrap must be a whole number from 0 to {MAX_BOOTSTRAP}.", field="bootstrap")
    if not 0 < confidence < 1:
        raise AgreementInputError("confidence must lie between 0 and 1.", field="confidence")
    table = judgments if isinstance(judgments, RatingTable) else rating_table(judgments, level, categories=categories)
    if table.level != level:
        raise AgreementInputError(f"The table was coded at level {table.level!r}, not {level!r}.", field="level")
    basis = _basis(table)
    statistics = _table_statistics(table, bootstrap=bootstrap, seed=seed, confidence=confidence, options=options)
    pairs, pair_intervals = _pairs(
        table, bootstrap=bootstrap, seed=seed, confidence=confidence, kappa_only=not pairwise
    )
    statistics["cohen_kappa_mean"] = _mean_kappa(table, pairs)
    if not pairwise:
        pairs = ()
    notes = []
    if basis.excluded_units:
        notes.append(f"{basis.excluded_units} unit(s) judged only once were left out of the agreement figures.")
    if pairs and not pair_intervals:
        notes.append(f"{len(pairs)} rater pairs: pairwise alpha is shown without bootstrap intervals.")
    if table.level != "nominal":
        notes.append("Percent agreement, kappas and AC1 compare values for equality (unweighted).")
    stratum_results = (
        strata_statistics(table, strata, bootstrap=bootstrap, seed=seed, confidence=confidence, options=options)
        if strata is not None
        else ()
    )
    return AgreementSummary(
        fingerprint=table.fingerprint,
        level=table.level,
        categories=table.categories,
        n_units=basis.n_units,
        n_raters=basis.n_raters,
        n_judgments=basis.n_judgments,
        excluded_units=basis.excluded_units,
        statistics=statistics,
        raters=table.raters,
        pairs=pairs,
        strata=stratum_results,
        bootstrap={
            "replicates": bootstrap,
            "seed": seed,
            "confidence": confidence,
            "method": BOOTSTRAP_METHOD,
        },
        notes=tuple(notes),
        contested=tuple(contested_units(table, limit=CONTESTED_IN_SUMMARY)),
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

    For a second or third way of stratifying the same table without computing
    the overall and per-pair figures again. Units missing from `strata` form "(none)".
    """
    labels = np.array([str(strata.get(unit, NO_STRATUM) or NO_STRATUM) for unit in table.units], dtype=object)
    results = []
    for label in _sorted_values(labels.tolist()):
        part = table.select_units(labels == label)
        statistics = _table_statistics(part, bootstrap=bootstrap, seed=seed, confidence=confidence, options=options)
        results.append(StratumResult(label, statistics))
    return tuple(results)
