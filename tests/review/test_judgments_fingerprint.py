"""The judgments fingerprint: the same judgments give the same fingerprint whatever order they come in (a table's
or a database stream's), and any change to a judgment, a unit or the scale changes it."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from review.agreement import Tally, _json_value, judgments_fingerprint, rating_table

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine


def fingerprint_as_documented(judgments, level, categories) -> str:
    """`Tally.fingerprint` read plainly from its docstring: each unit's text (the unit, then its [rater, value]
    texts sorted) hashed with sha256, the hashes added modulo 2^256, then the level, scale and unit count."""
    by_unit: dict = {}
    for unit, rater, value in judgments:
        by_unit.setdefault(json.dumps(_json_value(unit), ensure_ascii=False), []).append(
            json.dumps([_json_value(rater), _json_value(value)], ensure_ascii=False)
        )
    total = 0
    for unit, values in by_unit.items():
        text = "\t".join([unit, *sorted(values)])
        total += int.from_bytes(hashlib.sha256(text.encode()).digest(), "big")
    scale = json.dumps([_json_value(category) for category in categories], ensure_ascii=False)
    text = f"level\t{level}\nscale\t{scale}\nunits\t{len(by_unit)}\n{total % 2**256:064x}\n"
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def random_judgments(rng: random.Random, units: list, raters: list, values: list, n: int) -> list[tuple]:
    pairs = rng.sample([(unit, rater) for unit in units for rater in raters], n)
    return [(unit, rater, rng.choice(values)) for unit, rater in pairs]


CANTONESE = ["𠮶個", "佢哋", "冇", "𨋢", "嘅"]  # 𠮶 and 𨋢 are outside the BMP
ARABIC = ["مش", "عايز", "إزيك"]
BAVARIAN = ["Grüß Gott", "Semmel", "Brezn"]


@pytest.mark.parametrize(
    "units, raters, values, level",
    [
        # Whole numbers whose texts sort differently from their values (10 < 9 as text), negative and 64-bit ones.
        ([9, 10, 100, 1, -5, 2**62, 0, 11], [3, 21, 2], ["pass", "flag"], "nominal"),
        # Beyond 64 bits: names that numpy cannot hold as int64.
        ([2**70, 5, 2**64 + 1], ["ann", "bo"], [1, 2, 3], "ordinal"),
        (CANTONESE + ARABIC + BAVARIAN, ["林", "سارة", "Sepp", "Zoë"], [1.5, 2.0, 3.25], "interval"),
        ([1, "1", 2, "zwei", None, 3.5], ["a", 7], ["pass", "flag", "unsure"], "nominal"),
    ],
    ids=["integers", "beyond-64-bits", "three-scripts", "mixed-names"],
)
def test_the_fingerprint_is_the_documented_hash_whatever_the_order(units, raters, values, level):
    rng = random.Random(7)
    judgments = random_judgments(rng, units, raters, values, len(units) * len(raters) * 2 // 3)

    table = rating_table(judgments, level)
    shown = [table.categories[code] for code in table.code.tolist()]  # 2.0 is shown as 2, as reports show it
    coded = [
        (table.units[u], table.raters[r], v) for u, r, v in zip(table.unit_index, table.rater_index, shown, strict=True)
    ]

    assert judgments_fingerprint(table) == fingerprint_as_documented(coded, level, table.categories)
    assert judgments_fingerprint(rating_table(list(reversed(judgments)), level)) == judgments_fingerprint(table)
    shuffled = judgments[:]
    rng.shuffle(shuffled)
    assert judgments_fingerprint(rating_table(shuffled, level)) == judgments_fingerprint(table)


def test_a_stream_of_units_gives_the_fingerprint_of_the_table_of_its_judgments():
    """A report streams each unit's judgments from the database in its own order; the table of the same
    judgments (another unit and rater order) has the same fingerprint."""
    rng = random.Random(11)
    judgments = random_judgments(rng, list(range(1000, 1200)), [f"r{n}" for n in range(12)], ["a", "b", "c"], 1500)
    tally = Tally("nominal", ["a", "b", "c"])
    by_unit: dict = {}
    for unit, rater, value in judgments:
        by_unit.setdefault(unit, []).append((rater, value))
    for unit in sorted(by_unit, reverse=True):
        raters, values = zip(*by_unit[unit], strict=True)
        tally.add(unit, raters, [tally.code(value) for value in values])

    table = rating_table(judgments, "nominal", categories=["a", "b", "c"])

    assert tally.fingerprint == judgments_fingerprint(table)
    assert tally.n_judgments == table.n_judgments == 1500


def test_an_empty_scope_has_a_fingerprint_of_its_own():
    """A scope nobody has judged yet (a new project's screening, say) still has a fingerprint."""
    empty = rating_table([], "nominal", categories=["pass", "flag"])
    judged = rating_table([(1, "ann", "pass"), (1, "bo", "pass")], "nominal", categories=["pass", "flag"])

    assert empty.n_judgments == 0
    assert judgments_fingerprint(empty).startswith("sha256:")
    assert judgments_fingerprint(empty) != judgments_fingerprint(judged)


def test_a_different_judgment_unit_or_scale_changes_the_fingerprint():
    judgments = [(1, "ann", "pass"), (1, "bo", "pass"), (2, "ann", "flag"), (2, "bo", "pass")]
    variants = [
        [*judgments[:3], (2, "bo", "flag")],  # a value
        [*judgments[:3], (2, "cy", "pass")],  # a rater
        [*judgments[:3], (3, "bo", "pass")],  # the unit of one judgment
        [(1, "ann", "pass"), (1, "bo", "flag"), (2, "ann", "pass"), (2, "bo", "pass")],  # same values, other units
    ]
    fingerprints = {judgments_fingerprint(rating_table(judgments, "nominal"))}
    for variant in variants:
        fingerprints.add(judgments_fingerprint(rating_table(variant, "nominal")))
    fingerprints.add(judgments_fingerprint(rating_table(judgments, "nominal", categories=["pass", "flag", "unsure"])))

    assert len(fingerprints) == len(variants) + 2
