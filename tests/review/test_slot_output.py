"""`slot_output` (the review API's answer, built without DRF's fields) gives what SlotOutput gives, and
`review_submit_input` reads a judgment's body as ReviewSubmitInput does."""

from __future__ import annotations

import json
import zoneinfo

import pytest
from django.utils import timezone
from rest_framework.utils.encoders import JSONEncoder

from common.api import validated
from common.errors import InvalidInput
from review import judging as review_judging
from review import queue as review_queue
from review.models import ReviewSlot
from review.serializers import ReviewSubmitInput, SlotOutput, review_submit_input, slot_output
from tests.review.conftest import all_pass, flag


def _same(slot: ReviewSlot) -> None:
    # Both read anew, each rendered as the API's JSON renderer writes it (key order included).
    def load() -> ReviewSlot:
        return ReviewSlot.objects.select_related("item__pair", "item__author", "item__project", "revision",
                                                 "reviewer").get(pk=slot.pk)  # fmt: skip

    expected = json.dumps(SlotOutput(load()).data, cls=JSONEncoder)
    assert json.dumps(slot_output(load()), cls=JSONEncoder) == expected


def test_every_state_of_a_slot_is_shown_as_the_serializer_shows_it(project, reviewer, submitted, second_reviewer):
    project.review_criteria = [
        {"key": "fluency", "label": "Fluent", "help": "Reads naturally."},
        {"key": "standalone", "label": "Stands alone"},  # no help: left out, as the serializer leaves it
    ]
    project.reviewers_per_item = 2
    project.save()
    open_slot = ReviewSlot.objects.filter(status=ReviewSlot.Status.OPEN).order_by("id").first()
    _same(open_slot)  # no reviewer, no claim
    claimed = review_queue.review_claim_next(project=project, user=reviewer)
    _same(claimed)
    review_judging.review_submit(slot=claimed, user=reviewer, version=claimed.version,
                                 judgments=flag(project, "fluency", "Stilted <b>wording</b> “here”"))  # fmt: skip
    _same(claimed)  # done, with judgments and a comment
    with timezone.override(zoneinfo.ZoneInfo("Asia/Hong_Kong")):  # times shown in the current time zone
        _same(claimed)
    other = review_queue.review_claim_next(project=project, user=second_reviewer)
    review_judging.review_submit(slot=other, user=second_reviewer, version=other.version, judgments=all_pass(project))
    _same(other)  # the item decided (sent back)
    other.item.author = None
    other.item.save(update_fields=["author"])
    _same(other)  # an item whose author is gone


@pytest.mark.parametrize("criteria", [[], [{"key": "k", "label": "L", "help": ""}]])
def test_criteria_without_entries_or_with_blank_help(project, reviewer, submitted, criteria):
    project.review_criteria = criteria
    project.save()
    _same(ReviewSlot.objects.order_by("id").first())


def _outcome(read, data):
    try:
        return "ok", json.dumps(read(data), cls=JSONEncoder)
    except InvalidInput as error:
        return "invalid", str(error), error.field, error.details


@pytest.mark.parametrize(
    "data",
    [
        {"version": 3, "judgments": {"fluency": {"verdict": "pass", "comment": ""}, "b": {"verdict": "flag"}}},
        {"version": 3, "judgments": {"a": {"verdict": "flag", "comment": "  “ok” 好 ", "extra": 1}}, "more": 1},
        {"version": 3, "judgments": {}},
        {"version": "3", "judgments": {"a": {"verdict": "pass"}}},
        {"version": True, "judgments": {"a": {"verdict": "pass"}}},
        {"version": 3.0, "judgments": {"a": {"verdict": "pass"}}},
        {"judgments": {"a": {"verdict": "pass"}}},
        {"version": 3},
        {"version": 3, "judgments": []},
        {"version": 3, "judgments": {"a": "pass"}},
        {"version": 3, "judgments": {"a": {"verdict": " pass "}}},
        {"version": 3, "judgments": {"a": {"verdict": ""}}},
        {"version": 3, "judgments": {"a": {"verdict": "maybe"}}},
        {"version": 3, "judgments": {"a": {"verdict": 1}}},
        {"version": 3, "judgments": {"a": {"comment": "x"}}},
        {"version": 3, "judgments": {"a": {"verdict": "pass", "comment": None}}},
        {"version": 3, "judgments": {"a": {"verdict": "pass", "comment": 5}}},
        {"version": 3, "judgments": {"a": {"verdict": "pass", "comment": "nul\x00"}}},
        {"version": 3, "judgments": {"a": {"verdict": "pass", "comment": "lone \ud800"}}},
        [],
        "text",
    ],
)
def test_the_judgment_input_reads_as_the_serializer_does(data):
    assert _outcome(review_submit_input, data) == _outcome(lambda d: validated(ReviewSubmitInput, d), data)
