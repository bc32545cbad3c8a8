"""Scale: a request in a small project costs the same with a big platform around it as with the project alone.

    .venv/bin/python bench/scale.py [--projects 100] [--pairs 1000000] [--items 1000000] [--small-pairs 10000]
                                    [--reuse]

PostgreSQL only (the plans it measures are PostgreSQL's). Two databases of its own (created if missing and
migrated): `localqa_scale` (`BENCH_DATABASE_URL`) holds the platform, `localqa_scale_alone` the small project only.

The platform: `--projects` projects of the four kinds in turn (Wikipedia QA, validation, trivia, entity questions),
sharing `--pairs` page pairs (the Wikipedia QA projects) and `--items` items (all of them) evenly, with bulk
inserts: half of each project's items submitted with a revision and an open review slot, half accepted with a
done slot and its three judgments; validation and trivia items carry their kind's row (trivia ones waiting for a
translator). Half the projects are made before the small project and half after, so its rows sit among theirs
(a read that walks ids finds other projects' rows on both sides).

The small project (`scale-small`, Wikipedia QA): `--small-pairs` pairs, a tenth of them written (2 items each,
half submitted with an open slot, half accepted with judgments), the rest new; an annotator holding a pair with
two complete items, a reviewer holding a slot.

For each request (the hot ones through the API as an annotator or reviewer, the coordinator's pages as the
coordinator, through Django's test client and the whole middleware stack): the median time of `ROUNDS` requests,
each in a transaction rolled back (every request sees the same data), the SQL statements of one and the table rows
those statements read (EXPLAIN ANALYZE: returned plus filtered out, which the machine's load does not change). Each
database is measured in a process of its own; the table compares them (target: within 1.5 times, the same
statements, no more rows read than 1.5 times).

PostgreSQL's planner settings change which plan reads the rows: run it as the server is configured (the compose
file's `random_page_cost=1.1`: `PGOPTIONS="-c random_page_cost=1.1"`), and with the default (4) to compare.

The long jobs of one project, at each size:

    .venv/bin/python bench/scale.py --jobs 10000 100000 [--only release agreement import archive]

runs the benchmark each job already has, one after another, on `localqa_scale_jobs` (`BENCH_JOBS_DATABASE_URL`),
each with the size given: the release build (bench/release_build.py), the agreement report (bench/agreement_report.py,
bootstrap 1,000), the pair import (bench/import_pairs.py, one run) and the archive export and import
(bench/archive.py). Each measures its job in a process of its own (wall and CPU seconds, peak resident memory) and
prints its own table; this prints the machine's load average before and after each, since the wall-clock times
depend on it (CPU seconds and memory much less).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PLATFORM_DB = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/localqa_scale")
JOBS_DB = os.environ.get("BENCH_JOBS_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/localqa_scale_jobs")
ALONE_DB = PLATFORM_DB + "_alone"
os.environ.setdefault("DATABASE_URL", PLATFORM_DB)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("REDIS_URL", "")
os.environ.setdefault("ALLOWED_HOSTS", "localhost,testserver")
os.environ.setdefault("STATIC_MANIFEST", "false")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("API_THROTTLE_USER", "1000000/min")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-0123456789")
# base64 of "bench-only-key-not-a-real-secret": encrypts nothing worth keeping
os.environ.setdefault("ENCRYPTION_KEYS", "YmVuY2gtb25seS1rZXktbm90LWEtcmVhbC1zZWNyZXQ=")

LEAD = "𠮶間茶餐廳喺深水埗開咗六十幾年，招牌菜係菠蘿油同埋鴛鴦，老闆姓陳，逢星期三休息。"
STANDARD = "这是一家位于深水埗的茶餐厅，以菠萝包闻名，老板姓陈，逢星期三休息。"
EVIDENCE = ("深水埗", "姓陳")
KINDS = ("wikipedia_qa", "validation", "trivia", "entity_qa")
SMALL = "scale-small"
ROUNDS = 15
BATCH = 5000


def _database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            admin.execute(f'CREATE DATABASE "{name}"')


def people() -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    names = ("author", "annotator", "writer", "reviewer", "judge", "coordinator")
    return {name: get_user_model().objects.get_or_create(username=f"scale-{name}")[0] for name in names}


def bulk_project(slug: str, kind: str, pairs: int, items: int, cast: dict[str, Any]):
    """A project of `kind` with `pairs` new pairs and `items` items (half in review, half accepted), in bulk."""
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Membership, PagePair, Project, QAItem, QAItemRevision
    from multichoice.models import TriviaItem
    from review.models import Judgment, ReviewSlot
    from validation.models import ValidationItem

    now = timezone.now()
    with transaction.atomic():
        project = Project.objects.create(
            name=slug, slug=slug, kind=kind, local_language="yue", local_wiki="zh-yue", standard_language="cmn",
            standard_wiki="zh",
        )  # fmt: skip
        Membership.objects.bulk_create([
            Membership(project=project, user=cast["author"], is_annotator=True),
            Membership(project=project, user=cast["annotator"], is_annotator=True),
            Membership(project=project, user=cast["writer"], is_annotator=True),
            Membership(project=project, user=cast["reviewer"], is_reviewer=True),
            Membership(project=project, user=cast["judge"], is_reviewer=True),
            Membership(project=project, user=cast["coordinator"], is_coordinator=True),
        ])  # fmt: skip
        made = PagePair.objects.bulk_create(
            (PagePair(project=project, local_title=f"茶餐廳 {n}", standard_title=f"茶餐厅 {n}", local_lead=LEAD,
                      standard_lead=STANDARD, local_lead_length=len(LEAD), standard_lead_length=len(STANDARD),
                      status=PagePair.Status.NEW if n < pairs else PagePair.Status.SUBMITTED)
             for n in range(pairs + 1)),
            batch_size=BATCH,
        )  # fmt: skip
        done_pair = made[-1]  # the items' pair: written and submitted
        accepted = items // 2
        qa_items = QAItem.objects.bulk_create(
            (QAItem(project=project, pair=done_pair, author=cast["author"], question=f"问题 {n}？",
                    answer_standard="陈", answer_local="陳", submitted_at=now,
                    status=QAItem.Status.ACCEPTED if n < accepted else QAItem.Status.SUBMITTED)
             for n in range(items)),
            batch_size=BATCH,
        )  # fmt: skip
        revisions = QAItemRevision.objects.bulk_create(
            (QAItemRevision(item=item, number=1, question=item.question, answer_standard="陈", answer_local="陳",
                            author=cast["author"]) for item in qa_items),
            batch_size=BATCH,
        )  # fmt: skip
        slots = ReviewSlot.objects.bulk_create(
            (ReviewSlot(project=project, item=revision.item, revision=revision, number=1,
                        **({"status": ReviewSlot.Status.DONE, "reviewer": cast["judge"], "completed_at": now}
                           if revision.item.status == QAItem.Status.ACCEPTED else {}))
             for revision in revisions),
            batch_size=BATCH,
        )  # fmt: skip
        criteria = [criterion["key"] for criterion in project.review_criteria]
        Judgment.objects.bulk_create(
            (Judgment(project=project, slot=slot, item=slot.item, revision=slot.revision, reviewer=cast["judge"],
                      criterion=key, verdict=Judgment.Verdict.PASS)
             for slot in slots if slot.status == ReviewSlot.Status.DONE for key in criteria),
            batch_size=BATCH,
        )  # fmt: skip
        if kind == "validation":
            ValidationItem.objects.bulk_create(
                (ValidationItem(item=item, project=project, original_answer="陈", language="cmn") for item in qa_items),
                batch_size=BATCH,
            )
        elif kind == "trivia":
            TriviaItem.objects.bulk_create(
                (TriviaItem(item=item, project=project, category="food", subset="local", difficulty="easy",
                            candidates=["陈", "李", "张", "王"], answer=0) for item in qa_items),
                batch_size=BATCH,
            )  # fmt: skip
    return project


def small_project(pairs: int, cast: dict[str, Any]):
    """The measured project: `pairs` pairs, a tenth written; a pair held with two complete items, a slot held."""
    from annotation.models import Project
    from annotation.services.items import qa_item_create
    from annotation.services.pairs import pair_claim_next, pair_screen
    from review.queue import review_claim_next

    written = pairs // 10
    project = bulk_project(SMALL, "wikipedia_qa", pairs - 1, 2 * written, cast)
    Project.objects.filter(pk=project.pk).update(lead_qa_min=2, lead_qa_max=3)
    project.refresh_from_db()
    held = pair_claim_next(project=project, user=cast["writer"])
    assert held is not None
    pair_screen(pair=held, user=cast["writer"], decision="annotate")
    for evidence in EVIDENCE:
        start = LEAD.index(evidence)
        qa_item_create(
            pair=held, user=cast["writer"], question=f"关于{evidence}的问题？", answer_standard=evidence,
            answer_local=evidence, spans=[{"start": start, "end": start + len(evidence), "text": evidence}],
        )  # fmt: skip
    assert review_claim_next(project=project, user=cast["judge"]) is not None
    return project


def build(args: argparse.Namespace, platform: bool) -> float:
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Project

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    Project.objects.filter(slug__startswith="scale-").delete()
    cast = people()
    count = args.projects if platform else 0
    wikipedia = [n for n in range(count) if KINDS[n % len(KINDS)] == "wikipedia_qa"]
    for n in range(count):
        if n == count // 2:
            small_project(args.small_pairs, cast)
        kind = KINDS[n % len(KINDS)]
        pairs = args.pairs // len(wikipedia) if kind == "wikipedia_qa" else 0
        bulk_project(f"scale-{n:03d}", kind, pairs, args.items // count, cast)
        print(f"  project {n + 1}/{count} ({kind}) at {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if not count:
        small_project(args.small_pairs, cast)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return time.perf_counter() - started


def requests(cast: dict[str, Any]) -> dict[str, tuple[Any, str, str, dict[str, Any] | None]]:
    """name: (who, method, path, JSON body)."""
    from django.urls import reverse

    from annotation.models import PagePair, Project, QAItem
    from review.models import ReviewSlot

    project = Project.objects.get(slug=SMALL)
    api = f"/api/projects/{SMALL}"
    held = PagePair.objects.get(project=project, assignee=cast["writer"], status=PagePair.Status.ANNOTATING)
    item = QAItem.objects.filter(pair=held).order_by("id").first()
    assert item is not None
    slot = ReviewSlot.objects.get(project=project, reviewer=cast["judge"], status=ReviewSlot.Status.CLAIMED)
    start = LEAD.index(EVIDENCE[0])
    save = {"version": item.version, "question": "关于深水埗的问题，改过？", "answer_standard": "深水埗",
            "answer_local": "深水埗", "spans": [{"start": start, "end": start + 3, "text": "深水埗"}]}  # fmt: skip
    judgments = {c["key"]: {"verdict": "pass", "comment": ""} for c in project.review_criteria}
    items = reverse("item_list", args=[SMALL])
    filtered = f"{items}?status=submitted&text=深水埗&kind=lead"
    return {
        "POST queue/next": (cast["annotator"], "post", f"{api}/queue/next/", None),
        "PATCH items/{id} (save)": (cast["writer"], "patch", f"{api}/items/{item.pk}/", save),
        "POST pairs/{id}/submit": (cast["writer"], "post", f"{api}/pairs/{held.pk}/submit/", None),
        "POST review/next": (cast["reviewer"], "post", f"{api}/review/next/", None),
        "POST review/slots/{id} (judge)": (
            cast["judge"],
            "post",
            f"{api}/review/slots/{slot.pk}/",
            {"version": slot.version, "judgments": judgments},
        ),
        "GET dashboard page": (cast["coordinator"], "get", reverse("dashboard", args=[SMALL]), None),
        "GET releases/readiness (API)": (cast["coordinator"], "get", f"{api}/releases/readiness/", None),
        "GET releases page (readiness)": (cast["coordinator"], "get", reverse("release_list", args=[SMALL]), None),
        "GET items page": (cast["coordinator"], "get", items, None),
        "GET items page, filtered": (cast["coordinator"], "get", filtered, None),
    }


def measure(cast: dict[str, Any]) -> dict[str, tuple[float, int, int]]:
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    results = {}
    for name, (who, method, path, body) in requests(cast).items():
        client = Client()
        client.force_login(who)

        def send(client: Client = client, method: str = method, path: str = path, body: Any = body) -> int:
            call: Callable[..., Any] = getattr(client, method)
            kwargs = {"data": json.dumps(body), "content_type": "application/json"} if body is not None else {}
            return call(path, **kwargs).status_code

        times = []
        for _ in range(ROUNDS + 1):
            with transaction.atomic():
                started = time.perf_counter()
                status = send()
                times.append((time.perf_counter() - started) * 1000)
                transaction.set_rollback(True)
            assert status < 400, f"{name}: {status}"
        with transaction.atomic(), CaptureQueriesContext(connection) as queries:
            send()
            transaction.set_rollback(True)
        statements = [query["sql"] for query in queries.captured_queries]
        results[name] = (statistics.median(times[1:]), len(queries), rows_read(statements))  # the first warms up
    return results


def rows_read(statements: list[str]) -> int:
    """The table rows the request's reads touch, as PostgreSQL ran them (EXPLAIN ANALYZE of each SELECT, rolled
    back): rows returned plus rows discarded by a filter, times loops, over every scan. Unlike time, this does not
    depend on the machine's load."""
    from django.db import connection, transaction

    def nodes(node: dict[str, Any]) -> Any:
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    total = 0
    for sql in statements:
        if not sql.lstrip().upper().startswith("SELECT"):
            continue
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
            plan = cursor.fetchone()[0]
            transaction.set_rollback(True)
        plan = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
        for node in nodes(plan):
            if "Relation Name" in node:
                touched = node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
                total += touched * node.get("Actual Loops", 1)
    return total


JOBS: dict[str, Callable[[list[int]], list[list[str]]]] = {
    "release": lambda sizes: [["release_build.py", "--sizes", *map(str, sizes)]],
    "agreement": lambda sizes: [["agreement_report.py", "--items", str(size)] for size in sizes],
    "import": lambda sizes: [["import_pairs.py", "--repeat", "1", "--sizes", *map(str, sizes)]],
    "archive": lambda sizes: [["archive.py", *map(str, sizes)]],
}


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)"


def long_jobs(sizes: list[int], only: list[str]) -> None:
    """Each long job's own benchmark at `sizes`, on a database of its own, with the load around it."""
    _database(JOBS_DB)
    env = {**os.environ, "DATABASE_URL": JOBS_DB}
    # Not every job's script migrates (the archive's does not): a new database gets its tables here.
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "--noinput", "-v", "0"], env=env, check=True)
    for name in only:
        for command in JOBS[name](sizes):
            print(f"\n$ bench/{' '.join(command)}    # {_load()}", flush=True)
            started = time.perf_counter()
            subprocess.run([sys.executable, str(ROOT / "bench" / command[0]), *command[1:]], env=env, check=True)
            print(f"({time.perf_counter() - started:.0f} s with its data; after: {_load()})", flush=True)


def child(args: argparse.Namespace) -> None:
    import django

    django.setup()
    platform = os.environ["DATABASE_URL"] == PLATFORM_DB
    took = None if args.reuse else build(args, platform)
    cast = people()
    print(json.dumps({"built_seconds": took, "results": measure(cast)}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=1_000_000, help="page pairs of the whole platform")
    parser.add_argument("--items", type=int, default=1_000_000, help="items of the whole platform")
    parser.add_argument("--small-pairs", type=int, default=10_000)
    parser.add_argument("--reuse", action="store_true", help="measure the databases a previous run built")
    parser.add_argument("--jobs", type=int, nargs="+", metavar="SIZE", help="the long jobs at these sizes instead")
    parser.add_argument("--only", nargs="+", choices=list(JOBS), default=list(JOBS), help="which long jobs")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.jobs:
        return long_jobs(args.jobs, args.only)
    runs = {}
    for label, url in (("alone", ALONE_DB), ("platform", PLATFORM_DB)):
        _database(url)
        done = subprocess.run(
            [sys.executable, __file__, "--child", *sys.argv[1:]],
            env={**os.environ, "DATABASE_URL": url}, stdout=subprocess.PIPE, text=True, check=True,
        )  # fmt: skip
        runs[label] = json.loads(done.stdout.strip().splitlines()[-1])
    built = runs["platform"]["built_seconds"]
    print(f"platform: {args.projects} projects of 4 kinds, {args.pairs:,} pairs and {args.items:,} items in all "
          f"(each item a revision, a review slot, three judgments if accepted), around `{SMALL}` of "
          f"{args.small_pairs:,} pairs" + (f"; built in {built:.0f} s" if built else ""))  # fmt: skip
    print("\n| request | alone ms | in the platform ms | ratio | statements alone / platform "
          "| rows read alone / platform | within 1.5× |")  # fmt: skip
    print("|---|---:|---:|---:|---|---|---|")
    worst = 0.0
    for name, (alone_ms, alone_q, alone_rows) in runs["alone"]["results"].items():
        beside_ms, beside_q, beside_rows = runs["platform"]["results"][name]
        ratio = beside_ms / alone_ms
        worst = max(worst, ratio)
        ok = "yes" if ratio <= 1.5 and beside_q == alone_q and beside_rows <= 1.5 * alone_rows else "no"
        print(f"| {name} | {alone_ms:.1f} | {beside_ms:.1f} | {ratio:.2f} | {alone_q} / {beside_q} "
              f"| {alone_rows:,} / {beside_rows:,} | {ok} |")  # fmt: skip
    print(f"\nmedian of {ROUNDS} requests each (after one to warm up), each rolled back; worst ratio {worst:.2f}")


if __name__ == "__main__":
    main()
