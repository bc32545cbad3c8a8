"""Benchmark: the full agreement report task on a project with N reviewed items, on PostgreSQL.

    DATABASE_URL=postgres://... .venv/bin/python bench/agreement_report.py [--items 50000] [--bootstrap 1000] [--reuse]
        [--where]

A project `bench-agreement-N` is (re)created with bulk inserts: N lead QAs on
N/2.5 page pairs, each item reviewed by two of 20 reviewers on the three
default criteria (3·2·N judgments, mostly "pass", reviewers disagreeing now and
then), both kinds of article label from two coordinators on every pair (final
labels where they agree, so the topic and region strata are filled), and one
pair in ten screened by a second annotator. Then a separate process queues a
report and runs the task's service (`review.reports.agreement_report_compute`)
exactly as the worker does, and reports wall-clock and CPU seconds, and its
peak resident memory (VmHWM) against the memory it had before the task.
Target: under 30 s for 50,000 reviewed items. With `--where`, a thread reads the
resident memory every 2 ms and notes where the report's code was at each new
high: the last lines printed are where the peak happens.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
import traceback
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

TARGET_SECONDS = 30.0
REVIEWERS = 20
ANNOTATORS = 10
BATCH = 5000


def _setup() -> None:
    import django

    django.setup()


def _memory_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _users(prefix: str, n: int) -> list:
    from django.contrib.auth import get_user_model

    User = get_user_model()
    names = [f"{prefix}{i:02d}" for i in range(n)]
    existing = {user.username: user for user in User.objects.filter(username__in=names)}
    User.objects.bulk_create([User(username=name) for name in names if name not in existing])
    return list(User.objects.filter(username__in=names).order_by("username"))


def create_project(size: int) -> str:
    import random

    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Membership, PagePair, Project, QAItem, QAItemRevision, Screening
    from review.models import AgreementReport, ArticleLabel, FinalLabel, Judgment, ReviewSlot

    rng = random.Random(20110125)
    slug = f"bench-agreement-{size}"
    Project.objects.filter(slug=slug).delete()
    reviewers = _users("bench-reviewer-", REVIEWERS)
    annotators = _users("bench-annotator-", ANNOTATORS)
    labellers = _users("bench-coordinator-", 2)
    now = timezone.now()
    with transaction.atomic():
        project = Project.objects.create(
            name=f"Bench agreement {size}",
            slug=slug,
            local_language="yue",
            local_wiki="zh-yue",
            standard_language="cmn",
            standard_wiki="zh",
            reviewers_per_item=2,
        )
        Membership.objects.bulk_create(
            [Membership(project=project, user=u, is_reviewer=True) for u in reviewers]
            + [Membership(project=project, user=u, is_annotator=True) for u in annotators]
            + [Membership(project=project, user=u, is_coordinator=True) for u in labellers]
        )
        n_pairs = (size * 2 + 4) // 5
        # Made a batch at a time and let go: only the pairs' ids and assignees are kept (1,000,000 items are
        # 6,000,000 judgments, far too many model objects to hold at once).
        pair_ids: list[int] = []
        assignee_ids: list[int | None] = []
        counted = {"judgments": 0, "labels": 0, "screenings": 0}
        topics, regions = list(project.topics), list(project.regions)
        for offset in range(0, n_pairs, BATCH):
            pairs = PagePair.objects.bulk_create(
                [
                    PagePair(
                        project=project,
                        local_title=f"茶餐廳 {i}",
                        standard_title=f"茶餐厅 {i}",
                        local_lead="𠮶間茶餐廳",
                        standard_lead="茶餐厅",
                        status=PagePair.Status.SUBMITTED,
                        screening_decision="annotate",
                        assignee=annotators[i % ANNOTATORS],
                    )
                    for i in range(offset, min(offset + BATCH, n_pairs))
                ]
            )
            pair_ids += [pair.pk for pair in pairs]
            assignee_ids += [pair.assignee_id for pair in pairs]
            labels, finals, screenings = [], [], []
            for pair in pairs:
                true_label = {"topic": rng.choice(topics), "region": rng.choice(regions)}
                given: dict[str, set[str]] = {}
                for labeller in labellers:
                    for kind, options in (("topic", topics), ("region", regions)):
                        value = true_label[kind] if rng.random() > 0.15 else rng.choice(options)
                        given.setdefault(kind, set()).add(value)
                        labels.append(
                            ArticleLabel(project=project, pair=pair, labeller=labeller, kind=kind, value=value)
                        )
                for kind, values in given.items():
                    if len(values) == 1:
                        finals.append(
                            FinalLabel(project=project, pair=pair, kind=kind, value=values.pop(), method="agreement")
                        )
                screenings.append(Screening(project=project, pair=pair, annotator=pair.assignee, decision="annotate"))
                if rng.random() < 0.1:
                    second = annotators[(annotators.index(pair.assignee) + 1) % ANNOTATORS]
                    decision = "annotate" if rng.random() > 0.2 else "translated"
                    screenings.append(Screening(project=project, pair=pair, annotator=second, decision=decision))
            ArticleLabel.objects.bulk_create(labels)
            FinalLabel.objects.bulk_create(finals)
            Screening.objects.bulk_create(screenings)
            counted["labels"] += len(labels)
            counted["screenings"] += len(screenings)
        for offset in range(0, size, BATCH):
            items = QAItem.objects.bulk_create(
                [
                    QAItem(
                        project=project,
                        pair_id=pair_ids[i % n_pairs],
                        author_id=assignee_ids[i % n_pairs],
                        question=f"问题 {i}？",
                        answer_standard="答案",
                        answer_local="答案",
                        status=QAItem.Status.ACCEPTED,
                    )
                    for i in range(offset, min(offset + BATCH, size))
                ]
            )
            revisions = QAItemRevision.objects.bulk_create(
                [
                    QAItemRevision(item=item, number=1, question=item.question, author_id=item.author_id)
                    for item in items
                ]
            )
            slots = []
            for item, revision in zip(items, revisions, strict=True):
                slots += [
                    ReviewSlot(
                        project_id=item.project_id,
                        item=item,
                        revision=revision,
                        number=n + 1,
                        status=ReviewSlot.Status.DONE,
                        reviewer=user,
                        claimed_at=now,
                        completed_at=now,
                    )
                    for n, user in enumerate(rng.sample(reviewers, 2))
                ]
            slots = ReviewSlot.objects.bulk_create(slots)
            judgments = []
            for index, slot in enumerate(slots):
                item = items[index // 2]
                for criterion in ("fluency", "standalone", "appropriateness"):
                    # Each item has a true verdict (pass for 90%); a reviewer gets it wrong 5% of the time.
                    truth = (hash((item.pk, criterion)) % 10) != 0
                    verdict = truth if rng.random() > 0.05 else not truth
                    judgments.append(
                        Judgment(
                            project=project,
                            slot=slot,
                            item=item,
                            revision_id=slot.revision_id,
                            reviewer=slot.reviewer,
                            criterion=criterion,
                            verdict="pass" if verdict else "flag",
                            created_at=now,
                        )
                    )
            Judgment.objects.bulk_create(judgments, batch_size=BATCH)
            counted["judgments"] += len(judgments)
        AgreementReport.objects.filter(project=project).delete()
    print(
        f"created {slug}: {n_pairs} pairs, {size} items, {counted['judgments']} judgments, "
        f"{counted['labels']} labels, {counted['screenings']} screenings",
        flush=True,
    )
    return slug


class PeakWhere:
    """Samples this process's resident memory and notes the main thread's stack (this project's frames) at each
    new high, in MB above the start."""

    def __init__(self) -> None:
        self.highs: list[tuple[float, str]] = []
        self.start = self.resident()
        self.running = True
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    @staticmethod
    def resident() -> float:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20

    def sample(self) -> None:
        main, best = threading.main_thread().ident, 0.0
        while self.running:
            now = self.resident()
            if now > best + 0.5:
                best = now
                frame = sys._current_frames().get(main or 0)
                stack = traceback.extract_stack(frame) if frame else []
                ours = [
                    f"{Path(f.filename).name}:{f.lineno} {f.name}"
                    for f in stack
                    if f.filename.startswith(str(ROOT)) and "site-packages" not in f.filename
                ]
                self.highs.append((now - self.start, " < ".join(reversed(ours[-4:]))))
            time.sleep(0.002)

    def stop(self) -> list[tuple[float, str]]:
        self.running = False
        self.thread.join()
        return self.highs


def compute(slug: str, bootstrap: int, where: bool = False) -> dict:
    """Queue a report and run the task's service in this process, measuring it."""
    from annotation.models import Project
    from review import reports
    from review.models import AgreementReport

    project = Project.objects.get(slug=slug)
    AgreementReport.objects.filter(project=project).delete()  # nothing to reuse: the full computation
    report, _ = reports.agreement_report_request(project=project, enqueue=False)
    before = _memory_mb("VmRSS")
    sampler = PeakWhere() if where else None
    wall, cpu = time.perf_counter(), time.process_time()
    done = reports.agreement_report_compute(report_id=report.pk, bootstrap=bootstrap)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    highs = sampler.stop()[-6:] if sampler else []
    assert done is not None and done.status == "done", done and done.error
    again, _ = reports.agreement_report_request(project=project, enqueue=False)
    unchanged = time.perf_counter()
    reused = reports.agreement_report_compute(report_id=again.pk, bootstrap=bootstrap)
    unchanged = time.perf_counter() - unchanged
    assert reused is not None and reused.same_as_id == done.pk
    return {
        "unchanged_seconds": round(unchanged, 2),
        "report": done.pk,
        "seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "rss_before_mb": round(before, 1),
        "peak_rss_mb": round(_memory_mb("VmHWM"), 1),
        "scopes": {key: (h["n_units"], h["n_judgments"], h["alpha"]) for key, h in done.headline.items()},
        "result_json_bytes": len(json.dumps(done.result)),
        "fingerprint": done.fingerprint,
        "highs": highs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--reuse", action="store_true", help="Keep the project of an earlier run if there is one.")
    parser.add_argument("--where", action="store_true", help="Say where the resident peak happens.")
    parser.add_argument("--compute", metavar="SLUG", help=argparse.SUPPRESS)  # the measured child process
    args = parser.parse_args()
    _setup()
    if args.compute:
        print(json.dumps(compute(args.compute, args.bootstrap, args.where)))
        return
    from annotation.models import Project

    slug = f"bench-agreement-{args.items}"
    if not (args.reuse and Project.objects.filter(slug=slug).exists()):
        started = time.perf_counter()
        slug = create_project(args.items)
        print(f"data created in {time.perf_counter() - started:.1f} s", flush=True)
    child = subprocess.run(
        [sys.executable, __file__, "--compute", slug, "--bootstrap", str(args.bootstrap)]
        + (["--where"] if args.where else []),
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(child.stdout.strip().splitlines()[-1])
    print(f"report task on {args.items:,} reviewed items (bootstrap {args.bootstrap}):")
    print(
        f"  {result['seconds']} s wall, {result['cpu_seconds']} s CPU; "
        f"RSS {result['rss_before_mb']} MB before, peak {result['peak_rss_mb']} MB; "
        f"result JSON {result['result_json_bytes'] / 1e6:.1f} MB"
    )
    print(f"  again with the data unchanged (fingerprint only, result reused): {result['unchanged_seconds']} s")
    print(f"  fingerprint {result['fingerprint']}")
    for key, (units, judgments, alpha) in result["scopes"].items():
        shown = "undefined" if alpha is None else f"{alpha:.3f}"
        print(f"  {key:28s} {units:7d} units {judgments:8d} judgments  alpha {shown}")
    if args.where:
        print("  new resident highs, MB above the start (the last is the peak), and where the report was:")
        for above, where in result["highs"]:
            print(f"  {above:7.1f}  {where}")
    verdict = "OK" if result["seconds"] < TARGET_SECONDS else "SLOWER THAN TARGET"
    print(f"target < {TARGET_SECONDS:.0f} s: {verdict}")


if __name__ == "__main__":
    main()
