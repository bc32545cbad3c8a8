"""The coordinator's reads of one project (the dashboard's counts, the release readiness check, the agreement
report's gatherers and its judgment counts) read that project's rows only, however many rows other projects hold
around it: PostgreSQL's plans, as run, on tables shaped as a busy server's.

Each test runs the read as the page or the job does and counts, per statement and table, the rows its scans touched
(EXPLAIN ANALYZE: rows returned plus rows a filter threw away). Another project's rows, ten times as many on either
side of this project's ids, must not be among them.

(The queues' first reads: tests/test_queue_plans.py and tests/review/test_queue_plan.py.)
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from django.utils import timezone

from annotation.models import PagePair, Project, QAItem, QAItemRevision
from exports.readiness import release_readiness
from review import reports
from review.models import AgreementReport, ArticleLabel, FinalLabel, Judgment, ReviewSlot
from review.statistics import project_statistics
from tests import factories
from tests.plans import analyze, rows_read

SPREAD = "it reads PostgreSQL's plans (EXPLAIN ANALYZE) for choices its planner makes from statistics"

pytestmark = [pytest.mark.postgresql(reason=SPREAD), pytest.mark.django_db]

_slugs = itertools.count()
OTHERS = 2000  # items of each other project (one made before this project, one after): ten times this project's
OWN = 200
TABLES = (
    "review_judgment",
    "review_reviewslot",
    "review_articlelabel",
    "review_finallabel",
    "annotation_qaitem",
    "annotation_pagepair",
)


def _reviewed_project(coordinator, reviewers: list[Any], items: int) -> Project:
    """A project of `items` accepted items (two a pair), each reviewed by two reviewers on every criterion; each
    pair labelled by both with its final labels; half the items of the last pairs submitted with an open slot."""
    project = factories.project(coordinator, slug=f"platform-{next(_slugs)}")
    now = timezone.now()
    pairs = PagePair.objects.bulk_create(
        PagePair(project=project, local_title=f"茶餐廳 {n}", standard_title=f"茶餐厅 {n}", local_lead="深水埗",
                 status=PagePair.Status.SUBMITTED)
        for n in range(items // 2)
    )  # fmt: skip
    qa_items = QAItem.objects.bulk_create(
        QAItem(project=project, pair=pairs[n // 2], author=coordinator, question=f"问题 {n}？", answer_standard="陈",
               answer_local="陳", submitted_at=now,
               status=QAItem.Status.ACCEPTED if n < items * 3 // 4 else QAItem.Status.SUBMITTED)
        for n in range(items)
    )  # fmt: skip
    revisions = QAItemRevision.objects.bulk_create(
        QAItemRevision(item=item, number=1, question=item.question, answer_standard="陈", author=coordinator)
        for item in qa_items
    )
    slots = ReviewSlot.objects.bulk_create(
        ReviewSlot(project=project, item=revision.item, revision=revision, number=number, reviewer=reviewer,
                   status=ReviewSlot.Status.DONE, completed_at=now)
        if revision.item.status == QAItem.Status.ACCEPTED
        else ReviewSlot(project=project, item=revision.item, revision=revision, number=number)
        for revision in revisions
        for number, reviewer in enumerate(reviewers, start=1)
    )  # fmt: skip
    Judgment.objects.bulk_create(
        Judgment(project=project, slot=slot, item=slot.item, revision=slot.revision, reviewer=slot.reviewer,
                 criterion=criterion["key"], verdict=Judgment.Verdict.PASS)
        for slot in slots
        if slot.status == ReviewSlot.Status.DONE
        for criterion in project.review_criteria
    )  # fmt: skip
    ArticleLabel.objects.bulk_create(
        ArticleLabel(project=project, pair=pair, labeller=labeller, kind=kind, value=values[0])
        for pair in pairs
        for labeller in reviewers
        for kind, values in (("topic", project.topics), ("region", project.regions))
    )  # fmt: skip
    FinalLabel.objects.bulk_create(
        FinalLabel(project=project, pair=pair, kind=kind, value=values[0], method=FinalLabel.Method.AGREEMENT)
        for pair in pairs
        for kind, values in (("topic", project.topics), ("region", project.regions))
    )  # fmt: skip
    return project


@pytest.fixture
def platform(coordinator, reviewer) -> Project:
    """This project's rows between two other projects' rows, ten times as many each."""
    second = factories.user("second_reviewer")
    _reviewed_project(coordinator, [reviewer, second], OTHERS)
    project = _reviewed_project(coordinator, [reviewer, second], OWN)
    _reviewed_project(coordinator, [reviewer, second], OTHERS)
    analyze(*TABLES)
    return project


def _own_rows(project: Project) -> dict[str, int]:
    return {
        "review_judgment": Judgment.objects.filter(item__project=project).count(),
        "review_reviewslot": ReviewSlot.objects.filter(project=project).count(),
        "review_articlelabel": ArticleLabel.objects.filter(pair__project=project).count(),
        "review_finallabel": FinalLabel.objects.filter(pair__project=project).count(),
        "annotation_qaitem": QAItem.objects.filter(project=project).count(),
        "annotation_pagepair": PagePair.objects.filter(project=project).count(),
    }


def _assert_reads_its_own_rows(project: Project, read: list[tuple[str, dict[str, int]]]) -> None:
    """No statement reads more of a table than five times the project's own rows (a join may look its rows up more
    than once); a scan of the other projects' rows (twenty times as many) does not fit."""
    own = _own_rows(project)
    beyond = [
        (f"{table}: {rows:,} rows read, the project's own {own[table]:,}", sql[:400])
        for sql, tables in read
        for table, rows in tables.items()
        if table in own and rows > 5 * own[table]
    ]
    assert not beyond, beyond


def test_the_dashboard_counts_read_the_projects_own_rows(platform):
    _assert_reads_its_own_rows(platform, rows_read(lambda: project_statistics(platform)))


def test_the_readiness_check_reads_the_projects_own_rows(platform, coordinator):
    AgreementReport.objects.create(
        project=platform, requested_by=coordinator, status=AgreementReport.Status.DONE, finished_at=timezone.now(),
        judgment_watermark=reports._project_watermark(platform),
    )  # fmt: skip
    read = rows_read(lambda: release_readiness(platform, statuses=["accepted"], splits={}, seed=None))
    _assert_reads_its_own_rows(platform, read)


def test_the_agreement_gatherers_read_the_projects_own_rows(platform):
    scopes = []
    _assert_reads_its_own_rows(platform, rows_read(lambda: scopes.extend(reports.scopes_gather(platform))))
    review = [scope for scope in scopes if scope.kind == "review"]
    assert sum(scope.n_judgments for scope in review) == _own_rows(platform)["review_judgment"]


def test_the_agreement_counts_read_the_projects_own_judgments(platform, coordinator):
    report = AgreementReport.objects.create(
        project=platform, requested_by=coordinator, status=AgreementReport.Status.DONE, finished_at=timezone.now(),
        judgment_watermark=0,
    )  # fmt: skip
    read = rows_read(lambda: (reports._project_watermark(platform), reports.latest_agreement_report(platform)))
    _assert_reads_its_own_rows(platform, read)
    assert reports.latest_agreement_report(platform)["judgments_since"] == _own_rows(platform)["review_judgment"]
    assert report.pk
