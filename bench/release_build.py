"""Benchmark: build a release of a project with N accepted items on PostgreSQL.

    DATABASE_URL=postgres://... .venv/bin/python bench/release_build.py [--sizes 10000 100000]

For each size, a project `bench-release-N` is (re)created with N accepted lead
QAs (about 2.5 per page pair, one evidence span and one revision each, leads of
a few hundred characters with characters outside the BMP; each item reviewed once
and verified on the standard page, each pair labelled with a topic and a region,
as in a finished study, so every line carries review data), then a separate
process builds and publishes one release of it, exactly as the worker does
(`exports.services.release_build`), and then the next release of the same seed, which
keeps each page pair's split from the first one's manifest. The build process reports wall-clock
seconds, CPU seconds, items per second and its peak resident memory (VmHWM),
and the memory it had before the build started, so the growth is the build's own.
Target: at least 20,000 items/s, and memory that does not grow with N.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "true")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("ALLOWED_HOSTS", "localhost")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-0123456789")
# base64 of "bench-only-key-not-a-real-secret": encrypts nothing worth keeping
os.environ.setdefault("ENCRYPTION_KEYS", "YmVuY2gtb25seS1rZXktbm90LWEtcmVhbC1zZWNyZXQ=")

LOCAL = "𠮶間茶餐廳喺深水埗開咗六十幾年，招牌菜係菠蘿油同埋鴛鴦，老闆姓陳，逢星期三休息。"
STANDARD = "这是一家位于深水埗的茶餐厅，以菠萝包闻名。"


def _setup() -> None:
    import django

    django.setup()


def _memory_mb(field: str) -> float:
    """VmRSS (now) or VmHWM (peak) of this process, from /proc: ru_maxrss would carry the parent's peak over exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def create_project(size: int, *, varied: bool = False) -> str:
    """(Re)create the bench project of `size` accepted items; `varied` gives every pair leads of its own
    (bench/import_pairs.py's synthetic texts, about 500 characters), so a zip of the release compresses as
    real text does rather than as one lead repeated."""
    import random

    from django.db import connection, transaction

    from annotation.models import EvidenceSpan, PagePair, Project, QAItem, QAItemRevision
    from bench.import_pairs import SAMPLES, text
    from exports.models import Release
    from review.models import FinalLabel, ReviewSlot, Verification

    slug = f"bench-release-{size}"
    old = Project.objects.filter(slug=slug).first()
    if old is not None:
        Release.objects.filter(project=old).delete()
        old.delete()
    project = Project.objects.create(
        name=f"Bench {size}",
        slug=slug,
        local_language="yue",
        local_wiki="zh-yue",
        standard_language="cmn",
        standard_wiki="zh",
    )
    pairs_needed = (size * 2 + 4) // 5
    local_lead = LOCAL * 6  # ~240 code points, like a real lead section
    standard_lead = STANDARD * 5
    evidence = "菠蘿油同埋鴛鴦"
    start = local_lead.index(evidence)
    span_start = 0 if varied else start
    rng = random.Random(size)
    samples = list(SAMPLES.values())

    def leads(n: int) -> tuple[str, str]:
        if not varied:
            return local_lead, standard_lead
        sample = samples[n % len(samples)]
        local = evidence + text(rng, sample, 500)
        return local, text(rng, sample, 300)

    batch = 5000
    with transaction.atomic():
        pair_ids: list[int] = []
        for offset in range(0, pairs_needed, batch):
            created = PagePair.objects.bulk_create(
                PagePair(
                    project=project,
                    local_title=f"茶餐廳 {n}",
                    standard_title=f"茶餐厅 {n}",
                    local_url=f"https://zh-yue.wikipedia.org/wiki/P{n}",
                    standard_url=f"https://zh.wikipedia.org/wiki/P{n}",
                    local_lead=local,
                    standard_lead=standard,
                    local_lead_length=len(local),
                    standard_lead_length=len(standard),
                    status="submitted",
                    screening_decision="annotate",
                )
                for n in range(offset, min(offset + batch, pairs_needed))
                for local, standard in [leads(n)]
            )
            pair_ids += [pair.pk for pair in created]
            FinalLabel.objects.bulk_create(
                FinalLabel(project=project, pair=pair, kind=kind, value=value, method="agreement")
                for pair in created
                for kind, value in (("topic", "food"), ("region", "local"))
            )
        for offset in range(0, size, batch):
            items = QAItem.objects.bulk_create(
                QAItem(
                    project=project,
                    pair_id=pair_ids[n * 2 // 5],
                    kind="lead",
                    status="accepted",
                    question=f"这家茶餐厅的招牌菜是什么？（{n}）",
                    answer_standard="菠萝油和鸳鸯",
                    answer_local=evidence,
                )
                for n in range(offset, min(offset + batch, size))
            )
            EvidenceSpan.objects.bulk_create(
                EvidenceSpan(item=item, start=span_start, end=span_start + len(evidence), text=evidence)
                for item in items
            )
            revisions = QAItemRevision.objects.bulk_create(
                QAItemRevision(
                    item=item,
                    number=1,
                    question=item.question,
                    answer_standard=item.answer_standard,
                    answer_local=item.answer_local,
                )
                for item in items
            )
            ReviewSlot.objects.bulk_create(
                ReviewSlot(project=project, item_id=revision.item_id, revision=revision, number=1, status="done")
                for revision in revisions
            )
            Verification.objects.bulk_create(
                Verification(
                    item=item,
                    number=1,
                    result="found",
                    sentences=[{"start": 0, "end": len(STANDARD), "text": STANDARD}],
                )
                for item in items
            )
    with connection.cursor() as cursor:  # fresh planner statistics, as autovacuum would give a real project
        for table in (
            "annotation_pagepair",
            "annotation_qaitem",
            "annotation_evidencespan",
            "annotation_qaitemrevision",
            "review_reviewslot",
            "review_verification",
            "review_finallabel",
        ):
            cursor.execute(f"ANALYZE {table}")
    return slug


def _exists(slug: str, size: int) -> bool:
    from annotation.models import QAItem
    from review.models import ReviewSlot

    accepted = QAItem.objects.filter(project__slug=slug, status="accepted").count()
    return accepted == size and ReviewSlot.objects.filter(item__project__slug=slug).count() == size


def build(slug: str) -> dict:
    """In this (fresh) process: request and build one release; report time and memory."""
    from annotation.models import Project
    from exports import services

    project = Project.objects.get(slug=slug)
    before = _memory_mb("VmRSS")
    started, cpu_started = time.perf_counter(), time.process_time()
    release = services.release_build_now(project=project, user=None, seed=1)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    assert release.status == "done", release.error
    items = release.counts["lead_qa"] + release.counts["document_qa"]
    size = sum(entry["size"] for entry in release.files)
    return {
        "items": items,
        "seconds": round(seconds, 2),
        "items_per_second": round(items / seconds),
        "cpu_seconds": round(cpu, 2),
        "rss_before_mb": round(before, 1),
        "peak_rss_mb": round(_memory_mb("VmHWM"), 1),
        "release_mb": round(size / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    parser.add_argument("--reuse", action="store_true", help="Keep bench projects left by an earlier run.")
    parser.add_argument("--build-only", metavar="SLUG", help=argparse.SUPPRESS)
    args = parser.parse_args()
    _setup()
    if args.build_only:
        print(json.dumps(build(args.build_only)))
        return
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    print(
        f"{'build':<6} {'items':>8} {'seconds':>8} {'items/s':>9} {'CPU s':>7} {'RSS before':>11} {'peak RSS':>9} "
        f"{'release':>8}"
    )
    for size in args.sizes:
        slug = f"bench-release-{size}"
        if not (args.reuse and _exists(slug, size)):
            create_project(size)
        with tempfile.TemporaryDirectory(prefix="bench-media-") as media:  # the releases are removed afterwards
            env = {**os.environ, "MEDIA_ROOT": media}
            # The first release of the seed, then the next: it reads the first's split of every group from its
            # manifest, as a project's second version does.
            for build_name in ("first", "next"):
                output = subprocess.run(
                    [sys.executable, __file__, "--build-only", slug],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                result = json.loads(output.strip().splitlines()[-1])
                print(
                    f"{build_name:<6} {result['items']:>8} {result['seconds']:>8} {result['items_per_second']:>9} "
                    f"{result['cpu_seconds']:>7} {result['rss_before_mb']:>9} MB {result['peak_rss_mb']:>6} MB "
                    f"{result['release_mb']:>5} MB",
                    flush=True,
                )


if __name__ == "__main__":
    main()
