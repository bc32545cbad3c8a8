"""Benchmark: reviewers working through the review queue at once, and the dashboard on a big project.

    DATABASE_URL=postgres://... .venv/bin/python bench/review_queue.py [--items 5000] [--reviewers 16]

A project `bench-review` is (re)created with N submitted lead items (one revision
and one review slot each, bulk-created). R reviewer threads, each with its own
database connection, then loop: claim the next slot (review_claim_next), record
all-pass judgments (review_submit), until the queue is empty. Reported: reviews per
second, that every slot was filled exactly once, the slowest claim; then the time and
query count of the coordinator's numbers (project_statistics) and of the review queue
list on the decided project. Targets: no slot filled twice; at least 20 reviews/s with
16 reviewers (a person reviews about one item a minute; one review is ~25 queries, so
the rate follows the database's commit latency); the dashboard numbers under 1 s at
5,000 items. Run it on a fresh database: it deletes and recreates its project.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("ALLOWED_HOSTS", "localhost")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-0123456789")
# base64 of "bench-only-key-not-a-real-secret": encrypts nothing worth keeping
os.environ.setdefault("ENCRYPTION_KEYS", "YmVuY2gtb25seS1rZXktbm90LWEtcmVhbC1zZWNyZXQ=")

LEAD = "𠮶間茶餐廳喺深水埗開咗六十幾年，招牌菜係菠蘿油同埋鴛鴦，老闆姓陳，逢星期三休息。"


def create_project(items: int, reviewers: int):
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import EvidenceSpan, Membership, PagePair, Project, QAItem, QAItemRevision
    from review.models import ReviewSlot

    Project.objects.filter(slug="bench-review").delete()
    User = get_user_model()
    users = []
    for name in ["bench-author", *(f"bench-reviewer-{i}" for i in range(reviewers))]:
        user, _ = User.objects.get_or_create(username=name)
        users.append(user)
    author, reviewer_users = users[0], users[1:]
    now = timezone.now()
    with transaction.atomic():
        project = Project.objects.create(
            name="Bench review", slug="bench-review", local_language="yue", local_wiki="zh-yue",
            standard_language="cmn", standard_wiki="zh",
        )  # fmt: skip
        Membership.objects.create(project=project, user=author, is_annotator=True)
        Membership.objects.bulk_create(
            Membership(project=project, user=user, is_reviewer=True) for user in reviewer_users
        )
        pairs = PagePair.objects.bulk_create(
            PagePair(project=project, local_title=f"茶餐廳 {n}", standard_title=f"茶餐厅 {n}", local_lead=LEAD,
                     standard_lead="茶餐厅。", local_lead_length=len(LEAD), standard_lead_length=4,
                     status=PagePair.Status.SUBMITTED, screening_decision="annotate", assignee=author)
            for n in range((items + 1) // 2)
        )  # fmt: skip
        qa_items = QAItem.objects.bulk_create(
            QAItem(project=project, pair=pairs[n // 2], author=author, question=f"问题 {n}？", answer_standard="陈",
                   answer_local="陳", status=QAItem.Status.SUBMITTED, submitted_at=now)
            for n in range(items)
        )  # fmt: skip
        start = LEAD.index("老闆姓陳")
        EvidenceSpan.objects.bulk_create(
            EvidenceSpan(item=item, start=start, end=start + 4, text="老闆姓陳") for item in qa_items
        )
        revisions = QAItemRevision.objects.bulk_create(
            QAItemRevision(item=item, number=1, question=item.question, answer_standard="陈", answer_local="陳",
                           author=author)
            for item in qa_items
        )  # fmt: skip
        ReviewSlot.objects.bulk_create(
            ReviewSlot(project=project, item=revision.item, revision=revision, number=1) for revision in revisions
        )
    from django.db import connection

    with connection.cursor() as cursor:  # fresh statistics, as autovacuum would have them after a bulk load
        cursor.execute("ANALYZE")
    return project, reviewer_users


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--reviewers", type=int, default=16)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.models import QAItem
    from review import judging as review_judging
    from review import queue as review_queue
    from review import statistics as review_statistics
    from review.models import Judgment, ReviewSlot
    from review.views.queue import ReviewFilter, review_items

    project, reviewers = create_project(args.items, args.reviewers)
    judgments = {c["key"]: {"verdict": "pass", "comment": ""} for c in project.review_criteria}
    done: list[list[int]] = [[] for _ in reviewers]
    slowest = [0.0]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(reviewers))

    def work(index: int) -> None:
        user = reviewers[index]
        try:
            barrier.wait()
            while True:
                started = time.perf_counter()
                slot = review_queue.review_claim_next(project=project, user=user)
                slowest[0] = max(slowest[0], time.perf_counter() - started)
                if slot is None:
                    return
                review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)
                done[index].append(slot.pk)
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(reviewers))]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    if errors:
        raise SystemExit(f"errors: {errors[:3]}")
    filled = [pk for slots in done for pk in slots]
    unique = len(set(filled))
    accepted = QAItem.objects.filter(project=project, status=QAItem.Status.ACCEPTED).count()
    print(f"{args.items} items, {len(reviewers)} reviewers: {len(filled)} reviews in {seconds:.2f} s "
          f"= {len(filled) / seconds:.0f} reviews/s; slowest claim {slowest[0] * 1000:.0f} ms")  # fmt: skip
    print(f"slots filled once: {unique == len(filled) == args.items}; accepted items: {accepted}; "
          f"judgment rows: {Judgment.objects.filter(item__project=project).count()}; "
          f"open slots left: {ReviewSlot.objects.filter(item__project=project, status='open').count()}")  # fmt: skip
    per_reviewer = sorted(len(slots) for slots in done)
    print(f"reviews per reviewer: min {per_reviewer[0]}, max {per_reviewer[-1]}")

    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        stats = review_statistics.project_statistics(project)
        dashboard = time.perf_counter() - started
    print(f"dashboard numbers: {dashboard * 1000:.0f} ms, {len(queries)} queries "
          f"(accepted {stats['items']['accepted']}, reviewers {len(stats['reviewers'])})")  # fmt: skip
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        first_page = list(review_items(project, ReviewFilter(status="accepted"))[:50])
        listing = time.perf_counter() - started
    print(f"review list, first page of {len(first_page)}: {listing * 1000:.0f} ms, {len(queries)} queries")
    ok = unique == len(filled) == args.items and dashboard < 1.0 and len(filled) / seconds >= 20
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
