"""Trivia projects through their services: authoring, review, import/export, balance, translation, resolution."""

from __future__ import annotations

import csv
import io

import orjson
import pytest

from annotation.errors import InvalidInput, InvalidState
from multichoice import services
from multichoice.models import TriviaItem, TriviaRevision
from tests.multichoice.conftest import FIXTURES, item_values


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))


def test_an_author_writes_an_item_that_goes_to_review_as_revision_1(trivia, annotator):
    item = services.trivia_item_create(project=trivia, user=annotator, **item_values())

    assert item.status == TriviaItem.Status.SUBMITTED
    assert item.translation_status == TriviaItem.Translation.WAITING
    assert list(item.revisions.values_list("number", "reason")) == [(1, "authored")]


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
        services.trivia_item_create(project=trivia, user=annotator, **item_values(**changes))

    assert error.value.field == field
    assert not TriviaItem.objects.exists()


def test_difficulty_may_be_given_as_1_to_3(trivia, annotator):
    item = services.trivia_item_create(project=trivia, user=annotator, **item_values(difficulty="3"))

    assert item.difficulty == "hard"


def test_review_with_every_criterion_met_accepts_and_opens_the_item_to_translators(accepted_item):
    assert accepted_item.status == TriviaItem.Status.ACCEPTED
    assert accepted_item.translation_status == TriviaItem.Translation.OPEN
    assert accepted_item.reviews.get().criteria == {
        "one_correct": True,
        "plausible": True,
        "not_from_wording": True,
        "not_outdated": True,
    }


def test_an_unmet_criterion_sends_the_item_back_and_the_rewrite_is_revision_2(trivia, annotator, reviewer):
    item = services.trivia_item_create(project=trivia, user=annotator, **item_values())
    services.trivia_review(item=item, user=reviewer, criteria={"one_correct": True}, comment="Distractors too easy")
    item.refresh_from_db()
    assert item.status == TriviaItem.Status.NEEDS_REWRITE

    item = services.trivia_item_rewrite(
        item=item,
        user=annotator,
        version=item.version,
        **item_values(candidates=["In Biscay", "In Álava", "In Navarre"]),
    )

    assert item.status == TriviaItem.Status.SUBMITTED
    assert [r.candidates[1] for r in item.revisions.all()] == ["In Gipuzkoa", "In Álava"]


def test_a_rejection_needs_a_comment_and_authors_cannot_review_their_own_items(trivia, annotator, reviewer):
    item = services.trivia_item_create(project=trivia, user=annotator, **item_values())

    with pytest.raises(InvalidInput):
        services.trivia_review(item=item, user=reviewer, criteria={})
    with pytest.raises(InvalidState):
        services.trivia_review(item=item, user=annotator, criteria={})


def test_the_review_criteria_are_project_settings(trivia):
    criteria = [{"key": "fun", "label": "Fun to answer", "help": ""}]

    services.trivia_settings_update(project=trivia, review_criteria=criteria)
    trivia.refresh_from_db()

    assert [c["key"] for c in trivia.review_criteria] == ["fun"]


@pytest.mark.parametrize("name", ["both_correct_examples.csv", "both_incorrect_examples.csv"])
def test_the_fixture_csv_round_trips(trivia, coordinator, name):
    data = (FIXTURES / name).read_bytes()

    report = services.trivia_import_csv(project=trivia, data=data, name=name, subset="local", user=coordinator)
    exported = services.trivia_export_csv(trivia)

    assert report["created"] == 50
    assert _rows(exported) == _rows(data)


def test_difficulty_1_to_3_maps_to_easy_medium_hard_on_import(trivia, coordinator):
    services.trivia_import_csv(
        project=trivia, data=(FIXTURES / "both_correct_examples.csv").read_bytes(), subset="global", user=coordinator
    )
    first = TriviaItem.objects.get(external_id="1")

    assert (first.difficulty, first.answer, first.candidates[first.answer]) == ("easy", 1, '"Obaba"')
    assert set(TriviaItem.objects.values_list("difficulty", flat=True)) <= {"easy", "medium", "hard"}
    assert first.revisions.get().reason == TriviaRevision.Reason.IMPORTED


def test_a_bad_csv_row_names_line_and_field_and_writes_nothing(trivia, coordinator):
    data = (
        b"id,category,difficulty,question,candidate0,candidate1,candidate2,answer\n1,C,1,Q?,a,b,c,0\n2,C,7,Q?,a,b,c,0\n"
    )

    with pytest.raises(InvalidInput) as error:
        services.trivia_import_csv(project=trivia, data=data, subset="local", user=coordinator)

    assert "line 3 (id 2)" in error.value.message and "difficulty" in error.value.message
    assert not TriviaItem.objects.exists()


def test_a_csv_without_a_subset_for_its_rows_is_refused(trivia, coordinator):
    with pytest.raises(InvalidInput, match="subset"):
        services.trivia_import_csv(
            project=trivia, data=(FIXTURES / "both_correct_examples.csv").read_bytes(), user=coordinator
        )


def test_jsonl_round_trips_with_translations(trivia, coordinator):
    records = [
        item_values(id="a1") | {"target_question": "Non dago Atxondo?", "target_candidates": ["B", "G", "N"]},
        item_values(
            id="a2", subset="global", question="Who wrote Hamlet?", candidates=["Shakespeare", "Marlowe", "Kyd"]
        ),
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)

    services.trivia_import_jsonl(project=trivia, data=data, user=coordinator)
    out = [orjson.loads(line) for line in services.trivia_export_jsonl(trivia).splitlines()]

    assert [r["id"] for r in out] == ["a1", "a2"]
    assert out[0]["target_candidates"] == ["B", "G", "N"]
    assert TriviaItem.objects.get(external_id="a1").translation_status == "done"
    assert TriviaItem.objects.get(external_id="a2").translation_status == "open"


def test_the_balance_counts_category_by_subset_by_difficulty_with_empty_cells(trivia, annotator):
    services.trivia_item_create(project=trivia, user=annotator, **item_values())
    services.trivia_item_create(project=trivia, user=annotator, **item_values(question="Q2?"))
    services.trivia_item_create(project=trivia, user=annotator, **item_values(subset="global", difficulty="hard"))

    balance = services.trivia_balance(trivia)
    rows = {row["category"]: row for row in balance["rows"]}

    assert rows["Geografia eta Historia"]["cells"]["local"]["easy"] == 2
    assert rows["Geografia eta Historia"]["cells"]["global"]["hard"] == 1
    assert rows["Zinema eta ikuskizunak"]["total"] == 0
    assert balance["total"] == 3 and balance["minimum"] == 0


def test_two_translators_never_get_the_same_item_and_authors_not_their_own(trivia, accepted_item, annotator, reviewer):
    from annotation import services as annotation_services
    from tests import factories

    other = factories.user("translator2")
    annotation_services.membership_set(project=trivia, user=other, roles={"annotator"})

    assert services.translation_claim_next(project=trivia, user=annotator) is None  # the author
    first = services.translation_claim_next(project=trivia, user=other)
    assert first.pk == accepted_item.pk
    assert services.translation_claim_next(project=trivia, user=other).pk == first.pk  # held
    assert services.translation_claim_next(project=trivia, user=reviewer) is None


def test_a_translation_keeps_the_order_and_the_correct_index(trivia, accepted_item, second_annotator):
    item = services.translation_claim_next(project=trivia, user=second_annotator)

    with pytest.raises(InvalidInput, match="every candidate"):
        services.translation_submit(
            item=item, user=second_annotator, target_question="Where?", target_candidates=["a", "b"]
        )
    item = services.translation_submit(
        item=item, user=second_annotator, target_question="Where is Atxondo?", target_candidates=["B", "G", "N"]
    )

    assert item.translation_status == "done"
    assert item.target_choices[item.answer] == (0, "B", True)


def test_a_problem_tag_sends_the_item_to_the_coordinator(flagged_item):
    assert flagged_item.translation_status == "flagged"
    assert flagged_item.problem_tags == ["outdated"]


def test_a_coordinator_fix_of_the_source_makes_a_new_revision(flagged_item, coordinator):
    item = services.translation_resolve(
        item=flagged_item,
        user=coordinator,
        resolution="fix",
        source={"question": "Where is Atxondo today?"},
        target_question="Where is Atxondo today?",
    )

    assert item.translation_status == "done" and item.resolution == "fix"
    assert list(item.revisions.values_list("number", "reason")) == [(1, "authored"), (2, "coordinator_fix")]
    assert item.revisions.get(number=2).question == "Where is Atxondo today?"


def test_accept_keeps_the_translation_and_drop_leaves_the_item_out_of_exports(trivia, flagged_item, coordinator):
    services.translation_resolve(item=flagged_item, user=coordinator, resolution="drop")

    assert services.trivia_export_jsonl(trivia) == b""
    with pytest.raises(InvalidState):
        services.translation_resolve(item=flagged_item, user=coordinator, resolution="accept")


def test_an_unknown_resolution_or_tag_is_refused(flagged_item, coordinator):
    with pytest.raises(InvalidInput, match="resolution"):
        services.translation_resolve(item=flagged_item, user=coordinator, resolution="maybe")
    with pytest.raises(InvalidInput, match="problem_tags"):
        services._check_tags(["boring"])
