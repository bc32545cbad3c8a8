"""Scale, first part: a queue's first read in a small project beside a big one, against the same project alone.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/localqa_scale .venv/bin/python bench/scale.py [--big 100000]

PostgreSQL only (the plans it measures are PostgreSQL's). In its own database (default `localqa_scale`, created if
missing and migrated; it deletes and recreates its two projects):

1. Project `scale-big` first, so its rows take the lower ids: `--big` page pairs waiting (new) and `--big` submitted
   items with a revision and an open review slot each (bulk inserts).
2. Project `scale-small` after it: 1,000 pairs (half new) and 1,000 submitted items with open slots.
3. For the annotator's `pair_claim_next` and the reviewer's `review_claim_next` in the small project: the median
   time of 30 claims (each rolled back, so every claim sees the same queue) and the statements one claim sends.
4. Deletes the big project, ANALYZEs, and measures the same claims with the small project alone.

Prints one row per request: alone, beside the big project, the ratio (target: within 1.5 times) and the statements.
The rest of issue 32's table (submit, judge, the coordinator's pages, the long jobs at 10k-1M) is not measured yet.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/localqa_scale")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("REDIS_URL", "")
os.environ.setdefault("ALLOWED_HOSTS", "localhost")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-0123456789")
# base64 of "bench-only-key-not-a-real-secret": encrypts nothing worth keeping
os.environ.setdefault("ENCRYPTION_KEYS", "YmVuY2gtb25seS1rZXktbm90LWEtcmVhbC1zZWNyZXQ=")

LEAD = "𠮶間茶餐廳喺深水埗開咗六十幾年，招牌菜係菠蘿油同埋鴛鴦。"
ROUNDS = 30
BATCH = 5000


def _database() -> None:
    import psycopg

    url = os.environ["DATABASE_URL"]
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            admin.execute(f'CREATE DATABASE "{name}"')


def make_project(slug: str, pairs: int, items: int, people: dict):
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Membership, PagePair, Project, QAItem, QAItemRevision
    from review.models import ReviewSlot

    Project.objects.filter(slug=slug).delete()
    now = timezone.now()
    with transaction.atomic():
        project = Project.objects.create(
            name=slug, slug=slug, local_language="yue", local_wiki="zh-yue", standard_language="cmn",
            standard_wiki="zh",
        )  # fmt: skip
        Membership.objects.bulk_create([
            Membership(project=project, user=people["author"], is_annotator=True),
            Membership(project=project, user=people["annotator"], is_annotator=True),
            Membership(project=project, user=people["reviewer"], is_reviewer=True),
        ])  # fmt: skip
        new = PagePair.objects.bulk_create(
            (PagePair(project=project, local_title=f"茶餐廳 {n}", standard_title=f"茶餐厅 {n}", local_lead=LEAD,
                      standard_lead="茶餐厅。", status=PagePair.Status.NEW if n < pairs else PagePair.Status.SUBMITTED)
             for n in range(pairs + 1)),
            batch_size=BATCH,
        )  # fmt: skip
        done_pair = new[-1]  # the items' pair: written and submitted
        qa_items = QAItem.objects.bulk_create(
            (QAItem(project=project, pair=done_pair, author=people["author"], question=f"问题 {n}？",
                    answer_standard="陈", answer_local="陳", status=QAItem.Status.SUBMITTED, submitted_at=now)
             for n in range(items)),
            batch_size=BATCH,
        )  # fmt: skip
        revisions = QAItemRevision.objects.bulk_create(
            (QAItemRevision(item=item, number=1, question=item.question, answer_standard="陈", answer_local="陳",
                            author=people["author"]) for item in qa_items),
            batch_size=BATCH,
        )  # fmt: skip
        ReviewSlot.objects.bulk_create(
            (ReviewSlot(project=project, item=revision.item, revision=revision, number=1) for revision in revisions),
            batch_size=BATCH,
        )
    return project


def measure(claim: Callable[[], object]) -> tuple[float, int]:
    """Median milliseconds of ROUNDS claims, each rolled back; the statements of one."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    times = []
    for _ in range(ROUNDS):
        with transaction.atomic():
            started = time.perf_counter()
            assert claim() is not None, "the queue is empty"
            times.append((time.perf_counter() - started) * 1000)
            transaction.set_rollback(True)
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        claim()
        transaction.set_rollback(True)
    return statistics.median(times), len(queries)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", type=int, default=100_000)
    args = parser.parse_args()
    _database()

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Project
    from annotation.services.pairs import pair_claim_next
    from review.queue import review_claim_next

    call_command("migrate", verbosity=0)
    people = {name: get_user_model().objects.get_or_create(username=f"scale-{name}")[0]
              for name in ("author", "annotator", "reviewer")}  # fmt: skip
    Project.objects.filter(slug__in=["scale-big", "scale-small"]).delete()
    started = time.perf_counter()
    make_project("scale-big", args.big, args.big, people)
    small = make_project("scale-small", 1000, 1000, people)
    print(f"data: {args.big:,} pairs and {args.big:,} open review slots beside 1,000 and 1,000, "
          f"made in {time.perf_counter() - started:.0f} s")  # fmt: skip

    requests = {
        "queue/next (pair_claim_next)": lambda: pair_claim_next(project=small, user=people["annotator"]),
        "review/next (review_claim_next)": lambda: review_claim_next(project=small, user=people["reviewer"]),
    }
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    beside = {name: measure(claim) for name, claim in requests.items()}
    Project.objects.filter(slug="scale-big").delete()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    alone = {name: measure(claim) for name, claim in requests.items()}

    print(f"\n| request | alone ms | beside {args.big:,} ms | ratio | statements alone / beside | within 1.5× |")
    print("|---|---:|---:|---:|---|---|")
    worst = 0.0
    for name in requests:
        (alone_ms, alone_q), (beside_ms, beside_q) = alone[name], beside[name]
        ratio = beside_ms / alone_ms
        worst = max(worst, ratio)
        ok = "yes" if ratio <= 1.5 and beside_q == alone_q else "no"
        print(f"| {name} | {alone_ms:.2f} | {beside_ms:.2f} | {ratio:.2f} | {alone_q} / {beside_q} | {ok} |")
    print(f"\nmedian of {ROUNDS} claims each, rolled back; worst ratio {worst:.2f}")


if __name__ == "__main__":
    main()
