"""The split plan held as arrays (exports.splits) gives every group the split the former dict code gave it: the
same seed keeps its splits from one version of localqa to the next."""

from __future__ import annotations

import hashlib
import itertools
import random

import numpy as np
import pytest

from exports import splits
from exports.splits import GroupSplits, ReleaseUnits, split_assign, split_plan, split_sizes

SHARES = [{"train": 70, "dev": 10, "test": 20}, {"train": 80, "test": 20}, {"train": 1, "dev": 1, "test": 1}]


def former_split_assign(groups, shares, seed, previous=None):
    """The dict code of localqa until 2026-12-04 (group key → items in, group key → split out)."""
    sizes = split_sizes(sum(groups.values()), shares)
    if not sizes:
        return {}
    need = dict(sizes)
    order = list(sizes)
    result = {}
    for key, size in groups.items():
        split = previous.get(str(key)) if previous else None
        if split in need:
            need[split] -= size
            result[key] = split
    keys = [key for key in groups if key not in result]
    keys.sort(key=lambda key: splits._draw(seed, key))
    drawn = []
    for _, tied in itertools.groupby(keys, key=lambda key: splits._draw(seed, key)):
        run = list(tied)
        drawn.extend(sorted(run, key=str) if len(run) > 1 else run)
    for key in drawn:
        size = groups[key]
        fits = [name for name in order if need[name] > 0 and need[name] * 2 >= size]
        if fits:
            split = max(fits, key=lambda name: (need[name] / sizes[name], -order.index(name)))
        else:
            split = max(order, key=lambda name: (need[name], -order.index(name)))
        need[split] -= size
        result[key] = split
    return result


def random_groups(rng: random.Random, n: int) -> dict[int, int]:
    # Keys as page pairs have them, and some beyond 32 bits; in the order a database returns them (not sorted).
    keys = rng.sample(range(1, 2**40), n // 2) + rng.sample(range(1, 5000), n - n // 2)
    return {key: rng.choice((1, 1, 2, 3, 5, 12)) for key in dict.fromkeys(keys)}


def as_units(groups: dict[int, int]) -> ReleaseUnits:
    return ReleaseUnits.counted("page pair", groups.items())


@pytest.mark.parametrize("case", range(12))
def test_the_arrays_give_every_group_the_split_the_dict_code_gave(case):
    rng = random.Random(case)
    groups = random_groups(rng, rng.choice((1, 7, 60, 900)))
    shares, seed = SHARES[case % len(SHARES)], rng.randrange(2**31)

    first = split_assign(as_units(groups), shares, seed)

    assert dict(first.items()) == former_split_assign(groups, shares, seed)
    # The next release: some groups gone, new ones added; the kept ones keep their split, as before.
    later = {key: size for key, size in groups.items() if rng.random() < 0.8} | random_groups(rng, 50)
    previous_text = {str(key): split for key, split in first.items()}
    assert dict(split_assign(as_units(later), shares, seed, first).items()) == former_split_assign(
        later, shares, seed, previous_text
    )


def test_equal_draws_are_ordered_by_the_keys_text_as_before(monkeypatch):
    # One byte of draw: many groups draw alike, and their order falls to the key's text ("10" before "9").
    monkeypatch.setattr(splits, "_draw", lambda seed, key: hashlib.blake2b(f"{seed}:{key}".encode()).digest()[:1])
    groups = {key: 1 + key % 3 for key in range(1, 400)}

    result = split_assign(as_units(groups), SHARES[0], 3)

    assert dict(result.items()) == former_split_assign(groups, SHARES[0], 3)


def test_a_previous_split_these_shares_do_not_have_is_drawn_afresh():
    groups = {key: 1 for key in range(1, 21)}
    previous = GroupSplits(("train", "dev", "test"), np.arange(1, 21, dtype=np.int64), np.array([2] * 20, np.int8))

    result = dict(split_assign(as_units(groups), {"train": 80, "dev": 20}, 9, previous).items())

    assert result == former_split_assign(groups, {"train": 80, "dev": 20}, 9, {str(k): "test" for k in groups})
    assert sorted(result.values()) == ["dev"] * 4 + ["train"] * 16


def test_groups_counted_from_rows_in_any_order_add_a_key_given_twice():
    units = ReleaseUnits.counted("entity", [(30, 2), (4, 1), (30, 1), (2**40, 5)])

    assert units.keys.tolist() == [4, 30, 2**40] and units.sizes.tolist() == [1, 3, 5]
    assert units.items == 9
    assert ReleaseUnits.counted("item", iter(())).items == 0


def test_the_plan_names_each_groups_split_and_counts_the_items_of_each_split():
    units = ReleaseUnits.counted("page pair", {key: 2 for key in range(1, 11)}.items(), {"not accepted": 3})

    plan = split_plan(units, SHARES[0], 4)

    assert sum(plan.sizes.values()) == 20 and plan.groups == 10
    assert [plan.split_of(key) for key in range(1, 11)] == [
        former_split_assign(dict.fromkeys(range(1, 11), 2), SHARES[0], 4)[key] for key in range(1, 11)
    ]
    assert plan.split_of(11) is None and plan.split_of(0) is None
    assert split_plan(units, SHARES[0], None).split_of(1) is None  # no seed: no splits drawn
    assert "3 left out: not accepted 3" in plan.describe()
