"""Only the validation flow judges validation items, and only the review flow judges the others.

Both flows fill `review.ReviewSlot`s; without the guard a reviewer could take a
collected pair on the ordinary review screen and accept it with pass verdicts,
skipping every validation task (and a validator could "validate" an authored item).
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import QAItem
from common.errors import InvalidState
from review import judging as review_judging
from review import queue as review_queue
from review.models import Judgment, ReviewSlot
from tests.conftest import api_as
from tests.review.conftest import submitted_pair
from validation import services


def test_the_review_queue_hands_out_no_validation_item(imported, reviewer, client):
    client.force_login(reviewer)

    response = client.post(reverse("review_next", args=[imported.slug]), follow=True)

    assert "judged on the validation screens" in response.content.decode()
    assert not ReviewSlot.objects.filter(reviewer=reviewer).exists()
    with pytest.raises(InvalidState, match="validation screens"):
        review_queue.review_claim_next(project=imported, user=reviewer)


def test_a_validation_item_cannot_be_claimed_from_the_review_list(imported, reviewer):
    item = QAItem.objects.filter(project=imported).first()

    with pytest.raises(InvalidState, match="validation screens"):
        review_queue.review_claim(item=item, user=reviewer)

    response = api_as(reviewer).post(f"/api/projects/{imported.slug}/review/next/")
    assert response.status_code == 409 and "validation screens" in response.data["detail"]


def test_a_claimed_validation_slot_cannot_be_accepted_on_the_review_screen(imported, reviewer, client):
    slot = services.validation_claim_next(project=imported, user=reviewer)  # held through the validation flow
    client.force_login(reviewer)
    verdicts = {f"verdict-{c['key']}": "pass" for c in imported.review_criteria} or {"verdict-x": "pass"}

    response = client.post(reverse("review_slot", args=[imported.slug, slot.pk]), {"version": slot.version, **verdicts})

    slot.refresh_from_db()
    assert response.status_code == 409
    assert slot.status == ReviewSlot.Status.CLAIMED and not Judgment.objects.filter(item=slot.item).exists()
    assert QAItem.objects.get(pk=slot.item_id).status == QAItem.Status.SUBMITTED
    with pytest.raises(InvalidState, match="validation screens"):
        review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments={})


def test_the_validation_flow_judges_no_item_of_another_kind_of_project(project, annotator, reviewer):
    _, items = submitted_pair(project, annotator)
    slot = ReviewSlot.objects.filter(item=items[0]).first()

    with pytest.raises(InvalidState, match="Only items of a validation project"):
        services.validation_claim_next(project=project, user=reviewer)
    with pytest.raises(InvalidState, match="Only items of a validation project"):
        services.validation_submit(slot=slot, user=reviewer, version=slot.version, data={"question": "good"})
    assert not ReviewSlot.objects.filter(reviewer=reviewer).exists()
