"""The one owner of a QA item's lifecycle (annotation.lifecycle), called directly."""

from __future__ import annotations

import pytest

from annotation import lifecycle
from annotation.models import ItemEvent, QAItem
from common.errors import InvalidInput, InvalidState, StaleEdit
from tests.review.conftest import submitted_pair


@pytest.fixture
def submitted(project, annotator):
    return submitted_pair(project, annotator)


def test_a_transition_moves_the_item_bumps_its_version_and_records_the_event(submitted, coordinator):
    _, items = submitted
    item = items[0]
    moved = lifecycle.qa_item_transition(
        item=item,
        allowed=[QAItem.Status.SUBMITTED],
        to=QAItem.Status.REJECTED,
        expected_version=item.version,
        doing="rejected",
        event={"actor": coordinator, "action": ItemEvent.Action.REJECTED, "note": "off topic"},
    )
    assert moved
    fresh = QAItem.objects.get(pk=item.pk)
    assert (fresh.status, fresh.version) == (QAItem.Status.REJECTED, item.version + 1)
    event = fresh.events.order_by("-id").first()
    assert (event.action, event.from_status, event.to_status, event.actor, event.note) == (
        "rejected",
        "submitted",
        "rejected",
        coordinator,
        "off topic",
    )


def test_a_transition_at_an_old_version_is_a_stale_edit_carrying_the_current_item(submitted):
    _, items = submitted
    item = items[0]
    with pytest.raises(StaleEdit) as raised:
        lifecycle.qa_item_transition(
            item=item,
            allowed=[QAItem.Status.SUBMITTED],
            to=QAItem.Status.ACCEPTED,
            expected_version=item.version - 1,
            doing="accepted",
        )
    assert raised.value.current.pk == item.pk
    assert QAItem.objects.get(pk=item.pk).status == QAItem.Status.SUBMITTED


def test_a_transition_from_a_status_not_allowed_is_refused_and_changes_nothing(submitted):
    _, items = submitted
    item = items[0]
    events = item.events.count()
    assert not lifecycle.qa_item_transition(item=item, allowed=[QAItem.Status.NEEDS_REWRITE], to="accepted")
    with pytest.raises(InvalidState, match="it cannot be accepted"):
        lifecycle.qa_item_transition(item=item, allowed=[QAItem.Status.NEEDS_REWRITE], to="accepted", doing="accepted")
    fresh = QAItem.objects.get(pk=item.pk)
    assert (fresh.status, fresh.version, fresh.events.count()) == (QAItem.Status.SUBMITTED, item.version, events)


def test_may_review_and_its_queryset_twin_agree(submitted, annotator, reviewer):
    _, items = submitted
    assert not lifecycle.may_review(annotator, items[0])
    assert lifecycle.may_review(reviewer, items[0])
    assert not lifecycle.may_review(reviewer, items[0], revision_author_id=reviewer.pk)
    ids = {item.pk for item in items}
    assert not ids & set(QAItem.objects.reviewable_by(annotator).values_list("pk", flat=True))
    assert ids <= set(QAItem.objects.reviewable_by(reviewer).values_list("pk", flat=True))
    with pytest.raises(InvalidState, match="You wrote this item"):
        lifecycle.require_may_review(annotator, items[0])


def test_one_span_check_for_the_editor_and_the_importers():
    text = "𠮩佢哋喺度"
    assert lifecycle.spans_check(text, [{"start": 0, "end": 2, "text": "𠮩佢"}], document="local_lead")[0].end == 2
    assert lifecycle.span_problem(text, 0, 9, "𠮩", document="local_lead") == (
        ".end",
        "end 9 is past the end of the local_lead (5 code points)",
    )
    assert lifecycle.span_problem(text, True, 2, "𠮩佢", document="local_lead")[0] == ""
    with pytest.raises(InvalidInput) as raised:
        lifecycle.spans_check(text, [{"start": 1, "end": 2, "text": "x"}], document="local_lead")
    assert raised.value.field == "spans[0].text"


def test_the_text_check_names_the_field_too_long():
    with pytest.raises(InvalidInput) as raised:
        lifecycle.qa_item_text_check(question="問" * (lifecycle.MAX_TEXT_FIELD + 1), answer_local=None)
    assert raised.value.field == "question"
