"""Scoring speed: N predictions through extraction, every metric and the results rows with their intervals.

    .venv/bin/python bench/evaluation_scoring.py [--predictions 100000] [--draws 10000] [--language cmn|deu]

No database: the per-item work (`evaluation.scoring.extract` and `score`) and the table rows
(`results_rows`, Wilson and the cluster bootstrap) on synthetic Wikipedia QA items, two per page pair, four
scenarios, topic and region strata. Prints the time of each phase and the peak resident memory.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DATABASE_URL", "sqlite:///:memory:")

import django

django.setup()

from evaluation import scoring  # noqa: E402
from evaluation.gold import WIKIPEDIA_SCENARIOS, ItemGold, ReleaseGold  # noqa: E402

GOLDS = {
    "cmn": ["菠萝油和鸳鸯", "深水埗", "1958年", "陈伯", "星期三休息", "六十几年的老字号茶餐厅"],
    "deu": ["Landeshauptstadt von Bayern", "Bier und Brezeln", "1158", "Isar", "Viktualienmarkt", "Oktoberfest"],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--predictions", type=int, default=100_000)
    parser.add_argument("--draws", type=int, default=10_000)
    parser.add_argument("--language", default="cmn", choices=sorted(GOLDS))
    options = parser.parse_args()
    rng = random.Random(1)
    per_scenario = options.predictions // len(WIKIPEDIA_SCENARIOS)
    golds = GOLDS[options.language]
    items = {
        f"bench-q{n}": ItemGold(
            kind="lead",
            gold=rng.choice(golds),
            cluster=f"bench-p{n // 2}",
            strata={"topic": f"topic {n % 14}", "region": ("local", "standard", "other")[n % 3], "split": "test"},
        )
        for n in range(per_scenario)
    }
    gold = ReleaseGold(
        "wikipedia_qa",
        options.language,
        items,
        {scenario: set(items) for scenario in WIKIPEDIA_SCENARIOS},
        [],
        ("topic", "region", "split"),  # the strata the synthetic items carry
    )
    replies = [
        lambda g: f"<answer>{g}</answer>",
        lambda g: f"The answer is <answer>{g[: max(1, len(g) // 2)]}</answer>.",
        lambda g: f"<answer>{rng.choice(golds)}</answer>",
        lambda g: "I do not know.",
    ]
    start = time.perf_counter()
    scored = []
    unavailable: dict[str, str] = {}
    for scenario in WIKIPEDIA_SCENARIOS:
        for item_id, item in items.items():
            reply = rng.choice(replies)(item.gold)
            found = scoring.extract(reply, item, scenario, gold)
            scored.append(("bench", scenario, item_id, scoring.score(found, item, gold, unavailable)))
    per_item = time.perf_counter() - start
    start = time.perf_counter()
    rows = scoring.results_rows(scored, gold, draws=options.draws, seed=20261203)
    intervals = time.perf_counter() - start
    start = time.perf_counter()
    comparisons = scoring.comparison_rows(scored, gold, draws=options.draws, seed=20261203)
    paired = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    metrics = sorted({f"{row['mode']}:{row['metric']}" for row in rows})
    print(f"{len(scored):,} predictions ({options.language}), {len(metrics)} metrics: {', '.join(metrics)}")
    print(f"extraction + per-item scores: {per_item:.1f} s ({1e6 * per_item / len(scored):.0f} µs per prediction)")
    print(f"{len(rows):,} result rows with {options.draws:,}-draw intervals: {intervals:.1f} s")
    print(f"{len(comparisons)} paired comparisons with Holm ({options.draws:,} draws and flips): {paired:.1f} s")
    print(f"peak resident memory: {peak:.0f} MB; unavailable: {unavailable or 'none'}")


if __name__ == "__main__":
    main()
