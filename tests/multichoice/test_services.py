"""Trivia projects through their services: authoring, review, import/export, balance, translation, resolution."""

from __future__ import annotations

import csv
import io

import orjson
import pytest

from annotation.models import ItemEvent, QAItem, QAItemRevision
from annotation.services.members import membership_set
from common.errors import InvalidInput, InvalidState
from multichoice.models import TriviaItem
from multichoice.services.balance import trivia_balance
from multichoice.services.files import trivia_export_csv, trivia_export_jsonl, trivia_import_csv, trivia_import_jsonl
from multichoice.services.items import items_pair, trivia_item_create, trivia_item_rewrite, trivia_items
from multichoice.services.projects import trivia_settings_update
from multichoice.services.reviews import trivia_may_review, trivia_review, trivia_review_next, trivia_reviews
from multichoice.services.translation import (
    _check_tags,
    translation_claim_next,
    translation_resolve,
    translation_submit,
)
from review.models import Judgment, ReviewSlot
from tests.multichoice.conftest import FIXTURES, item_values


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


def test_an_item_is_a_shared_qa_item_in_the_review_queue_as_revision_1(trivia, annotator):
    item = trivia_item_create(project=trivia, user=annotator, **item_values())

    qa = QAItem.objects.get(pk=item.item_id)
    assert (qa.project_id, qa.author_id, qa.question, qa.status) == (
        trivia.pk,
        annotator.pk,
        "Where's Atxondo?",
        QAItem.Status.SUBMITTED,
    )
    assert qa.answer_standard == "In Biscay"  # the correct candidate
    assert item.translation_label == "Not yet accepted"
    revision = qa.revisions.get()
    assert (revision.number, revision.reason) == (1, QAItemRevision.Reason.SUBMITTED)
    assert revision.content == {
        "candidates": ["In Biscay", "In Gipuzkoa", "In Navarre"],
        "answer": 0,
        "category": "Geografia eta Historia",
        "subset": "local",
        "difficulty": "easy",
    }
    assert list(ReviewSlot.objects.filter(item=qa).values_list("revision__number", "status")) == [(1, "open")]
    assert ItemEvent.objects.filter(item=qa, action=ItemEvent.Action.SUBMITTED).exists()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"candidates": ["a", "b"]}, "candidates"),
        ({"candidates": ["a", "b", "a"]}, "candidates"),
        ({"candidates": ["a", "", "c"]}, "candidates[1]"),
        ({"answer": 3}, "answer"),
        ({"answer": "x"}, "answer"),
        ({"subset": "regional"}, "subset"),
        ({"difficulty": "4"}, "difficulty"),
        ({"category": "Sport"}, "category"),
        ({"question": "  "}, "question"),
    ],
)
def test_a_bad_item_is_refused_naming_the_field_and_nothing_is_written(trivia, annotator, changes, field):
    with pytest.raises(InvalidInput) as error:
        trivia_item_create(project=trivia, user=annotator, **item_values(**changes))

    assert error.value.field == field
    assert not TriviaItem.objects.exists() and not QAItem.objects.exists()


def test_difficulty_may_be_given_as_1_to_3(trivia, annotator):
    item = trivia_item_create(project=trivia, user=annotator, **item_values(difficulty="3"))

    assert item.difficulty == "hard"


def test_review_with_every_criterion_met_accepts_and_opens_the_item_to_translators(accepted_item, reviewer):
    assert accepted_item.status == QAItem.Status.ACCEPTED
    assert accepted_item.translation_status == TriviaItem.Translation.OPEN
    assert accepted_item.translation_label == "Waiting for a translator"
    [review] = trivia_reviews(accepted_item)
    assert review["criteria"] == {
        "one_correct": True,
        "plausible": True,
        "not_from_wording": True,
        "not_outdated": True,
    }
    # the review app's judgments, one per criterion, on the review slot the reviewer filled
    slot = ReviewSlot.objects.get(item_id=accepted_item.item_id)
    assert (slot.reviewer_id, slot.status) == (reviewer.pk, ReviewSlot.Status.DONE)
    assert set(Judgment.objects.filter(slot=slot).values_list("criterion", "verdict")) == {
        ("one_correct", "pass"),
        ("plausible", "pass"),
        ("not_from_wording", "pass"),
        ("not_outdated", "pass"),
    }


def test_an_unmet_criterion_sends_the_item_back_and_the_rewrite_is_revision_2(trivia, annotator, reviewer):
    item = trivia_item_create(project=trivia, user=annotator, **item_values())
    trivia_review(item=item, user=reviewer, criteria={"one_correct": True}, comment="Distractors too easy")
    item = trivia_items(trivia).get(pk=item.pk)
    assert item.status == QAItem.Status.NEEDS_REWRITE
    flags = Judgment.objects.filter(item_id=item.item_id, verdict="flag")
    assert {(j.criterion, j.comment) for j in flags} >= {("plausible", "Distractors too easy")}

    item = trivia_item_rewrite(
        item=item,
        user=annotator,
        version=item.item.version,
        **item_values(candidates=["In Biscay", "In Álava", "In Navarre"]),
    )

    assert item.status == QAItem.Status.SUBMITTED
    revisions = item.item.revisions.order_by("number")
    assert [(r.reason, r.content["candidates"][1]) for r in revisions] == [
        ("submitted", "In Gipuzkoa"),
        ("rewrite", "In Álava"),
    ]
    # a new review round on revision 2, which the same reviewer may take again
    assert ReviewSlot.objects.filter(item_id=item.item_id, revision__number=2, status="open").count() == 1
    assert trivia_review_next(project=trivia, user=reviewer).pk == item.pk


def test_a_rejection_needs_a_comment_and_authors_cannot_review_their_own_items(trivia, annotator, reviewer):

    item = trivia_item_create(project=trivia, user=annotator, **item_values())

    with pytest.raises(InvalidInput):
        trivia_review(item=item, user=reviewer, criteria={})
    with pytest.raises(InvalidState):
        trivia_review(item=item, user=annotator, criteria={})
    # an author who is also a reviewer is never handed their own item by the shared queue
    membership_set(project=trivia, user=annotator, roles={"annotator", "reviewer"})
    assert trivia_review_next(project=trivia, user=annotator) is None
    assert not trivia_may_review(item, annotator)


def test_two_reviewers_asked_for_share_the_round_and_accept_only_when_both_pass(trivia, annotator, reviewer):
    from tests import factories

    trivia.reviewers_per_item = 2
    trivia.save(update_fields=["reviewers_per_item"])
    second = factories.user("reviewer2")
    membership_set(project=trivia, user=second, roles={"reviewer"})
    item = trivia_item_create(project=trivia, user=annotator, **item_values())
    criteria = {c["key"]: True for c in trivia.review_criteria}

    assert trivia_review_next(project=trivia, user=reviewer).pk == item.pk
    assert trivia_review_next(project=trivia, user=second).pk == item.pk  # the round's second slot
    trivia_review(item=item, user=reviewer, criteria=criteria)
    assert QAItem.objects.get(pk=item.item_id).status == QAItem.Status.SUBMITTED
    with pytest.raises(InvalidState):
        trivia_review(item=item, user=reviewer, criteria=criteria)  # the same revision twice
    trivia_review(item=item, user=second, criteria=criteria)

    assert QAItem.objects.get(pk=item.item_id).status == QAItem.Status.ACCEPTED
    assert len(trivia_reviews(item)) == 2


def test_the_review_criteria_are_project_settings(trivia):
    criteria = [{"key": "fun", "label": "Fun to answer", "help": ""}]

    trivia_settings_update(project=trivia, review_criteria=criteria)
    trivia.refresh_from_db()

    assert [c["key"] for c in trivia.review_criteria] == ["fun"]


@pytest.mark.parametrize("name", ["both_correct_examples.csv", "both_incorrect_examples.csv"])
def test_the_fixture_csv_round_trips(trivia, coordinator, name):
    from audit.models import AuditEvent

    data = (FIXTURES / name).read_bytes()

    report = trivia_import_csv(project=trivia, data=data, name=name, subset="local", user=coordinator)
    exported = trivia_export_csv(trivia)

    assert report["created"] == 50
    assert _rows(exported) == _rows(data)
    assert exported.replace(b"\r\n", b"\n") == data.replace(b"\r\n", b"\n")  # byte for byte, line ends aside
    assert AuditEvent.objects.filter(project=trivia, action="import.finished", actor=coordinator).count() == 1


def test_difficulty_1_to_3_maps_to_easy_medium_hard_on_import(trivia, coordinator):
    trivia_import_csv(
        project=trivia, data=(FIXTURES / "both_correct_examples.csv").read_bytes(), subset="global", user=coordinator
    )
    first = TriviaItem.objects.select_related("item").get(external_id="1")

    assert (first.difficulty, first.answer, first.candidates[first.answer]) == ("easy", 1, '"Obaba"')
    assert set(TriviaItem.objects.values_list("difficulty", flat=True)) <= {"easy", "medium", "hard"}
    assert first.item.revisions.get().reason == QAItemRevision.Reason.IMPORTED
    assert first.status == QAItem.Status.ACCEPTED


def test_a_bad_csv_row_names_line_and_field_and_writes_nothing(trivia, coordinator):
    data = (
        b"id,category,difficulty,question,candidate0,candidate1,candidate2,answer\n1,C,1,Q?,a,b,c,0\n2,C,7,Q?,a,b,c,0\n"
    )

    with pytest.raises(InvalidInput) as error:
        trivia_import_csv(project=trivia, data=data, subset="local", user=coordinator)

    assert "line 3 (id 2)" in error.value.message and "difficulty" in error.value.message
    assert not TriviaItem.objects.exists() and not QAItem.objects.exists()


def test_a_csv_without_a_subset_for_its_rows_is_refused(trivia, coordinator):
    with pytest.raises(InvalidInput, match="subset"):
        trivia_import_csv(project=trivia, data=(FIXTURES / "both_correct_examples.csv").read_bytes(), user=coordinator)


def test_jsonl_round_trips_with_translations(trivia, coordinator):
    records = [
        item_values(id="a1") | {"target_question": "Non dago Atxondo?", "target_candidates": ["B", "G", "N"]},
        item_values(
            id="a2", subset="global", question="Who wrote Hamlet?", candidates=["Shakespeare", "Marlowe", "Kyd"]
        ),
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)

    trivia_import_jsonl(project=trivia, data=data, user=coordinator)
    out = [orjson.loads(line) for line in trivia_export_jsonl(trivia).splitlines()]

    assert [r["id"] for r in out] == ["a1", "a2"]
    assert out[0]["target_candidates"] == ["B", "G", "N"]
    assert TriviaItem.objects.get(external_id="a1").translation_status == "done"
    assert TriviaItem.objects.get(external_id="a2").translation_status == "open"


def test_the_balance_counts_category_by_subset_by_difficulty_with_empty_cells(trivia, annotator):
    trivia_item_create(project=trivia, user=annotator, **item_values())
    trivia_item_create(project=trivia, user=annotator, **item_values(question="Q2?"))
    trivia_item_create(project=trivia, user=annotator, **item_values(subset="global", difficulty="hard"))

    balance = trivia_balance(trivia)
    rows = {row["category"]: row for row in balance["rows"]}

    assert rows["Geografia eta Historia"]["cells"]["local"]["easy"]["count"] == 2
    assert rows["Geografia eta Historia"]["cells"]["global"]["hard"]["count"] == 1
    assert rows["Zinema eta ikuskizunak"]["total"] == 0
    assert balance["total"] == 3 and balance["minimum"] == 0


def test_two_translators_never_get_the_same_item_and_authors_not_their_own(trivia, accepted_item, annotator, reviewer):
    from tests import factories

    other = factories.user("translator2")
    membership_set(project=trivia, user=other, roles={"annotator"})

    assert translation_claim_next(project=trivia, user=annotator) is None  # the author
    first = translation_claim_next(project=trivia, user=other)
    assert first.pk == accepted_item.pk
    assert translation_claim_next(project=trivia, user=other).pk == first.pk  # held
    assert translation_claim_next(project=trivia, user=reviewer) is None


def test_a_translation_keeps_the_order_and_the_correct_index(trivia, accepted_item, second_annotator):
    item = translation_claim_next(project=trivia, user=second_annotator)

    with pytest.raises(InvalidInput, match="every candidate"):
        translation_submit(item=item, user=second_annotator, target_question="Where?", target_candidates=["a", "b"])
    item = translation_submit(
        item=item, user=second_annotator, target_question="Where is Atxondo?", target_candidates=["B", "G", "N"]
    )

    assert item.translation_status == "done"
    assert item.target_choices[item.answer] == (0, "B", True)


def test_a_problem_tag_sends_the_item_to_the_coordinator(flagged_item):
    assert flagged_item.translation_status == "flagged"
    assert flagged_item.problem_tags == ["outdated"]


def test_a_coordinator_fix_of_the_source_makes_a_new_revision(flagged_item, coordinator):
    item = translation_resolve(
        item=flagged_item,
        user=coordinator,
        resolution="fix",
        source={"question": "Where is Atxondo today?", "answer": 1},
        target_question="Where is Atxondo today?",
    )

    assert item.translation_status == "done" and item.resolution == "fix"
    assert item.question == "Where is Atxondo today?" and item.answer == 1
    assert item.item.answer_standard == "In Gipuzkoa"
    revisions = item.item.revisions.order_by("number")
    assert list(revisions.values_list("number", "reason", "author")) == [
        (1, "submitted", flagged_item.item.author_id),
        (2, "coordinator_fix", coordinator.pk),
    ]
    assert revisions[1].question == "Where is Atxondo today?" and revisions[1].content["answer"] == 1
    assert revisions[0].question == "Where's Atxondo?" and revisions[0].content["answer"] == 0  # kept


def test_accept_keeps_the_translation_and_drop_leaves_the_item_out_of_exports(trivia, flagged_item, coordinator):
    translation_resolve(item=flagged_item, user=coordinator, resolution="drop")

    assert trivia_export_jsonl(trivia) == b""
    qa = QAItem.objects.get(pk=flagged_item.item_id)
    assert qa.status == QAItem.Status.REJECTED
    event = ItemEvent.objects.get(item=qa, action=ItemEvent.Action.REJECTED)
    assert event.actor_id == coordinator.pk and "outdated" in event.note
    with pytest.raises(InvalidState):
        translation_resolve(item=flagged_item, user=coordinator, resolution="accept")


def test_an_unknown_resolution_or_tag_is_refused(flagged_item, coordinator):
    with pytest.raises(InvalidInput, match="resolution"):
        translation_resolve(item=flagged_item, user=coordinator, resolution="maybe")
    with pytest.raises(InvalidInput, match="problem_tags"):
        _check_tags(["boring"])


def test_translations_and_resolutions_are_in_the_audit_log(trivia, flagged_item, coordinator, second_annotator):
    from audit.models import AuditEvent

    translation_resolve(item=flagged_item, user=coordinator, resolution="accept")

    # Ids are per table (the project may share the item's number): the item's own events only.
    events = AuditEvent.objects.filter(project=trivia, object_type="item", object_id=flagged_item.item_id).order_by(
        "id"
    )
    assert [(e.action, e.actor_id) for e in events] == [
        ("trivia.translated", second_annotator.pk),
        ("trivia.resolved", coordinator.pk),
    ]
    assert events[0].details["problem_tags"] == ["outdated"] and events[1].details["resolution"] == "accept"


def test_the_pair_holding_a_projects_items_cannot_be_deleted_with_them(accepted_item, coordinator):
    from annotation.services.deletion import pair_delete

    holder = items_pair(accepted_item.project)
    with pytest.raises(InvalidState, match="deleted one by one"):
        pair_delete(pair=holder, user=coordinator)
    holder.refresh_from_db()
    assert holder.deleted_at is None
    assert trivia_items(accepted_item.project).filter(pk=accepted_item.pk).exists()
