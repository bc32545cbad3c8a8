"""A project with one of everything an archive must carry, built through the services."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from annotation import ingest
from annotation.models import QAItem
from annotation.services.items import qa_item_create, qa_item_delete, qa_item_update
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from exports import services as exports
from exports.models import Release
from review import decisions as review_decisions
from review import judging as review_judging
from review import labels as review_labels
from review import queue as review_queue
from review import reports
from review import reviewers as review_reviewers
from review import verification as review_verification
from review.models import ReviewSlot
from tests import factories
from tests.review.conftest import LOCAL_TEXT, STANDARD_TEXT, all_pass, submitted_pair
from wikiqa import collect


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return Path(settings.MEDIA_ROOT)


@pytest.fixture
def no_broker(monkeypatch):
    """Jobs stay pending (their rows are what the archive carries), nothing is sent."""
    monkeypatch.setattr("wikiqa.tasks.collection_run.delay", lambda collection_id: None)
    monkeypatch.setattr("annotation.tasks.import_job_run.delay", lambda job_id: None)


def _review(item: QAItem, user, verdicts: dict[str, str] | None = None) -> ReviewSlot:
    slot = review_queue.review_claim(item=item, user=user)
    judgments = {
        key: {"verdict": value, "comment": "zu lang" if value == "flag" else ""}
        for key, value in (verdicts or {k: v["verdict"] for k, v in all_pass(item.project).items()}).items()
    }
    return review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)


@pytest.fixture
def rich_project(project, coordinator, annotator, second_annotator, reviewer, no_broker):
    """Pairs screened, excluded and untouched; items reviewed, flagged, rewritten, accepted, rejected, deleted;
    verifications, labels by two coordinators with an adjudication, reviewer languages, an agreement report,
    a published and a failed release, an import job and a collection."""
    coordinator2 = factories.user("coordinator2", first_name="Zweite", last_name="Koordinatorin")
    membership_set(project=project, user=coordinator2, roles={"coordinator", "reviewer"})
    review_reviewers.reviewer_languages_set(project=project, user=reviewer, languages=["cmn", "yue"])
    membership_set(project=project, user=coordinator, roles={"coordinator", "reviewer"})

    pair, items = submitted_pair(project, annotator, standard_text=STANDARD_TEXT, local_text=LOCAL_TEXT)
    _review(items[0], reviewer)  # accepted
    flagged = _review(items[1], reviewer, {"fluency": "flag", "standalone": "pass", "appropriateness": "pass"})
    item = QAItem.objects.get(pk=flagged.item_id)
    item = qa_item_update(item=item, user=annotator, version=item.version, question="深水埗喺邊度？（改）")
    item = review_decisions.qa_item_resubmit(item=item, user=annotator, version=item.version)
    _review(item, coordinator2)
    first = QAItem.objects.get(pk=items[0].pk)
    review_verification.verification_record(
        item=first, user=annotator, result="found", sentences=[_sentence("老板姓陈。")], query="姓陈", version=0
    )
    for labeller, topic in ((coordinator, "food"), (coordinator2, "history")):
        review_labels.label_set(pair=pair, user=labeller, kind="topic", value=topic)
        review_labels.label_set(pair=pair, user=labeller, kind="region", value="local", detail="Hong Kong")
    review_labels.label_adjudicate(pair=pair, user=coordinator, kind="topic", value="food")

    _, second_items = submitted_pair(project, second_annotator, evidences=("茶餐廳", "星期三"))
    review_decisions.qa_item_reject(
        item=second_items[0], user=coordinator, reason="duplicate", version=second_items[0].version
    )
    factories.pair(project)
    excluded = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=excluded, user=annotator, decision="translated", note="word for word ‮RTL")
    factories.pair(project)
    draft_pair = pair_claim_next(project=project, user=second_annotator)
    draft_pair = pair_screen(pair=draft_pair, user=second_annotator, decision="annotate")
    gone = qa_item_create(pair=draft_pair, user=second_annotator, question="删掉的问题？")
    qa_item_delete(item=gone, user=second_annotator)
    factories.pair(project, metadata={"source": "wiki", "nested": {"n": [1, 2.5, None]}})

    report, _ = reports.agreement_report_request(project=project, user=coordinator, enqueue=False)
    reports.agreement_report_compute(report_id=report.pk, bootstrap=20)
    release = exports.release_build_now(project=project, user=coordinator, seed=7, changelog="Erste Ausgabe")
    assert release.status == Release.Status.DONE, release.error
    Release.objects.create(
        project=project,
        version=2,
        status=Release.Status.FAILED,
        item_statuses=["accepted"],
        seed=7,
        license="cc-by-sa-4.0",
        error="OSError: no space left",
        finished_at=timezone.now(),
    )
    ingest.import_job_create(
        project=project, user=coordinator, files=[SimpleUploadedFile("pairs.jsonl", b"{}\n")], dry_run=True
    )
    collect.collection_create(project=project, user=coordinator, titles=["Minga", "Wean"])
    project.refresh_from_db()
    return project


def _sentence(text: str) -> dict:
    start = STANDARD_TEXT.index(text)
    return {"start": start, "end": start + len(text), "text": text}


@pytest.fixture
def second_reviewer(db):
    return factories.user("reviewer2")
