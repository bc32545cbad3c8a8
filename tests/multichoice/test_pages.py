"""The trivia pages over HTTP: what they show and what a bad form says."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from multichoice.models import TriviaItem
from multichoice.services.items import trivia_item_create
from tests.conftest import api_as
from tests.multichoice.conftest import FIXTURES, item_values


def test_a_bad_item_form_says_which_field_and_keeps_what_was_typed(client, trivia, annotator):
    client.force_login(annotator)
    data = {"question": "Q?", "candidate0": "a", "candidate1": "", "candidate2": "c", "answer": "0"}
    data |= {"subset": "local", "category": "Geografia eta Historia", "difficulty": "easy"}

    response = client.post(reverse("trivia_item_new", args=[trivia.slug]), data, follow=True)

    assert "candidates[1]: must not be empty" in response.content.decode()
    assert 'value="Q?"' in response.content.decode() or ">Q?<" in response.content.decode()
    assert not TriviaItem.objects.exists()


def test_the_import_page_imports_the_fixture_and_shows_the_balance(
    client, trivia, coordinator, django_capture_on_commit_callbacks, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(coordinator)
    upload = SimpleUploadedFile("both_correct_examples.csv", (FIXTURES / "both_correct_examples.csv").read_bytes())

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("trivia_import", args=[trivia.slug]),
            {"file": upload, "subset": "local", "add_categories": "on"},
        )

    page = client.get(response.url).content.decode()
    assert "50 items imported" in page and 'id="import-created">50<' in page
    assert TriviaItem.objects.count() == 50
    balance = client.get(reverse("trivia_balance", args=[trivia.slug])).content.decode()
    assert 'id="balance"' in balance and "Euskara eta literatura" in balance
    assert 'class="num low' in balance  # the emptiest cells (no global item yet) are marked


def test_the_csv_download_is_the_simple_layout(client, trivia, coordinator, annotator):
    trivia_item_create(project=trivia, user=annotator, **item_values())
    client.force_login(coordinator)

    response = client.get(reverse("trivia_export_csv", args=[trivia.slug]))

    assert response["Content-Type"].startswith("text/csv")
    assert (
        response.content.decode().splitlines()[0]
        == "id,category,difficulty,question,candidate0,candidate1,candidate2,answer"
    )


def test_the_api_takes_an_item_from_authoring_to_translation(
    trivia, annotator, second_annotator, reviewer, coordinator
):
    slug = trivia.slug
    created = api_as(annotator).post(f"/api/projects/{slug}/trivia/items/", item_values(), format="json")
    assert created.status_code == 201, created.content
    item_id = created.json()["id"]
    criteria = {c["key"]: True for c in trivia.review_criteria}
    assert (
        api_as(reviewer)
        .post(f"/api/projects/{slug}/trivia/items/{item_id}/review/", {"criteria": criteria}, format="json")
        .status_code
        == 201
    )

    claimed = api_as(second_annotator).post(f"/api/projects/{slug}/trivia/translate/next/")
    assert claimed.json()["id"] == item_id
    body = {
        "target_question": "Where?",
        "target_candidates": ["B", "G", "N"],
        "problem_tags": ["difficult_translation"],
    }
    flagged = api_as(second_annotator).post(
        f"/api/projects/{slug}/trivia/items/{item_id}/translation/", body, format="json"
    )
    assert flagged.json()["translation_status"] == "flagged"

    problems = api_as(coordinator).get(f"/api/projects/{slug}/trivia/problems/").json()
    assert [p["id"] for p in problems["results"]] == [item_id]
    resolved = api_as(coordinator).post(
        f"/api/projects/{slug}/trivia/items/{item_id}/resolution/",
        {"resolution": "fix", "source": {"answer": 1}},
        format="json",
    )
    assert resolved.status_code == 200, resolved.content
    assert [r["reason"] for r in resolved.json()["revisions"]] == ["submitted", "coordinator_fix"]
    balance = api_as(coordinator).get(f"/api/projects/{slug}/trivia/balance/").json()
    assert balance["total"] == 1


def test_save_and_review_the_next_opens_the_next_item(client, trivia, annotator, reviewer):
    first = trivia_item_create(project=trivia, user=annotator, **item_values(question="Q1?"))
    second = trivia_item_create(project=trivia, user=annotator, **item_values(question="Q2?"))
    client.force_login(reviewer)
    criteria = [c["key"] for c in trivia.review_criteria]

    response = client.post(
        reverse("trivia_review", args=[trivia.slug, first.item_id]), {"criteria": criteria, "then": "next"}
    )

    assert response.status_code == 302
    assert response.url == reverse("trivia_item", args=[trivia.slug, second.item_id])
