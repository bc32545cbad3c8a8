"""Review fixtures on top of the shared cast: a submitted pair whose items wait for review."""

from __future__ import annotations

from typing import Any

import pytest

from annotation.models import PagePair, QAItem
from annotation.services.items import qa_item_create
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.submission import pair_submit
from tests import factories

LEAD = factories.CANTONESE_LEAD
STANDARD_TEXT = "这是一家位于深水埗的茶餐厅，以菠萝包闻名。老板姓陈。餐厅每逢星期三休息。"
LOCAL_TEXT = LEAD + "\n佢哋嘅奶茶用咗五種茶葉撈埋，每日賣出三百杯。"


def span_of(text: str, document: str = LEAD) -> dict[str, Any]:
    start = document.index(text)
    return {"start": start, "end": start + len(text), "text": text}


def complete_item(pair: PagePair, user, evidence: str, **extra: Any) -> QAItem:
    return qa_item_create(
        pair=pair,
        user=user,
        question=f"关于{evidence}的问题？",
        answer_standard=evidence,
        answer_local=evidence,
        spans=[span_of(evidence, pair.local_lead)],
        **extra,
    )


def submitted_pair(project, annotator, evidences=("深水埗", "姓陳"), **pair_fields) -> tuple[PagePair, list[QAItem]]:
    factories.pair(project, **pair_fields)
    pair = pair_claim_next(project=project, user=annotator)
    assert pair is not None
    pair_screen(pair=pair, user=annotator, decision="annotate")
    items = [complete_item(pair, annotator, evidence) for evidence in evidences]
    pair_submit(pair=pair, user=annotator)
    for item in items:
        item.refresh_from_db()
    return pair, items


@pytest.fixture
def submitted(project, annotator):
    """A submitted pair (with both full texts) and its two items, in review."""
    return submitted_pair(project, annotator, standard_text=STANDARD_TEXT, local_text=LOCAL_TEXT)


@pytest.fixture
def second_reviewer(project):
    user = factories.user("reviewer2")
    membership_set(project=project, user=user, roles={"reviewer"})
    return user


def all_pass(project) -> dict[str, dict[str, str]]:
    return {c["key"]: {"verdict": "pass", "comment": ""} for c in project.review_criteria}


def flag(project, key: str, comment: str) -> dict[str, dict[str, str]]:
    judgments = all_pass(project)
    judgments[key] = {"verdict": "flag", "comment": comment}
    return judgments
