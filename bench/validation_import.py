"""Time a validation project's import of collected QA pairs and the seed-query expansion.

Usage: DATABASE_URL=postgres://… python bench/validation_import.py [PAIRS ...]
Creates a throw-away validation project per size in the database DATABASE_URL
points at (and deletes it afterwards), imports PAIRS synthetic rows in the
collection framework's TSV layout (every tenth repeats the one before but for its punctuation; random words otherwise),
and expands the real English templates (../shared/fixtures/nativqa) for two
locations. Prints wall time per step, and the near-duplicate search (which grows with the square of
the number of questions) timed apart from the rest (reading, bulk inserts, routing to the review queue).
"""

from __future__ import annotations

import os
import random
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from annotation.importers.sources import ImportSource  # noqa: E402
from annotation.models import Project  # noqa: E402
from validation import services  # noqa: E402
from validation.text import find_duplicates  # noqa: E402

HEADER = "data_id\tcategory\tinput_query\tquestion\tanswer\tquestion_type\tanswer_URLs\n"
TEMPLATES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "nativqa" / "english_template.csv"


WORDS = [
    "harbour",
    "museum",
    "desert",
    "falcon",
    "pearl",
    "souq",
    "tower",
    "mosque",
    "island",
    "stadium",
    "dish",
    "bread",
    "coffee",
    "date",
    "palm",
    "camel",
    "festival",
    "poet",
    "dialect",
    "school",
    "library",
    "bridge",
    "market",
    "fort",
    "beach",
    "mangrove",
    "oryx",
    "race",
    "dhow",
    "tea",
    "garden",
]


def rows(n: int, *, seed: int = 20260101, first: int = 0) -> str:
    rng = random.Random(seed)
    questions = [" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(n)]
    lines = [HEADER]
    for i in range(first, first + n):
        # Every tenth nearly repeats the one before.
        question = questions[i - first - 1] + "!" if i % 10 == 9 else questions[i - first] + "?"
        lines.append(
            f"{i}\ttopic{i % 17}\tquery {i}\tWhich {question}\tAnswer {i}.\tfactoid"
            f"\t['https://site{i % 500}.example.org/p{i}']\n"
        )
    return "".join(lines)


def main(sizes: list[int]) -> None:
    for n in sizes:
        project = services.validation_project_create(name=f"bench {uuid.uuid4().hex[:8]}", language="eng")
        try:
            data = rows(n).encode()
            start = time.perf_counter()
            report = services.validation_items_import(
                project=project, source=ImportSource("b.tsv", data=data), user=None
            )
            took = time.perf_counter() - start
            assert report.ok, report.problems[:3]
            dups = sum(report.counts["duplicates"].values())
            print(f"import {n:>6} pairs: {took:6.2f} s ({n / took:,.0f} pairs/s), {dups} duplicates marked")
            # The near-duplicate search compares every question with every kept one: time it alone.
            questions = [line.split("\t")[3] for line in data.decode().splitlines()[1:]]
            start = time.perf_counter()
            find_duplicates(questions, threshold=90)
            search = time.perf_counter() - start
            rest = max(took - search, 1e-9)
            print(f"  of which duplicate search {search:6.2f} s; the rest {rest:6.2f} s ({n / rest:,.0f} pairs/s)")
            more = rows(1000, seed=7, first=n).encode()
            start = time.perf_counter()
            services.validation_items_import(project=project, source=ImportSource("more.tsv", data=more), user=None)
            took = time.perf_counter() - start
            print(f"  then 1000 more into those {n}: {took:6.2f} s ({1000 / took:,.0f} pairs/s)")
            start = time.perf_counter()
            _, seeds = services.seed_queries_import(
                project=project, source=ImportSource.of(TEMPLATES), locations=["Doha", "Abu Dhabi"], user=None
            )
            took = time.perf_counter() - start
            assert seeds is not None
            print(f"seed templates x2 locations: {took:6.2f} s, {seeds.added} kept")
        finally:
            Project.objects.filter(pk=project.pk).delete()


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [1000, 5000])
