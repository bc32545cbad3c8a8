"""Time the audit log's page query on a big project: 100,000 items, 400,000 item events, 50,000 audit rows.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/localqa_audit_bench .venv/bin/python bench/audit_log.py [--reuse]

The log reads audit rows and review.ItemEvent rows as one list (a UNION ALL ordered by time), so its cost
grows with the project's item history. Prints the median of 5 runs of one page (50 rows, with names) and
of its count, unfiltered and with each filter, for one project and for every project (superusers).

2026-11-30, the shared 2-core machine (ms, median of 5; page = 50 rows with names):

    case                                page of 50 ms   count ms      rows
    project, no filter                          232.0      191.4   450,001
    project, one person                         102.1       93.9    45,000
    project, action item.accepted               153.2      115.5   100,000
    project, action pair.screened                 9.9       13.1    50,000
    project, one object                           8.5        1.8         4
    every project                                90.6       50.1   450,001

Before the page was found in two steps (keys first, then the page's full rows) the unfiltered project page
took 2,095 ms and its count 2,099 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SLUG = "bench-audit"
PAIRS, ITEMS_PER_PAIR, EVENTS_PER_ITEM, AUDIT_ROWS = 20_000, 5, 4, 50_000


def create_data() -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from annotation.models import ItemEvent, PagePair, Project, QAItem
    from annotation.services.projects import project_create
    from audit.models import AuditEvent

    Project.all_objects.filter(slug=SLUG).delete()
    users = [get_user_model().objects.get_or_create(username=f"bench-audit-{n}")[0] for n in range(10)]
    project = project_create(name="Bench audit", slug=SLUG, local_language="yue", standard_language="cmn")
    start = timezone.now() - timedelta(days=200)
    pairs = PagePair.objects.bulk_create(
        PagePair(project=project, local_title=f"p{n}", standard_title=f"s{n}", local_lead="x", standard_lead="y")
        for n in range(PAIRS)
    )
    items = QAItem.objects.bulk_create(
        QAItem(project=project, pair=pair, author=users[n % 10], question=f"q{pair.pk}-{n}", status="accepted")
        for pair in pairs
        for n in range(ITEMS_PER_PAIR)
    )
    actions = ["submitted", "claimed", "reviewed", "accepted"]
    ItemEvent.objects.bulk_create(
        (
            ItemEvent(
                item=item,
                actor=users[(i + e) % 10],
                action=actions[e],
                created_at=start + timedelta(seconds=i * 30 + e),
            )
            for i, item in enumerate(items)
            for e in range(EVENTS_PER_ITEM)
        ),
        batch_size=10_000,
    )
    AuditEvent.objects.bulk_create(
        (
            AuditEvent(
                project=project,
                actor=users[n % 10],
                action="pair.screened",
                object_type="pair",
                object_id=pairs[n % PAIRS].pk,
                details={"decision": "annotate"},
                created_at=start + timedelta(seconds=n * 300),
            )
            for n in range(AUDIT_ROWS)
        ),
        batch_size=10_000,
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def median_ms(function) -> float:
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        function()
        runs.append((time.perf_counter() - started) * 1000)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reuse", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from annotation import audit_log as services
    from annotation.models import Project

    if not args.reuse or not Project.all_objects.filter(slug=SLUG).exists():
        started = time.perf_counter()
        create_data()
        print(f"data created in {time.perf_counter() - started:.0f} s")
    project = Project.objects.get(slug=SLUG)
    one_item = project.items.first()
    assert one_item is not None
    cases = {
        "project, no filter": (project, services.EventFilter()),
        "project, one person": (project, services.EventFilter(actor="bench-audit-3")),
        "project, action item.accepted": (project, services.EventFilter(action="item.accepted")),
        "project, action pair.screened": (project, services.EventFilter(action="pair.screened")),
        "project, one object": (project, services.EventFilter(object_type="item", object_id=one_item.pk)),
        "every project": (None, services.EventFilter()),
    }
    print(f"{'case':34} {'page of 50 ms':>14} {'count ms':>10} {'rows':>9}")
    for name, (scope, flt) in cases.items():
        query = services.events(project=scope, flt=flt)
        page = median_ms(lambda q=query: services.describe(list(q[:50])))
        count = median_ms(lambda q=query: q.count())
        print(f"{name:34} {page:14.1f} {count:10.1f} {query.count():9,}")


if __name__ == "__main__":
    main()
