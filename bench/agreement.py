"""Time the agreement statistics on 100,000 units × 3 raters with 10% of the ratings missing.

Usage: python bench/agreement.py [UNITS] [BOOTSTRAP]
Pure maths (review/agreement.py): no Django, no database. Two data sets: pass/flag
judgments where 'pass' dominates (nominal) and 1–5 Likert scores (ordinal). For each
step: wall time and the peak memory Python allocated during it (tracemalloc, which
sees numpy's arrays). Target: alpha + AC1 + kappa under 5 s.
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from review.agreement import (
    agreement_summary,
    alpha_bootstrap,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    percent_agreement,
    rating_table,
    rwg_j,
)

UNITS = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
BOOTSTRAP = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
RATERS = ("r1", "r2", "r3")
PAIRS = (("r1", "r2"), ("r1", "r3"), ("r2", "r3"))
MISSING = 0.10
TARGET_SECONDS = 5.0


def judgments(kind: str, rng: np.random.Generator) -> list[tuple[str, str, Any]]:
    """Long-format judgments: each rater mostly agrees with a unit's true value, 10% of cells left out."""
    if kind == "nominal":
        truth = np.where(rng.random(UNITS) < 0.9, "pass", "flag")
        noise = np.where(rng.random((len(RATERS), UNITS)) < 0.5, "pass", "flag")
    else:
        truth = rng.integers(1, 6, UNITS).astype(str)
        noise = rng.integers(1, 6, (len(RATERS), UNITS)).astype(str)
    ratings = np.where(rng.random((len(RATERS), UNITS)) < 0.8, truth, noise)
    present = rng.random((len(RATERS), UNITS)) >= MISSING
    out: list[tuple[str, str, Any]] = []
    for r, rater in enumerate(RATERS):
        for unit in np.flatnonzero(present[r]):
            value = ratings[r, unit]
            out.append((f"u{unit}", rater, value if kind == "nominal" else int(value)))
    return out


def measure(step: Callable[[], Any]) -> tuple[Any, float, float]:
    tracemalloc.start()
    started = time.perf_counter()
    result = step()
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return result, seconds, peak / 2**20


def value(result: Any) -> str:
    if isinstance(result, list):
        return " ".join(value(item) for item in result)
    if isinstance(result, tuple):
        return f"[{result[0]:.3f}, {result[1]:.3f}]"
    if hasattr(result, "statistics"):
        return f"alpha {result.statistics['krippendorff_alpha'].value:.3f}"
    if hasattr(result, "value"):
        return "—" if result.value is None else f"{result.value:.3f}"
    return ""


def run(kind: str) -> list[tuple[str, str, float, float]]:
    rng = np.random.default_rng(2011)
    data = judgments(kind, rng)
    rows: list[tuple[str, str, float, float]] = []
    table, seconds, peak = measure(lambda: rating_table(data, kind))  # type: ignore[arg-type]
    rows.append((f"code {len(data):,} judgments", "", seconds, peak))
    core = 0.0
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("Krippendorff's alpha", lambda: krippendorff_alpha(table)),
        ("Gwet's AC1", lambda: gwet_ac1(table)),
        ("Cohen's kappa, 3 pairs", lambda: [cohen_kappa(table, a, b) for a, b in PAIRS]),
        ("Fleiss' kappa", lambda: fleiss_kappa(table)),
        ("percent agreement", lambda: percent_agreement(table)),
    ]  # fmt: skip
    if kind != "nominal":
        steps.append(("r*wg(j)", lambda: rwg_j(table)))
    for name, step in steps:
        result, seconds, peak = measure(step)
        rows.append((name, value(result), seconds, peak))
        if name in ("Krippendorff's alpha", "Gwet's AC1", "Cohen's kappa, 3 pairs"):
            core += seconds
    rows.append(("= alpha + AC1 + kappa", "", core, 0.0))
    result, seconds, peak = measure(lambda: alpha_bootstrap(table, replicates=BOOTSTRAP, seed=1))
    rows.append((f"alpha bootstrap CI, {BOOTSTRAP} resamples", value(result), seconds, peak))
    result, seconds, peak = measure(lambda: agreement_summary(table, kind, bootstrap=BOOTSTRAP))  # type: ignore[arg-type]
    rows.append(("agreement_summary (all, with pair CIs)", value(result), seconds, peak))
    return rows


def main() -> None:
    print(f"{UNITS:,} units × {len(RATERS)} raters, {MISSING:.0%} missing; numpy {np.__version__}")
    verdicts = []
    for kind in ("nominal", "ordinal"):
        rows = run(kind)
        print(f"\n{kind}")
        print(f"{'step':<42} {'value':>18} {'seconds':>9} {'peak MiB':>9}")
        for name, shown, seconds, peak in rows:
            print(f"{name:<42} {shown:>18} {seconds:>9.3f} {peak:>9.1f}")
        core = next(seconds for name, _, seconds, _ in rows if name.startswith("="))
        verdicts.append(core < TARGET_SECONDS)
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nprocess peak RSS {max_rss:.0f} MiB; target alpha + AC1 + kappa < {TARGET_SECONDS:.0f} s:", end=" ")
    print("met" if all(verdicts) else "MISSED")
    if not all(verdicts):
        sys.exit(1)


if __name__ == "__main__":
    main()
