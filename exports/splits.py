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
import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

SPLIT_NAMES = ("train", "dev", "test")


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


def split_assign(
    groups: Mapping[Any, int], shares: Mapping[str, int], seed: int, previous: Mapping[str, str] | None = None
) -> dict[Any, str]:
    """Each group's split (group key → split name), whole groups only; see the module's docstring.

    `previous` (str(group key) → split) is the assignment of the release before, made with the same seed and
    shares: its groups keep their split, and the new groups fill what the sizes still need.
    """
    sizes = split_sizes(sum(groups.values()), shares)
    if not sizes:
        return {}
    need = dict(sizes)
    order = list(sizes)
    result: dict[Any, str] = {}
    for key, size in groups.items():
        split = previous.get(str(key)) if previous else None
        if split in need:
            need[split] -= size
            result[key] = split
    for key in _drawn_order(seed, [key for key in groups if key not in result]):
        size = groups[key]
        fits = [name for name in order if need[name] > 0 and need[name] * 2 >= size]
        if fits:  # the split furthest from its size, in proportion: small splits are not starved
            split = max(fits, key=lambda name: (need[name] / sizes[name], -order.index(name)))
        else:
            split = max(order, key=lambda name: (need[name], -order.index(name)))
        need[split] -= size
        result[key] = split
    return result


def _drawn_order(seed: int, keys: list[Any]) -> list[Any]:
    """`keys` in the order drawn from `seed`: by `_draw`, equal draws (8 bytes: about never) by the key's text.

    Sorted on the draws alone, the tie-break done afterwards: a (draw, text) pair per key would be most of a
    big release's memory."""
    keys.sort(key=lambda key: _draw(seed, key))
    ordered: list[Any] = []
    for _, tied in itertools.groupby(keys, key=lambda key: _draw(seed, key)):
        run = list(tied)
        ordered.extend(sorted(run, key=str) if len(run) > 1 else run)
    return ordered


@dataclass
class ReleaseUnits:
    """What a kind releases, before splitting: its groups (key → items) and the items it leaves out (why → n)."""

    unit: str  # what a group is, for people: "page pair", "entity", "item", "group of duplicates"
    groups: dict[Any, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)

    @property
    def items(self) -> int:
        return sum(self.groups.values())


@dataclass
class SplitPlan:
    """The split of every group of a release, and the sizes that follow (what the preview shows, what is built).

    What it says of the groups (how many, their items, what was left out) is counted when it is made: the build
    holds the plan while it writes, and a big release's map of every group's items would stay with it."""

    shares: dict[str, int]
    seed: int | None
    unit: str  # what a group is (ReleaseUnits.unit)
    groups: int
    items: int
    left_out: dict[str, int]
    # Items per split, every split of the shares named (0 when empty); without a seed, the target sizes.
    sizes: dict[str, int]
    assignment: dict[Any, str] = field(default_factory=dict)

    def split_of(self, key: Any) -> str | None:
        """The split of a group (None without splits, or for a group the plan does not release)."""
        return self.assignment.get(key)

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
    units: ReleaseUnits, shares: Mapping[str, int], seed: int | None, previous: Mapping[str, str] | None = None
) -> SplitPlan:
    """Assign `units`' groups to `shares` from `seed` (without a seed or shares: every group unsplit); the groups
    of `previous` keep their split."""
    shares = {name: shares[name] for name in SPLIT_NAMES if shares.get(name)}
    assignment = split_assign(units.groups, shares, seed, previous) if shares and seed is not None else {}
    if seed is None:
        sizes = split_sizes(units.items, shares)
    else:
        sizes = dict.fromkeys(shares, 0)
        for key, split in assignment.items():
            sizes[split] += units.groups[key]
    return SplitPlan(
        shares=shares,
        seed=seed,
        unit=units.unit,
        groups=len(units.groups),
        items=units.items,
        left_out=units.left_out,
        sizes=sizes,
        assignment=assignment,
    )


def previous_assignment(project: Any, shares: Mapping[str, int], seed: int | None) -> dict[str, str]:
    """The split of every group of the latest published release with these shares and this seed, from its
    manifest (`split_assignment`); empty when there is none (or it predates the record)."""
    import json

    from exports import paths
    from exports.models import Release

    shares = {name: shares[name] for name in SPLIT_NAMES if shares.get(name)}
    if not shares or seed is None:
        return {}
    for release in Release.objects.published().filter(project=project, seed=seed).order_by("-version"):
        if {name: release.splits[name] for name in SPLIT_NAMES if release.splits.get(name)} != shares:
            continue
        if release.file_entry("manifest.json") is None:
            return {}
        try:
            path = paths.inside(paths.release_folder(release.path), "manifest.json")
            recorded = json.loads(path.read_text(encoding="utf-8")).get("split_assignment") or {}
        except (OSError, ValueError):
            return {}  # a release whose files are gone: the splits are drawn afresh
        groups = recorded.get("groups") if isinstance(recorded, dict) else None
        if not isinstance(groups, dict):
            return {}
        # Filtered in place (JSON keys are text already): a copy of a big release's map would double what the
        # planning holds.
        for key in [key for key, split in groups.items() if not isinstance(split, str) or split not in shares]:
            del groups[key]
        return groups
    return {}


def release_split_plan(
    project: Any, *, statuses: Iterable[str], shares: Mapping[str, int], seed: int | None
) -> SplitPlan:
    """The split plan of a release of `project` (its kind's groups): the preview's and the build's."""
    from common import kinds

    units: Callable[..., ReleaseUnits] | None = kinds.of(project).release_units
    if units is None:
        raise LookupError(f"The project kind {project.kind!r} registered no release units.")
    return split_plan(units(project, list(statuses)), shares, seed, previous_assignment(project, shares, seed))
