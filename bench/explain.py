"""EXPLAIN the heavy queries on 20,000 pairs / 100,000 items; fail on a Seq Scan of a big table.

    .venv/bin/python bench/explain.py [--reuse]

Works in the bench database (default `localqa_bench`, the one bench/load.py uses,
created and migrated there). Unless `--reuse`, (re)creates project `bench-explain`
with 20,000 pairs and 100,000 submitted lead items (5 per pair, one span, one
revision and one open review slot each), with bulk inserts, then ANALYZE. Then it
runs the real code paths through the test client, each inside a transaction that is
rolled back, captures every SQL statement they send, and prints EXPLAIN of each:

- queue claim        POST /api/projects/<slug>/queue/next/       (annotator)
- review queue claim POST /api/projects/<slug>/review/next/      (reviewer)
- pair list          GET  /api/projects/<slug>/pairs/            (coordinator)
- item list          GET  /api/projects/<slug>/review/items/     (coordinator)
- dashboard          GET  /api/projects/<slug>/dashboard/        (coordinator)

A Seq Scan on a big table (pairs, items, spans, revisions, review slots, judgments)
in the queue claims and lists fails the run; with `--analyze`, one that keeps more rows
than its filter discards does not (a page count over a project that fills the table
reads every row whatever the plan). The dashboard counts every item of the
project, so a scan there is reported (with the rows it reads) but does not fail it.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SLUG = "bench-explain"
PAIRS = 20_000
ITEMS_PER_PAIR = 5
BIG = (
    "annotation_pagepair",
    "annotation_qaitem",
    "annotation_evidencespan",
    "annotation_qaitemrevision",
    "review_reviewslot",
    "review_judgment",
)


class Rollback(Exception):
    pass


def create_data() -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.models import EvidenceSpan, Membership, PagePair, Project, QAItem, QAItemRevision
    from bench.load import LEAD, STANDARD
    from review.models import ReviewSlot

    started = time.perf_counter()
    Project.objects.filter(slug=SLUG).delete()
    User = get_user_model()
    names = ["explain-author", "explain-annotator", "explain-reviewer", "explain-coordinator"]
    User.objects.bulk_create([User(username=n) for n in names], ignore_conflicts=True)
    users = {u.username: u for u in User.objects.filter(username__in=names)}
    author = users["explain-author"]
    now = timezone.now()
    start = LEAD.index("老闆姓陳")
    with transaction.atomic():
        project = Project.objects.create(
            name="Bench explain", slug=SLUG, local_language="yue", local_wiki="zh-yue",
            standard_language="cmn", standard_wiki="zh",
        )  # fmt: skip
        Membership.objects.bulk_create(
            [
                Membership(project=project, user=author, is_annotator=True),
                Membership(project=project, user=users["explain-annotator"], is_annotator=True),
                Membership(project=project, user=users["explain-reviewer"], is_reviewer=True),
                Membership(project=project, user=users["explain-coordinator"], is_coordinator=True),
            ]
        )
        submitted = PAIRS - PAIRS // 10  # the last tenth still waits in the annotation queue
        pairs = PagePair.objects.bulk_create(
            (
                PagePair(project=project, local_title=f"茶餐廳 {n}", standard_title=f"茶餐厅 {n}", local_lead=LEAD,
                         standard_lead=STANDARD, local_lead_length=len(LEAD), standard_lead_length=len(STANDARD),
                         status="submitted" if n < submitted else "new", assignee=author if n < submitted else None,
                         screening_decision="annotate" if n < submitted else "")
                for n in range(PAIRS)
            ),
            batch_size=5000,
        )  # fmt: skip
        items = QAItem.objects.bulk_create(
            (
                QAItem(project=project, pair=pair, author=author, question=f"问题 {pair.pk}-{k}？",
                       answer_standard="陈", answer_local="陳", status="submitted", submitted_at=now)
                for pair in pairs
                for k in range(ITEMS_PER_PAIR)
            ),
            batch_size=5000,
        )  # fmt: skip
        EvidenceSpan.objects.bulk_create(
            (EvidenceSpan(item=item, start=start, end=start + 4, text="老闆姓陳") for item in items), batch_size=5000
        )
        revisions = QAItemRevision.objects.bulk_create(
            (QAItemRevision(item=item, number=1, question=item.question, answer_standard="陈", answer_local="陳",
                            author=author) for item in items),
            batch_size=5000,
        )  # fmt: skip
        ReviewSlot.objects.bulk_create(
            (ReviewSlot(project=project, item=revision.item, revision=revision, number=1) for revision in revisions),
            batch_size=5000,
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    took = time.perf_counter() - started
    print(f"created {PAIRS} pairs and {len(items)} items (spans, revisions, review slots) in {took:.0f} s")


def capture(client, method: str, url: str) -> list[str]:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        try:
            with transaction.atomic():
                response = getattr(client, method)(url)
                if response.status_code >= 400:
                    raise SystemExit(f"{method.upper()} {url}: {response.status_code} {response.content[:300]!r}")
                raise Rollback
        except Rollback:
            pass
    return [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith(("SELECT", "UPDATE"))]


def explain(sql: str, analyze: bool) -> str:
    """The plan; with `analyze`, run it too (in a transaction rolled back) for the real row counts and times."""
    from django.db import connection, transaction

    lines: list[str] = []
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(("EXPLAIN (ANALYZE, BUFFERS) " if analyze else "EXPLAIN ") + sql)
            lines = [row[0] for row in cursor.fetchall()]
            raise Rollback
    except Rollback:
        pass
    return "\n".join(lines)


def seq_scans(plan: str) -> list[tuple[str, int, int | None]]:
    """(table, rows kept, rows discarded by its filter) of each Seq Scan; the counts only from EXPLAIN ANALYZE.

    A Seq Scan that keeps most of what it reads (counting a project that fills the
    table) is the right plan; one that discards more than it keeps wanted an index.
    """
    scans: list[tuple[str, int, int | None]] = []
    lines = plan.splitlines()
    for number, line in enumerate(lines):
        found = re.search(r"Seq Scan on (\w+).*?(?:actual time=\S+ rows=(\d+) loops=(\d+))?\)?$", line)
        if not found:
            continue
        kept = int(found.group(2) or 0) * int(found.group(3) or 1)
        removed = None
        if found.group(2) is not None:
            removed = 0
            for detail in lines[number + 1 : number + 4]:
                filtered = re.search(r"Rows Removed by Filter: (\d+)", detail)
                if filtered:
                    removed = int(filtered.group(1)) * int(found.group(3) or 1)
                    break
        scans.append((found.group(1), kept, removed))
    return scans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reuse", action="store_true", help="keep the project of the last run")
    parser.add_argument("--analyze", action="store_true", help="EXPLAIN ANALYZE: run each statement for its times")
    args = parser.parse_args()
    from bench import load

    load.check_database_url()
    env = load.server_env(8100)
    env["ALLOWED_HOSTS"] = "testserver"
    os.environ.update(env)
    load.ensure_database()
    load.migrate(env)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotation.models import Project

    if not args.reuse or not Project.objects.filter(slug=SLUG).exists():
        create_data()
    from django.db import connection

    with connection.cursor() as cursor:  # fresh statistics (other bench scripts load this database too)
        cursor.execute("ANALYZE")
    User = get_user_model()
    clients = {}
    for role in ("annotator", "reviewer", "coordinator"):
        clients[role] = Client()
        clients[role].force_login(User.objects.get(username=f"explain-{role}"))
    p = f"/api/projects/{SLUG}"
    cases = [
        ("queue claim", "annotator", "post", f"{p}/queue/next/", True),
        ("review queue claim", "reviewer", "post", f"{p}/review/next/", True),
        ("pair list", "coordinator", "get", f"{p}/pairs/", True),
        ("pair list, submitted", "coordinator", "get", f"{p}/pairs/?status=submitted", True),
        ("item list", "coordinator", "get", f"{p}/review/items/", True),
        ("item list, accepted", "coordinator", "get", f"{p}/review/items/?status=accepted", True),
        ("dashboard", "coordinator", "get", f"{p}/dashboard/", False),
    ]
    failures = []
    summary: list[str] = []
    for name, role, method, url, strict in cases:
        statements = capture(clients[role], method, url)
        print(f"\n==== {name}: {method.upper()} {url} ({len(statements)} statements)")
        total = 0.0
        for sql in statements:
            plan = explain(sql, args.analyze)
            took = re.search(r"Execution Time: ([0-9.]+) ms", plan)
            total += float(took.group(1)) if took else 0.0
            print(f"\n-- {sql[:400]}{' …' if len(sql) > 400 else ''}\n{plan}")
            for table, kept, removed in seq_scans(plan):
                if table in BIG and (removed is None or removed > kept):
                    line = f"{name}: Seq Scan on {table}"
                    if removed is not None:
                        line += f" (kept {kept} rows, discarded {removed})"
                    if strict:
                        failures.append(line)
                    else:
                        print(f"   (reported, not failed: {line})")
        if args.analyze:
            summary.append(f"{name:<22} {len(statements):>3} statements, {total:8.1f} ms in the database")
    print("\n" + "\n".join(summary))
    print("\n" + ("no Seq Scan on a big table in the queue claims and lists" if not failures else "\n".join(failures)))
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
