"""Projects with accepted items to release, and a MEDIA_ROOT of the test's own."""

from __future__ import annotations

import pytest

from annotation.models import PagePair, Project, QAItem
from annotation.services.items import qa_item_create
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.submission import pair_submit
from tests import factories

LEAD = factories.CANTONESE_LEAD
LOCAL_TEXT = LEAD + "\n\n歷史\n呢間茶餐廳喺1958年由陳伯開張，𠮶陣時只係一個大排檔。"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def span(text: str, document: str) -> dict:
    start = document.index(text)
    return {"start": start, "end": start + len(text), "text": text}


def authored_pair(
    project: Project,
    annotator,
    *,
    evidence: tuple[str, ...] = ("菠蘿油同埋鴛鴦", "老闆姓陳"),
    document_evidence: str | None = None,
    status: str = QAItem.Status.ACCEPTED,
    **pair_fields,
) -> PagePair:
    """A pair screened, authored (one lead QA per evidence, optionally a document QA), submitted and given `status`."""
    factories.pair(project, **({"local_text": LOCAL_TEXT} | pair_fields))
    pair = pair_claim_next(project=project, user=annotator)
    assert pair is not None
    pair = pair_screen(pair=pair, user=annotator, decision="annotate")
    for text in evidence:
        qa_item_create(
            pair=pair,
            user=annotator,
            question=f"关于「{text}」的问题？",
            answer_standard=f"{text}（标准）",
            answer_local=text,
            spans=[span(text, pair.local_lead)],
        )
    if document_evidence:
        qa_item_create(
            pair=pair,
            user=annotator,
            kind=QAItem.Kind.DOCUMENT,
            question="这家茶餐厅哪一年开业？",
            answer_standard="1958年",
            answer_local="1958年",
            spans=[span(document_evidence, pair.local_text)],
        )
    pair_submit(pair=pair, user=annotator)
    QAItem.objects.filter(pair=pair).update(status=status)
    return pair


def excluded_pair(project: Project, annotator, decision: str = "translated", note: str = "") -> PagePair:
    factories.pair(project)
    pair = pair_claim_next(project=project, user=annotator)
    assert pair is not None
    return pair_screen(pair=pair, user=annotator, decision=decision, note=note)


@pytest.fixture
def released_project(project, annotator):
    """Three authored pairs (one with a document QA), one rejected item, one excluded pair, one untouched."""
    Project.objects.filter(pk=project.pk).update(collect_document_qa=True)
    project.refresh_from_db()
    authored_pair(project, annotator, document_evidence="1958年由陳伯開張")
    authored_pair(project, annotator)
    authored_pair(project, annotator, evidence=("深水埗", "六十幾年"))
    authored_pair(project, annotator, evidence=("星期三休息", "招牌菜"), status=QAItem.Status.REJECTED)
    excluded_pair(project, annotator, "translated", note="word for word")
    factories.pair(project)
    return project


@pytest.fixture
def release_world(project, annotator, reviewer, coordinator, outsider, superuser):
    """A published v1 of one accepted pair, and a failed v2 (to build again)."""
    from exports import services
    from exports.models import Release

    authored_pair(project, annotator)
    published = services.release_build_now(project=project, user=coordinator, seed=1)
    assert published.status == Release.Status.DONE, published.error
    failed = Release.objects.create(
        project=project,
        version=2,
        status=Release.Status.FAILED,
        item_statuses=["accepted"],
        splits={"train": 70, "dev": 10, "test": 20},
        seed=1,
        license="cc-by-sa-4.0",
        error="OSError: [Errno 28] No space left on device",
    )
    users = {
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }
    return {"project": project, "published": published, "failed": failed, "users": users, "slug": project.slug}


def bulk_accepted_items(project: Project, count: int, *, per_pair: int = 2) -> None:
    """`count` accepted lead QAs with one located span each, written in bulk (for sizes services would make slow)."""
    from annotation.models import EvidenceSpan, QAItemRevision

    evidence = "菠蘿油同埋鴛鴦"
    start = LEAD.index(evidence)
    pairs = PagePair.objects.bulk_create(
        PagePair(
            project=project,
            local_title=f"大量 {project.slug} {n}",
            standard_title=f"大量 {n}",
            local_lead=LEAD,
            standard_lead=factories.MANDARIN_LEAD,
            local_lead_length=len(LEAD),
            standard_lead_length=len(factories.MANDARIN_LEAD),
            status=PagePair.Status.SUBMITTED,
            screening_decision="annotate",
        )
        for n in range((count + per_pair - 1) // per_pair)
    )
    items = QAItem.objects.bulk_create(
        QAItem(
            project=project,
            pair=pairs[n // per_pair],
            question=f"招牌菜是什么？{n}",
            answer_standard="菠萝油和鸳鸯",
            answer_local=evidence,
            status=QAItem.Status.ACCEPTED,
        )
        for n in range(count)
    )
    EvidenceSpan.objects.bulk_create(
        EvidenceSpan(item=item, start=start, end=start + len(evidence), text=evidence) for item in items
    )
    QAItemRevision.objects.bulk_create(QAItemRevision(item=item, number=1, question=item.question) for item in items)
