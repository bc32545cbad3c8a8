"""The judgments fingerprint hashed a block at a time gives the bytes the one-shot hash gave: the fingerprints stored
in earlier agreement reports (and in release manifests' agreement) still match the same judgments."""

from __future__ import annotations

import hashlib
import json
import random

import numpy as np
import pytest

from review.agreement import _json_value, judgments_fingerprint, rating_table

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine


def fingerprint_as_before(table) -> str:
    """The fingerprint as review/agreement.py computed it until 2026-12-04 (every triple sorted at once)."""
    digest = hashlib.sha256(f"level\t{table.level}\n".encode())
    ranks = []
    for names in (table.units, table.raters, table.categories):
        if all(type(name) is int for name in names):
            texts = np.array([str(name) for name in names], dtype=object)
        else:
            texts = np.array([json.dumps(_json_value(name), ensure_ascii=False) for name in names], dtype=object)
        order = np.argsort(texts, kind="stable")
        rank = np.empty(len(texts), dtype=np.int64)
        rank[order] = np.arange(len(texts))
        ranks.append(rank)
        digest.update(("\t".join(texts[order].tolist()) + "\n").encode())
    triples = np.stack([ranks[0][table.unit_index], ranks[1][table.rater_index], ranks[2][table.code]], axis=1)
    digest.update(triples.astype("<i8")[np.lexsort(triples.T[::-1])].tobytes())
    return "sha256:" + digest.hexdigest()


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
def test_the_fingerprint_equals_the_one_shot_hash(units, raters, values, level):
    rng = random.Random(7)
    judgments = random_judgments(rng, units, raters, values, len(units) * len(raters) * 2 // 3)

    table = rating_table(judgments, level)

    assert judgments_fingerprint(table) == fingerprint_as_before(table)
    # Whatever order the judgments come in.
    assert judgments_fingerprint(rating_table(list(reversed(judgments)), level)) == fingerprint_as_before(table)


def test_blocks_of_any_size_give_the_same_bytes(monkeypatch):
    """200 units × 12 raters, hashed in blocks of 7, 64 and one block: every block edge lands somewhere new."""
    rng = random.Random(11)
    judgments = random_judgments(rng, list(range(1000, 1200)), [f"r{n}" for n in range(12)], ["a", "b", "c"], 1500)
    table = rating_table(judgments, "nominal")
    expected = fingerprint_as_before(table)

    for block in (7, 64, 10**6):
        monkeypatch.setattr("review.agreement.FINGERPRINT_BLOCK", block)
        assert judgments_fingerprint(rating_table(judgments, "nominal")) == expected


def test_an_empty_scope_hashes_as_before():
    """A scope nobody has judged yet (a new project's screening, say) still has a fingerprint, the same as before."""
    table = rating_table([], "nominal", categories=["pass", "flag"])

    assert table.n_judgments == 0
    assert judgments_fingerprint(table) == fingerprint_as_before(table)


def test_a_different_judgment_changes_the_fingerprint():
    judgments = [(1, "ann", "pass"), (1, "bo", "pass"), (2, "ann", "flag"), (2, "bo", "pass")]
    changed = [*judgments[:3], (2, "bo", "flag")]

    assert judgments_fingerprint(rating_table(judgments, "nominal")) != judgments_fingerprint(
        rating_table(changed, "nominal")
    )
