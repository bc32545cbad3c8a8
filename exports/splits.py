"""Train/dev/test splits of a release: one function for every kind, used by the preview and by the build.

A release's items come in groups that must not cross splits (a Wikipedia page pair, an entity, a set of
duplicates; a trivia item is a group of its own). Each kind says what its groups are and how many items
each holds (`ProjectKind.release_units`); `release_split_plan` shares the items out:

- sizes are the largest-remainder shares of the released items (6 items at 70/10/20 are 4/1/1), as exact
  as whole groups allow;
- a group that was in the latest published release with the same seed and shares keeps its split (read from
  that release's manifest, `split_assignment`): a test item never becomes a training item in the next version;
- the other groups are taken in an order drawn from the seed (`blake2b(seed:group)`), each into the split
  that still needs at least half of it and is furthest from its size in proportion (else the one that needs
  the most), so new groups fill what the sizes still need and a small split is not starved. Singletons give
  the sizes exactly; the same seed and the same items give the same splits.

The readiness preview (exports.readiness) and the writers call the same plan with the same seed, so what a
coordinator is shown is what gets built; what a kind leaves out is counted in `left_out`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import ijson
import numpy as np

SPLIT_NAMES = ("train", "dev", "test")
NO_SPLIT = -1  # a group's split number where it has none


def split_sizes(total: int, shares: Mapping[str, int]) -> dict[str, int]:
    """`total` shared out by `shares` exactly (largest remainder): 200 at 70/10/20 is 140/20/40, 6 is 4/1/1."""
    names = [name for name in SPLIT_NAMES if shares.get(name)] + sorted(set(shares) - set(SPLIT_NAMES))
    names = [name for name in names if shares.get(name)]
    weight = sum(shares[name] for name in names)
    if not names or weight <= 0:
        return {}
    exact = {name: total * shares[name] / weight for name in names}
    sizes = {name: int(exact[name]) for name in names}
    short = total - sum(sizes.values())
    # Ties go to the split named first, so the same numbers always give the same sizes.
    for name in sorted(names, key=lambda n: (-(exact[n] - sizes[n]), names.index(n)))[:short]:
        sizes[name] += 1
    return sizes


def _draw(seed: int, key: Any) -> bytes:
    return hashlib.blake2b(f"{seed}:{key}".encode(), digest_size=8).digest()


@dataclass
class GroupSplits:
    """Each group's split: the group keys in ascending order and, at the same place, the number of its split in
    `names` (-1: none). Arrays, not a dict: a big release has a group per page pair, and a dict entry and a Python
    integer each were most of what its build held (about 0.1 KB a group against 9 bytes)."""

    names: tuple[str, ...]
    keys: np.ndarray  # int64, ascending
    codes: np.ndarray  # int8

    def get(self, key: int) -> str | None:
        at = int(np.searchsorted(self.keys, key))
        if at < len(self.keys) and self.keys[at] == key and self.codes[at] != NO_SPLIT:
            return self.names[self.codes[at]]
        return None

    def items(self) -> Iterator[tuple[int, str]]:
        """(group key, split) of every group with a split, by ascending key."""
        for key, code in zip(self.keys.tolist(), self.codes.tolist(), strict=True):
            if code != NO_SPLIT:
                yield key, self.names[code]

    def sizes(self, group_sizes: np.ndarray) -> dict[str, int]:
        """Items per split, every split named (0 when empty); `group_sizes` is the items of each group."""
        coded = self.codes != NO_SPLIT
        counts = np.bincount(self.codes[coded], weights=group_sizes[coded], minlength=len(self.names))
        return {name: int(counts[number]) for number, name in enumerate(self.names)}


@dataclass
class ReleaseUnits:
    """What a kind releases, before splitting: its groups (an integer key each, ascending, and its items) and the
    items it leaves out (why → n)."""

    unit: str  # what a group is, for people: "page pair", "entity", "item", "group of duplicates"
    keys: np.ndarray  # int64, ascending, each once
    sizes: np.ndarray  # int64: the items of each group
    left_out: dict[str, int] = field(default_factory=dict)

    @classmethod
    def counted(
        cls, unit: str, rows: Iterable[tuple[int, int]], left_out: dict[str, int] | None = None
    ) -> ReleaseUnits:
        """From (group key, items) rows in any order, read one at a time; a key given twice has its items added."""
        table = np.fromiter(rows, dtype=[("key", np.int64), ("size", np.int64)])
        table.sort(order="key")
        first = np.flatnonzero(np.r_[True, table["key"][1:] != table["key"][:-1]]) if len(table) else np.arange(0)
        sizes = np.add.reduceat(table["size"], first) if len(table) else np.zeros(0, dtype=np.int64)
        return cls(unit, table["key"][first], sizes, left_out or {})

    @property
    def items(self) -> int:
        return int(self.sizes.sum())


def split_assign(
    units: ReleaseUnits, shares: Mapping[str, int], seed: int, previous: GroupSplits | None = None
) -> GroupSplits:
    """Each group's split, whole groups only; see the module's docstring.

    `previous` is the assignment of the release before, made with the same seed and shares: its groups keep their
    split, and the new groups fill what the sizes still need.
    """
    sizes = split_sizes(units.items, shares)
    names = tuple(sizes)
    codes = np.full(len(units.keys), NO_SPLIT, dtype=np.int8)
    if not sizes:
        return GroupSplits(names, units.keys, codes)
    if previous is not None and len(previous.keys):
        # A previous split's number here (-1 where these shares have no such split).
        renumber = np.array([names.index(name) if name in names else NO_SPLIT for name in previous.names] + [NO_SPLIT])
        at = np.minimum(np.searchsorted(previous.keys, units.keys), len(previous.keys) - 1)
        found = previous.keys[at] == units.keys
        codes[found] = renumber[previous.codes[at[found]]]  # a previous -1 takes renumber's last entry, -1
    need = {name: sizes[name] - int(units.sizes[codes == number].sum()) for number, name in enumerate(names)}
    for index in _drawn_order(seed, units.keys, np.flatnonzero(codes == NO_SPLIT)):
        size = int(units.sizes[index])
        fits = [name for name in names if need[name] > 0 and need[name] * 2 >= size]
        if fits:  # the split furthest from its size, in proportion: small splits are not starved
            split = max(fits, key=lambda name: (need[name] / sizes[name], -names.index(name)))
        else:
            split = max(names, key=lambda name: (need[name], -names.index(name)))
        need[split] -= size
        codes[index] = names.index(split)
    return GroupSplits(names, units.keys, codes)


def _drawn_order(seed: int, keys: np.ndarray, indexes: np.ndarray) -> np.ndarray:
    """`indexes` (of `keys`) in the order drawn from `seed`: by `_draw` (its 8 bytes read as a big-endian number
    sort as the bytes do), equal draws (8 bytes: about never) by the key's text."""
    draws = np.fromiter(
        (int.from_bytes(_draw(seed, int(key)), "big") for key in keys[indexes]), dtype=np.uint64, count=len(indexes)
    )
    ranked = np.argsort(draws, kind="stable")
    if (np.diff(draws[ranked]) == 0).any():
        ties = sorted(indexes.tolist(), key=lambda index: (_draw(seed, int(keys[index])), str(int(keys[index]))))
        return np.array(ties, dtype=np.int64)
    return indexes[ranked]


@dataclass
class SplitPlan:
    """The split of every group of a release, and the sizes that follow (what the preview shows, what is built).

    What it says of the groups (how many, their items, what was left out) is counted when it is made: the build
    holds the plan while it writes."""

    shares: dict[str, int]
    seed: int | None
    unit: str  # what a group is (ReleaseUnits.unit)
    groups: int
    items: int
    left_out: dict[str, int]
    # Items per split, every split of the shares named (0 when empty); without a seed, the target sizes.
    sizes: dict[str, int]
    assignment: GroupSplits | None = None  # None: no splits drawn (no seed or no shares)

    def split_of(self, key: int) -> str | None:
        """The split of a group (None without splits, or for a group the plan does not release)."""
        return self.assignment.get(key) if self.assignment is not None else None

    @property
    def target(self) -> dict[str, int]:
        """The largest-remainder sizes the shares ask for (the plan's sizes differ only where groups are whole)."""
        return split_sizes(self.items, self.shares)

    def describe(self) -> str:
        """ "train 4, dev 1, test 1 (of 6 items, 3 page pairs; 2 left out: …)", as the preview and the card say it."""
        parts = ", ".join(f"{name} {n}" for name, n in self.sizes.items()) or "no splits"
        unit = self.unit if self.groups == 1 else _plural(self.unit)
        text = f"{parts} (of {self.items} item{'s' if self.items != 1 else ''}"
        if self.unit != "item":
            text += f", {self.groups} {unit}"
        left = sum(self.left_out.values())
        if left:
            reasons = "; ".join(f"{reason} {n}" for reason, n in self.left_out.items())
            text += f"; {left} left out: {reasons}"
        return text + ")"

    def as_record(self) -> dict[str, Any]:
        return {
            "shares": self.shares,
            "seed": self.seed,
            "unit": self.unit,
            "groups": self.groups,
            "items": self.items,
            "sizes": self.sizes,
            "left_out": self.left_out,
        }


def _plural(word: str) -> str:
    return word[:-1] + "ies" if word.endswith("y") else word + "s"


def split_plan(
    units: ReleaseUnits, shares: Mapping[str, int], seed: int | None, previous: GroupSplits | None = None
) -> SplitPlan:
    """Assign `units`' groups to `shares` from `seed` (without a seed or shares: every group unsplit); the groups
    of `previous` keep their split."""
    shares = {name: shares[name] for name in SPLIT_NAMES if shares.get(name)}
    assignment = split_assign(units, shares, seed, previous) if shares and seed is not None else None
    sizes = split_sizes(units.items, shares) if assignment is None else assignment.sizes(units.sizes)
    return SplitPlan(
        shares=shares,
        seed=seed,
        unit=units.unit,
        groups=len(units.keys),
        items=units.items,
        left_out=units.left_out,
        sizes=sizes,
        assignment=assignment,
    )


def previous_assignment(project: Any, shares: Mapping[str, int], seed: int | None) -> GroupSplits | None:
    """The split of every group of the latest published release with these shares and this seed, from its
    manifest (`split_assignment`); None when there is none (or it predates the record). Groups whose split is not
    one of these shares (a hand-edited manifest) are not kept.

    The manifest is read as a stream (ijson): a big release's `split_assignment` as one parsed dict of texts was
    the largest thing the next build held."""
    from exports import paths
    from exports.models import Release

    shares = {name: shares[name] for name in SPLIT_NAMES if shares.get(name)}
    if not shares or seed is None:
        return None
    names = tuple(shares)
    for release in Release.objects.published().filter(project=project, seed=seed).order_by("-version"):
        if {name: release.splits[name] for name in SPLIT_NAMES if release.splits.get(name)} != shares:
            continue
        if release.file_entry("manifest.json") is None:
            return None
        path = paths.inside(paths.release_folder(release.path), "manifest.json")
        try:
            with path.open("rb") as handle:
                rows = (
                    (int(key), names.index(split))
                    for key, split in ijson.kvitems(handle, "split_assignment.groups")
                    if isinstance(split, str) and split in names and key.isascii() and key.isdigit()
                )
                table = np.fromiter(rows, dtype=[("key", np.int64), ("code", np.int8)])
        except (OSError, ValueError, ijson.JSONError):
            return None  # a release whose files are gone or broken: the splits are drawn afresh
        # By key; a key written twice (by hand) keeps its last split, as a JSON reader does.
        table = table[np.argsort(table["key"], kind="stable")]
        last = np.r_[table["key"][1:] != table["key"][:-1], True] if len(table) else np.zeros(0, dtype=bool)
        return GroupSplits(names, table["key"][last], table["code"][last])
    return None


def release_split_plan(
    project: Any, *, statuses: Iterable[str], shares: Mapping[str, int], seed: int | None
) -> SplitPlan:
    """The split plan of a release of `project` (its kind's groups): the preview's and the build's."""
    from common import kinds

    units: Callable[..., ReleaseUnits] | None = kinds.of(project).release_units
    if units is None:
        raise LookupError(f"The project kind {project.kind!r} registered no release units.")
    return split_plan(units(project, list(statuses)), shares, seed, previous_assignment(project, shares, seed))
