"""Trivia beyond one pass: re-importing is recognised and an import is undone in bulk, a coordinator sends a
translation back, reviewers per item come from the trivia settings, and the balance has targets, its emptiest
cells and a translated-only view. On the BertaQA fixture files."""

from __future__ import annotations

import pytest

from annotation.models import QAItem
from audit.models import AuditEvent
from common.errors import InvalidInput, InvalidState
from multichoice.models import TriviaImport, TriviaItem
from multichoice.services.balance import trivia_balance, trivia_targets_set
from multichoice.services.files import trivia_import_csv, trivia_import_undo, trivia_imports
from multichoice.services.items import trivia_item_create, trivia_items
from multichoice.services.projects import trivia_settings_update
from multichoice.services.translation import translation_claim_next, translation_send_back, translation_submit
from review.models import ReviewSlot
from tests.multichoice.conftest import FIXTURES, item_values

CORRECT = FIXTURES / "both_correct_examples.csv"
INCORRECT = FIXTURES / "both_incorrect_examples.csv"


def _import(trivia, path, user, data=None):
    data = path.read_bytes() if data is None else data
    return trivia_import_csv(project=trivia, data=data, name=path.name, subset="local", user=user)


def test_the_same_file_twice_is_recognised_and_imports_nothing(trivia, coordinator):
    first = _import(trivia, CORRECT, coordinator)

    again = _import(trivia, CORRECT, coordinator)

    assert first["created"] == 50 and first["already_imported"] is None
    assert again["created"] == 0 and again["already_imported"]["import_id"] == first["import_id"]
    ids = list(TriviaItem.objects.filter(project=trivia).values_list("external_id", flat=True))
    assert len(ids) == len(set(ids)) == 50


def test_records_already_there_are_skipped_by_source_id_and_reported(trivia, coordinator):
    _import(trivia, CORRECT, coordinator)
    lines = CORRECT.read_bytes().splitlines(keepends=True)
    # the same items with a changed line ending and one new row: another file, the same ids
    edited = b"".join(lines).replace(b"\n", b"\r\n") + b'999,Geografia eta Historia,2,"New?",a,b,c,0\r\n'

    report = _import(trivia, CORRECT, coordinator, data=edited)

    assert report["created"] == 1
    assert len(report["skipped"]) == 50 and report["skipped"][0]["id"] == "1"
    assert "line 2 (id 1)" in report["skipped"][0]["where"]
    assert TriviaItem.objects.filter(project=trivia).count() == 51


def test_a_record_without_an_id_is_recognised_by_its_content(trivia, coordinator):
    data = b"category,difficulty,question,candidate0,candidate1,candidate2,answer\nC,1,Q?,a,b,c,0\n"
    trivia_import_csv(project=trivia, data=data, name="a.csv", subset="local", user=coordinator)

    report = trivia_import_csv(
        project=trivia, data=data + b"C,1,Other?,a,b,c,0\n", name="b.csv", subset="local", user=coordinator
    )

    assert report["created"] == 1 and report["skipped"][0]["id"] == ""


def test_an_id_twice_in_one_file_refuses_the_file(trivia, coordinator):
    data = (
        b"id,category,difficulty,question,candidate0,candidate1,candidate2,answer\n1,C,1,Q?,a,b,c,0\n1,C,1,R?,a,b,c,0\n"
    )

    with pytest.raises(InvalidInput) as error:
        trivia_import_csv(project=trivia, data=data, name="d.csv", subset="local", user=coordinator)

    assert "d.csv line 3 (id 1): id: '1' is also on d.csv line 2" in error.value.message
    assert not TriviaItem.objects.exists() and not TriviaImport.objects.exists()


def test_an_import_is_undone_in_bulk_and_the_file_can_come_again(trivia, coordinator, second_annotator):
    report = _import(trivia, CORRECT, coordinator)
    _import(trivia, INCORRECT, coordinator)
    batch = TriviaImport.objects.get(pk=report["import_id"])
    translation_claim_next(project=trivia, user=second_annotator)  # one item of the file is being translated

    result = trivia_import_undo(batch=batch, user=coordinator)

    assert result == {"import_id": batch.pk, "deleted": 50, "worked_on": 1}
    assert trivia_items(trivia).count() == 50  # the other file's items stay
    assert not trivia_items(trivia).filter(import_batch=batch).exists()
    assert QAItem.objects.filter(trivia__import_batch=batch, deleted_at__isnull=False).count() == 50
    with pytest.raises(InvalidState):
        trivia_import_undo(batch=batch, user=coordinator)
    assert AuditEvent.objects.filter(project=trivia, action="item.deleted", details__undone_import=batch.pk).exists()
    assert _import(trivia, CORRECT, coordinator)["created"] == 50  # undone: the file is new again
    assert trivia_imports(trivia).get(pk=batch.pk).live == 0


def _translated(trivia, accepted_item, translator):
    item = translation_claim_next(project=trivia, user=translator)
    return translation_submit(
        item=item,
        user=translator,
        target_question="Non dago Atxondo?",
        target_candidates=["Bizkaian", "Gipuzkoan", "Nafarroan"],
    )


def test_a_coordinator_sends_a_translation_back_to_its_translator(trivia, accepted_item, coordinator, second_annotator):
    done = _translated(trivia, accepted_item, second_annotator)

    with pytest.raises(InvalidInput):
        translation_send_back(item=done, user=coordinator, note=" ")
    back = translation_send_back(item=done, user=coordinator, note="Use the Basque place names.")

    assert (back.translation_status, back.translator_id, back.sent_back_note) == (
        "claimed",
        second_annotator.pk,
        "Use the Basque place names.",
    )
    assert back.target_question == "Non dago Atxondo?"  # kept for the translator to change
    assert translation_claim_next(project=trivia, user=second_annotator).pk == back.pk  # theirs again
    again = translation_submit(
        item=back,
        user=second_annotator,
        target_question="Non dago Atxondo?",
        target_candidates=["Bizkaian", "Gipuzkoan", "Nafarroan"],
    )
    assert again.translation_status == "done" and again.sent_back_note == "" and again.resolution == ""
    assert AuditEvent.objects.filter(action="trivia.resolved", details__resolution="returned").exists()


def test_sending_back_an_untranslated_item_is_refused(accepted_item, coordinator):
    with pytest.raises(InvalidState):
        translation_send_back(item=accepted_item, user=coordinator, note="Again")


def test_reviewers_per_item_come_from_the_trivia_settings(trivia, annotator, coordinator):
    trivia_settings_update(project=trivia, reviewers_per_item=2, actor=coordinator)
    trivia.refresh_from_db()

    item = trivia_item_create(project=trivia, user=annotator, **item_values())

    assert trivia.reviewers_per_item == 2
    assert ReviewSlot.objects.filter(item_id=item.item_id).count() == 2
    with pytest.raises(InvalidInput):
        trivia_settings_update(project=trivia, reviewers_per_item=0)


def test_the_balance_marks_the_emptiest_cells_and_counts_against_targets(trivia, coordinator, accepted_item):
    _import(trivia, CORRECT, coordinator)
    trivia_targets_set(
        project=trivia,
        targets={"Geografia eta Historia": {"local": {"easy": 40, "hard": ""}}, "Zinema eta ikuskizunak": {}},
        actor=coordinator,
    )

    balance = trivia_balance(trivia)
    rows = {row["category"]: row for row in balance["rows"]}
    easy = rows["Geografia eta Historia"]["cells"]["local"]["easy"]

    assert easy["target"] == 40 and easy["missing"] == 40 - easy["count"]
    assert rows["Geografia eta Historia"]["cells"]["local"]["hard"]["target"] is None
    assert balance["minimum"] == 0
    assert rows["Geografia eta Historia"]["cells"]["global"]["easy"]["low"]  # no global item at all
    assert not easy["low"]
    with pytest.raises(InvalidInput) as error:
        trivia_targets_set(project=trivia, targets={"Geografia eta Historia": {"local": {"easy": -1}}})
    assert error.value.field == "targets.Geografia eta Historia.local.easy"


def test_the_translated_only_balance_counts_what_a_release_takes(trivia, coordinator, accepted_item, second_annotator):
    _import(trivia, CORRECT, coordinator)
    _translated(trivia, accepted_item, second_annotator)  # the first accepted item (ours, written in review)

    everything = trivia_balance(trivia)
    translated = trivia_balance(trivia, translated_only=True)

    assert everything["total"] == 51
    assert translated["total"] == 1 and translated["translated_only"]


def test_a_refused_settings_save_shows_what_the_coordinator_typed(trivia, coordinator, client):
    client.force_login(coordinator)
    url = f"/projects/{trivia.slug}/trivia/settings/"
    typed = {"categories": "Geografia\nHistoria 𠮩", "criteria": "bad line without a label", "reviewers_per_item": "0"}
    response = client.post(url, {"version": "1", **typed})
    page = response.content.decode()
    assert response.status_code == 200
    assert "Geografia\nHistoria 𠮩</textarea>" in page and "bad line without a label</textarea>" in page
    assert 'value="0"' in page
    trivia.refresh_from_db()
    assert trivia.reviewers_per_item != 0
