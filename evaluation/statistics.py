"""Intervals for the results tables.

* Proportions (exact match, accuracy): Wilson score interval, 95%.
* Means (ROUGE-L, chrF): percentile bootstrap, 95%, seeded; resampled by cluster (the page pair) when the items
  share one, so two questions on one article are not counted as independent evidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054
DEFAULT_DRAWS = 1000
DEFAULT_SEED = 20261203
_CHUNK_CELLS = 4_000_000  # draws × clusters resampled at once (memory stays around 32 MB)


@dataclass(frozen=True, slots=True)
class Estimate:
    n: int
    mean: float | None  # None: no item to score (an empty cell, not 0)
    low: float | None
    high: float | None


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    if n <= 0:
        raise ValueError("Wilson interval of no items")
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    margin = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return max(0.0, centre - margin), min(1.0, centre + margin)


def proportion(values: Sequence[float]) -> Estimate:
    n = len(values)
    if not n:
        return Estimate(0, None, None, None)
    successes = float(sum(values))
    low, high = wilson(successes, n)
    return Estimate(n, successes / n, low, high)


def bootstrap_mean(
    values: Sequence[float],
    clusters: Sequence[str] | None = None,
    *,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
) -> Estimate:
    """The mean with a percentile bootstrap interval over clusters (each item its own cluster without them)."""
    n = len(values)
    if not n:
        return Estimate(0, None, None, None)
    scores = np.asarray(values, dtype=np.float64)
    mean = float(scores.mean())
    if n == 1 or draws <= 0:
        return Estimate(n, mean, None if draws <= 0 else mean, None if draws <= 0 else mean)
    if clusters is None:
        sums, counts = scores, np.ones(n)
    else:
        _, members = np.unique(np.asarray(clusters), return_inverse=True)
        sums = np.asarray(np.bincount(members, weights=scores), dtype=np.float64)
        counts = np.bincount(members).astype(np.float64)
    size = len(sums)
    rng = np.random.default_rng(seed)
    means = np.empty(draws)
    step = max(1, _CHUNK_CELLS // size)
    for start in range(0, draws, step):
        stop = min(draws, start + step)
        picks = rng.integers(0, size, size=(stop - start, size))
        means[start:stop] = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Estimate(n, mean, float(low), float(high))
