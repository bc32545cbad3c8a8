"""The coordinator's reads of one project (the dashboard's counts, the release readiness check, the agreement
report's gatherers and its judgment counts, screening decisions, a validation project's judgments) read that
project's rows only, however many rows other projects hold around it: PostgreSQL's plans, as run, on tables shaped
as a busy server's.

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

from annotation.models import PagePair, Project, QAItem, QAItemRevision, Screening
from annotation.queries import annotator_progress
from evaluation.nativqa import nativqa_results
from exports.formats import wilova
from exports.readiness import release_readiness
from review import reports
from review.models import AgreementReport, ArticleLabel, FinalLabel, Judgment, ReviewSlot
from review.statistics import project_statistics
from tests import factories
from tests.plans import analyze, rows_read
from validation import services as validation_services
from validation.models import ModelJob, Suggestion, SuggestionUse, ValidationItem, ValidationJudgment

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
    "annotation_screening",
)
VALIDATION_TABLES = (
    "validation_validationjudgment",
    "validation_validationitem",
    "validation_suggestion",
    "validation_suggestionuse",
    "validation_modeljob",
    "review_reviewslot",
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
    Screening.objects.bulk_create(
        Screening(project=project, pair=pair, annotator=annotator, decision=Screening.Decision.ANNOTATE)
        for pair in pairs
        for annotator in reviewers
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


def _validated_project(coordinator, validators: list[Any], items: int) -> Project:
    """A validation project of `items` items, each judged by both validators on every task, with a model's
    suggestion that each validator took for the question; the last quarter's items wait, their slots open."""
    project = validation_services.validation_project_create(
        name="Platform validation", slug=f"validation-{next(_slugs)}", language="eng", validators_per_item=2,
        created_by=coordinator,
    )  # fmt: skip
    now = timezone.now()
    pairs = PagePair.objects.bulk_create(
        PagePair(project=project, local_title=f"Q {n}", standard_title=f"Q {n}", status=PagePair.Status.SUBMITTED)
        for n in range(items)
    )  # fmt: skip
    qa_items = QAItem.objects.bulk_create(
        QAItem(project=project, pair=pair, author=coordinator, question=f"What is {n}?", answer_standard="It.",
               submitted_at=now,
               status=QAItem.Status.ACCEPTED if n < items * 3 // 4 else QAItem.Status.SUBMITTED)
        for n, pair in enumerate(pairs)
    )  # fmt: skip
    ValidationItem.objects.bulk_create(
        ValidationItem(item=item, project=project, domain="example.org", original_answer="It.") for item in qa_items
    )
    revisions = QAItemRevision.objects.bulk_create(
        QAItemRevision(item=item, number=1, question=item.question, answer_standard="It.", author=coordinator)
        for item in qa_items
    )
    slots = ReviewSlot.objects.bulk_create(
        ReviewSlot(project=project, item=revision.item, revision=revision, number=number, reviewer=validator,
                   status=ReviewSlot.Status.DONE, completed_at=now)
        if revision.item.status == QAItem.Status.ACCEPTED
        else ReviewSlot(project=project, item=revision.item, revision=revision, number=number)
        for revision in revisions
        for number, validator in enumerate(validators, start=1)
    )  # fmt: skip
    judgments = ValidationJudgment.objects.bulk_create(
        ValidationJudgment(project=project, slot=slot, item=slot.item, validator=slot.reviewer, question_good=True,
                           location_relevant=True, better_order=["original", "alternative"], better_choice="original",
                           better_position=1, likert={"clarity": 4, "faithfulness": 5})
        for slot in slots
        if slot.status == ReviewSlot.Status.DONE
    )  # fmt: skip
    job = ModelJob.objects.create(
        project=project, purpose=ModelJob.Purpose.SUGGEST, endpoint_name="stub", model="stub", status="done"
    )
    suggestions = Suggestion.objects.bulk_create(
        Suggestion(project=project, item=item, job=job, ok=True, question_good=True, location_relevant=True)
        for item in qa_items
    )
    by_item = {suggestion.item_id: suggestion for suggestion in suggestions}
    SuggestionUse.objects.bulk_create(
        SuggestionUse(
            project=project,
            suggestion=by_item[judgment.item_id],
            judgment=judgment,
            field="question",
            outcome="accepted",
        )
        for judgment in judgments
    )
    return project


@pytest.fixture
def validation_platform(coordinator, reviewer) -> Project:
    """A validation project's rows between two other validation projects' rows, ten times as many each."""
    second = factories.user("second_validator")
    _validated_project(coordinator, [reviewer, second], OTHERS)
    project = _validated_project(coordinator, [reviewer, second], OWN)
    _validated_project(coordinator, [reviewer, second], OTHERS)
    analyze(*VALIDATION_TABLES)
    return project


def _own_rows(project: Project) -> dict[str, int]:
    return {
        "review_judgment": Judgment.objects.filter(item__project=project).count(),
        "review_reviewslot": ReviewSlot.objects.filter(project=project).count(),
        "review_articlelabel": ArticleLabel.objects.filter(pair__project=project).count(),
        "review_finallabel": FinalLabel.objects.filter(pair__project=project).count(),
        "annotation_qaitem": QAItem.objects.filter(project=project).count(),
        "annotation_pagepair": PagePair.objects.filter(project=project).count(),
        "annotation_screening": Screening.objects.filter(pair__project=project).count(),
        "validation_validationjudgment": ValidationJudgment.objects.filter(item__project=project).count(),
        "validation_validationitem": ValidationItem.objects.filter(project=project).count(),
        "validation_suggestion": Suggestion.objects.filter(item__project=project).count(),
        "validation_suggestionuse": SuggestionUse.objects.filter(judgment__item__project=project).count(),
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


def _the_dashboard_counts_read_the_projects_own_rows(platform):
    _assert_reads_its_own_rows(platform, rows_read(lambda: project_statistics(platform)))


def _the_readiness_check_reads_the_projects_own_rows(platform, coordinator):
    AgreementReport.objects.create(
        project=platform, requested_by=coordinator, status=AgreementReport.Status.DONE, finished_at=timezone.now(),
        judgment_watermark=reports._project_watermark(platform),
    )  # fmt: skip
    read = rows_read(lambda: release_readiness(platform, statuses=["accepted"], splits={}, seed=None))
    _assert_reads_its_own_rows(platform, read)


def _the_agreement_gatherers_read_the_projects_own_rows(platform):
    scopes = []
    _assert_reads_its_own_rows(platform, rows_read(lambda: scopes.extend(reports.scopes_gather(platform))))
    review = [scope for scope in scopes if scope.kind == "review"]
    assert sum(scope.n_judgments for scope in review) == _own_rows(platform)["review_judgment"]
    (screening,) = [scope for scope in scopes if scope.kind == "screening"]
    assert screening.n_judgments == _own_rows(platform)["annotation_screening"]


def _the_agreement_counts_read_the_projects_own_judgments(platform, coordinator):
    report = AgreementReport.objects.create(
        project=platform, requested_by=coordinator, status=AgreementReport.Status.DONE, finished_at=timezone.now(),
        judgment_watermark=0,
    )  # fmt: skip
    read = rows_read(lambda: (reports._project_watermark(platform), reports.latest_agreement_report(platform)))
    _assert_reads_its_own_rows(platform, read)
    assert reports.latest_agreement_report(platform)["judgments_since"] == _own_rows(platform)["review_judgment"]
    assert report.pk


def _the_wilova_export_reads_the_projects_own_screenings(platform):
    _assert_reads_its_own_rows(platform, rows_read(lambda: wilova._current_projections(platform)))


def _an_annotators_progress_reads_the_projects_own_screenings(platform, reviewer):
    read = rows_read(lambda: annotator_progress(project=platform, user=reviewer, session_started=timezone.now()))
    _assert_reads_its_own_rows(platform, read)


def _the_validation_gatherers_read_the_projects_own_judgments(validation_platform):
    scopes = []
    read = rows_read(lambda: scopes.extend(reports.scopes_gather(validation_platform)))
    _assert_reads_its_own_rows(validation_platform, read)
    (question,) = [scope for scope in scopes if scope.key == "validation:question"]
    assert question.n_judgments == _own_rows(validation_platform)["validation_validationjudgment"]


def _the_validation_agreement_page_reads_the_projects_own_judgments(validation_platform):
    figures = {}
    read = rows_read(lambda: figures.update(validation_services.validation_agreement(validation_platform)))
    _assert_reads_its_own_rows(validation_platform, read)
    assert figures["judgments"] == _own_rows(validation_platform)["validation_validationjudgment"]
    assert figures["model"]["suggested_items"] == _own_rows(validation_platform)["validation_suggestion"]


def _the_nativqa_results_read_the_projects_own_judgments(validation_platform):
    results = {}
    _assert_reads_its_own_rows(
        validation_platform, rows_read(lambda: results.update(nativqa_results(validation_platform)))
    )
    assert results["judgments"] == _own_rows(validation_platform)["validation_validationjudgment"]


# Building a platform is most of each test's time: every read of one kind of project is checked on one build.


def test_a_review_projects_coordinator_reads_touch_its_own_rows(platform, coordinator, reviewer):
    _the_dashboard_counts_read_the_projects_own_rows(platform)
    _the_readiness_check_reads_the_projects_own_rows(platform, coordinator)
    _the_agreement_gatherers_read_the_projects_own_rows(platform)
    _the_agreement_counts_read_the_projects_own_judgments(platform, coordinator)
    _the_wilova_export_reads_the_projects_own_screenings(platform)
    _an_annotators_progress_reads_the_projects_own_screenings(platform, reviewer)


def test_a_validation_projects_coordinator_reads_touch_its_own_rows(validation_platform):
    _the_validation_gatherers_read_the_projects_own_judgments(validation_platform)
    _the_validation_agreement_page_reads_the_projects_own_judgments(validation_platform)
    _the_nativqa_results_read_the_projects_own_judgments(validation_platform)
