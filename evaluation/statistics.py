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


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values (same order as given)."""
    order = sorted(range(len(p_values)), key=lambda index: p_values[index])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def mcnemar_exact(base: Sequence[float], other: Sequence[float]) -> float:
    """Two-sided exact McNemar p-value for paired binary outcomes (a binomial test on the discordant pairs)."""
    from scipy.stats import binomtest

    worse = sum(1 for b, o in zip(base, other, strict=True) if b and not o)
    better = sum(1 for b, o in zip(base, other, strict=True) if o and not b)
    if not worse + better:
        return 1.0
    return float(binomtest(min(worse, better), worse + better, 0.5).pvalue)


def sign_flip_p(differences: Sequence[float], clusters: Sequence[str], *, draws: int, seed: int) -> float:
    """Two-sided paired permutation p-value: each cluster's differences flip sign together."""
    values = np.asarray(differences, dtype=np.float64)
    _, members = np.unique(np.asarray(clusters), return_inverse=True)
    sums = np.bincount(members, weights=values)
    observed = abs(sums.sum())
    if not observed or draws <= 0:
        return 1.0
    rng = np.random.default_rng(seed)
    extreme = 0
    step = max(1, _CHUNK_CELLS // len(sums))
    for start in range(0, draws, step):
        signs = rng.integers(0, 2, size=(min(step, draws - start), len(sums))) * 2 - 1
        extreme += int((np.abs(signs @ sums) >= observed - 1e-12).sum())
    return (extreme + 1) / (draws + 1)


# Agreement of two raters (the judge and a person) on the items both judged


@dataclass(frozen=True, slots=True)
class Coefficient:
    value: float | None  # None: undefined (no items, or no variation for kappa)
    se: float | None
    low: float | None
    high: float | None


def _counts(table: Sequence[Sequence[float]]) -> tuple[np.ndarray, float]:
    counts = np.asarray(table, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError("An agreement table is square: rater A's categories by rater B's.")
    return counts, float(counts.sum())


def cohens_kappa(table: Sequence[Sequence[float]], z: float = Z95) -> Coefficient:
    """Cohen's unweighted κ with the large-sample standard error of Fleiss, Cohen & Everitt (1969) and the normal
    interval κ ± z·se (the convention of `statsmodels.stats.inter_rater.cohens_kappa`)."""
    counts, n = _counts(table)
    if n <= 0:
        return Coefficient(None, None, None, None)
    p = counts / n
    rows, columns = p.sum(axis=1), p.sum(axis=0)
    observed = float(np.trace(p))
    chance = float(rows @ columns)
    if chance >= 1 - 1e-12:
        return Coefficient(None, None, None, None)
    kappa = (observed - chance) / (1 - chance)
    diagonal = float((np.diag(p) * (1 - (rows + columns) * (1 - kappa)) ** 2).sum())
    off = p * (columns[:, None] + rows[None, :]) ** 2
    np.fill_diagonal(off, 0.0)
    variance = (diagonal + (1 - kappa) ** 2 * float(off.sum()) - (kappa - chance * (1 - kappa)) ** 2) / (
        (1 - chance) ** 2 * n
    )
    se = math.sqrt(max(variance, 0.0))
    return Coefficient(kappa, se, kappa - z * se, kappa + z * se)


def gwet_ac1(table: Sequence[Sequence[float]], confidence: float = 0.95) -> Coefficient:
    """Gwet's AC1 of two raters with the variance of Gwet (2008, eq. 21 for the unweighted case) and the interval
    AC1 ± t(n − 1)·se, capped at 1 (the convention of Gwet's R package irrCAC, `gwet.ac1.table`)."""
    from scipy.stats import t as student

    counts, n = _counts(table)
    q = counts.shape[0]
    if n <= 0 or q < 2:
        return Coefficient(None, None, None, None)
    p = counts / n
    prevalence = (p.sum(axis=1) + p.sum(axis=0)) / 2
    observed = float(np.trace(p))
    chance = float((prevalence * (1 - prevalence)).sum()) / (q - 1)
    ac1 = (observed - chance) / (1 - chance)
    weights = np.eye(q) - 2 * (1 - ac1) * (1 - (prevalence[:, None] + prevalence[None, :]) / 2) / (q - 1)
    variance = (float((p * weights**2).sum()) - (observed - 2 * (1 - ac1) * chance) ** 2) / (n * (1 - chance) ** 2)
    se = math.sqrt(max(variance, 1e-100))
    if n < 2:
        return Coefficient(ac1, se, None, None)
    margin = se * float(student.ppf(1 - (1 - confidence) / 2, n - 1))
    return Coefficient(ac1, se, ac1 - margin, min(1.0, ac1 + margin))


ODDS_RATIO_METHOD = (
    "Woolf: the log odds ratio with a normal 95% interval, SE = √(1/a + 1/b + 1/c + 1/d); when a cell is 0, "
    "0.5 is added to every cell (Haldane–Anscombe) and the row says so"
)


@dataclass(frozen=True, slots=True)
class OddsRatio:
    value: float | None  # None: one group has no item (no odds to compare)
    low: float | None
    high: float | None
    corrected: bool  # Haldane–Anscombe: 0.5 added to every cell because one was 0


def odds_ratio_woolf(a: int, b: int, c: int, d: int, z: float = Z95) -> OddsRatio:
    """The odds ratio (a/b) / (c/d) of a 2×2 table [[a, b], [c, d]] (rows the groups, columns success and failure)
    with Woolf's interval: exp(log OR ± z·√(1/a + 1/b + 1/c + 1/d)). A zero cell gets the Haldane–Anscombe
    correction: 0.5 added to every cell. (statsmodels' `Table2x2(shift_zeros=True)`, its default, does something
    else: it puts 0.5 in the zero cells only, leaving the others as they are.)"""
    if min(a, b, c, d) < 0:
        raise ValueError("a 2×2 table of counts has no negative cell")
    if a + b == 0 or c + d == 0:
        return OddsRatio(None, None, None, False)
    corrected = 0 in (a, b, c, d)
    cells = [x + 0.5 if corrected else float(x) for x in (a, b, c, d)]
    log_ratio = math.log(cells[0]) + math.log(cells[3]) - math.log(cells[1]) - math.log(cells[2])
    se = math.sqrt(sum(1 / x for x in cells))
    return OddsRatio(math.exp(log_ratio), math.exp(log_ratio - z * se), math.exp(log_ratio + z * se), corrected)
