"""A NUL character (U+0000) in imported text is refused with the line and field named; PostgreSQL cannot store
it, so it used to end in a DataError and a 500 (trivia import, entity import, collection titles)."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from multichoice import entities
from multichoice.models import Entity, TriviaItem
from tests.conftest import api_as
from tests.multichoice.conftest import item_values
from tests.multichoice.test_entities import ATTRIBUTES
from wikiqa.models import Collection


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    monkeypatch.setattr("wikiqa.tasks.collection_run.delay", lambda collection_id: None)


def _refusal(coordinator, path: str, name: str, data: bytes, capture) -> str:
    """Import through the API (a job since imports run in the background); the refused job's first problem."""
    with capture(execute=True):
        response = api_as(coordinator).post(path, {"file": SimpleUploadedFile(name, data)}, format="multipart")
    assert response.status_code == 202, response.content
    job = api_as(coordinator).get(response.json()["url"]).json()
    assert job["status"] == "refused", job
    return job["report"]["problems"][0]["message"]


def _trivia_import(trivia, coordinator, name: str, data: bytes, capture) -> str:
    return _refusal(coordinator, f"/api/projects/{trivia.slug}/trivia/import/", name, data, capture)


def test_a_nul_in_a_trivia_jsonl_record_is_refused_with_line_and_field(
    trivia, coordinator, django_capture_on_commit_callbacks
):
    good = json.dumps(item_values(id="a")).encode()
    bad = json.dumps(item_values(id="b", candidates=["In Biscay", "In\u0000Gipuzkoa", "In Navarre"])).encode()

    message = _trivia_import(
        trivia, coordinator, "items.jsonl", good + b"\n" + bad + b"\n", django_capture_on_commit_callbacks
    )

    assert "items.jsonl line 2 (id b)" in message and "candidates[1]" in message
    assert "NUL character" in message
    assert not TriviaItem.objects.exists()


def test_a_nul_in_a_trivia_csv_cell_is_refused_with_line_and_field(
    trivia, coordinator, django_capture_on_commit_callbacks
):
    data = (
        b"id,category,difficulty,question,candidate0,candidate1,candidate2,answer\n"
        b"q1,Geografia eta Historia,1,Where\x00s Atxondo?,In Biscay,In Gipuzkoa,In Navarre,0\n"
    )

    message = _trivia_import(trivia, coordinator, "items.csv", data, django_capture_on_commit_callbacks)

    assert "items.csv line 2 (id q1): question: contains a NUL character" in message
    assert not TriviaItem.objects.exists()


def test_a_nul_in_an_entity_file_is_refused_with_line_and_field(coordinator, django_capture_on_commit_callbacks):
    entities.entity_project_create(
        name="Companies", slug="companies", language="eng", attributes=ATTRIBUTES,
        grouping_fields=["market", "country", "region"], seed=5, created_by=coordinator,
    )  # fmt: skip
    data = (
        "name,description,headquarters,founded,key_people,market,country,region\n"
        "Iberdrola,An energy company.,Bilbao,1992,Ignacio Galán,Energy,Spain,Europe\n"
        "Iberia,An air\x00line.,Madrid,1927,Marco Sansavini,Airlines,Spain,Europe\n"
    ).encode()

    message = _refusal(
        coordinator,
        "/api/projects/companies/entities/import/",
        "companies.csv",
        data,
        django_capture_on_commit_callbacks,
    )

    assert "companies.csv line 3: description: contains a NUL character" in message
    assert not Entity.objects.exists()


def test_a_nul_in_an_uploaded_titles_file_is_refused_with_the_title_named(client, project, coordinator):
    client.force_login(coordinator)
    titles = SimpleUploadedFile("titles.txt", "旺角\n深水\x00埗\n".encode())

    response = client.post(reverse("collection_start", args=[project.slug]), {"titles_file": titles})

    assert response.status_code == 400
    assert "Title 2" in response.content.decode() and "NUL character" in response.content.decode()
    assert not Collection.objects.exists()
