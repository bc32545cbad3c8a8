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
    return (
        bootstrap_means([[value] for value in values], clusters, draws=draws, seed=seed)[0]
        if values
        else Estimate(0, None, None, None)
    )


def bootstrap_means(
    rows: Sequence[Sequence[float]],
    clusters: Sequence[str] | None = None,
    *,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
) -> list[Estimate]:
    """One estimate per column of `rows` (items × metrics), every column resampled with the same draws: the
    metrics of one table cell share their items, so one set of resampled clusters serves them all."""
    scores = np.asarray(rows, dtype=np.float64)
    if scores.ndim != 2 or not len(scores):
        return []
    n, width = scores.shape
    means = scores.mean(axis=0)
    if clusters is None:
        sums, counts = scores, np.ones(n)
    else:
        _, members = np.unique(np.asarray(clusters), return_inverse=True)
        size = int(members.max()) + 1
        sums = np.zeros((size, width))
        np.add.at(sums, members, scores)
        counts = np.bincount(members, minlength=size).astype(np.float64)
    if len(counts) < 2 or draws <= 0:
        # one cluster (one item, or items of one page pair) has no spread to resample: no interval, not a zero-width one
        return [Estimate(n, float(means[k]), None, None) for k in range(width)]
    size = len(counts)
    rng = np.random.default_rng(seed)
    resampled = np.empty((draws, width))
    step = max(1, _CHUNK_CELLS // size)
    for start in range(0, draws, step):
        stop = min(draws, start + step)
        chunk = stop - start
        # a draw of `size` clusters with replacement, as counts per cluster; the means are then one product
        picks = rng.integers(0, size, size=(chunk, size), dtype=np.int64)
        picks += np.arange(chunk, dtype=np.int64)[:, None] * size
        weights = np.bincount(picks.ravel(), minlength=chunk * size).reshape(chunk, size).astype(np.float64)
        resampled[start:stop] = (weights @ sums) / (weights @ counts)[:, None]
    low, high = np.percentile(resampled, [2.5, 97.5], axis=0)
    return [Estimate(n, float(means[k]), float(low[k]), float(high[k])) for k in range(width)]
