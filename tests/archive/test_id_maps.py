"""The import's map of archived ids to ids here: compact for rows in the writer's order, right for any order."""

from __future__ import annotations

import random

from archive.reader import _Maps


def test_rows_in_any_order_are_found_and_a_missing_one_is_not():
    rng = random.Random(5)
    olds = list(range(1, 6001, 3))
    shuffled = olds[:1000] + rng.sample(olds[1000:], len(olds) - 1000)  # the writer's order, then a hand-made one
    maps = _Maps()
    for old in shuffled:
        maps.add("annotation.QAItem", old, old + 100_000)
    for old in olds:
        assert maps.get("annotation.QAItem", old) == old + 100_000
    assert maps.get("annotation.QAItem", 2) is None
    assert maps.get("annotation.QAItem", 2**70) is None  # larger than any id: not there, no error
    assert maps.get("annotation.PagePair", 1) is None
    assert sorted(maps.news("annotation.QAItem")) == [old + 100_000 for old in olds]
    assert maps.news("annotation.PagePair") == []


def test_floor_is_the_highest_row_at_or_below_across_ordered_and_unordered_rows():
    maps = _Maps()
    for old in (10, 20, 30, 5, 25):  # 5 and 25 come out of order
        maps.add("review.Judgment", old, old * 10)
    expected = {4: 0, 5: 50, 9: 50, 10: 100, 24: 200, 25: 250, 29: 250, 30: 300, 10**9: 300}
    assert {old: maps.floor("review.Judgment", old) for old in expected} == expected
    assert maps.floor("review.Verification", 7) == 0


def test_consecutive_rows_are_kept_as_runs_and_found_at_their_edges():
    """An import into a fresh server keeps ids: a project's rows made together are one run each, whatever their
    number; a gap in the archived ids or in the ids here starts a new run."""
    maps = _Maps()
    for old in range(1, 100_001):
        maps.add("annotation.QAItem", old, old)  # kept
    for old in range(200_001, 200_501):
        maps.add("annotation.QAItem", old, old + 7)  # its ids were taken here: moved, still consecutive
    maps.add("annotation.QAItem", 200_501, 900_000)  # a new id here out of step: a run of its own
    runs = maps.ids["annotation.QAItem"]

    assert len(runs.olds) == 3
    assert [maps.get("annotation.QAItem", old) for old in (1, 100_000, 100_001, 200_000)] == [1, 100_000, None, None]
    assert [maps.get("annotation.QAItem", old) for old in (200_001, 200_500, 200_501, 200_502)] == [
        200_008,
        200_507,
        900_000,
        None,
    ]
    assert maps.floor("annotation.QAItem", 150_000) == 100_000  # the highest row at or below: the first run's last
    assert maps.floor("annotation.QAItem", 200_250) == 200_257
    assert maps.floor("annotation.QAItem", 10**9) == 900_000
    assert len(maps.news("annotation.QAItem")) == 100_501
