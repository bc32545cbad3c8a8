"""Trivia and entity imports and question generation run as jobs, never in the request, with the import size cap."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import ImportJob
from multichoice import entities
from multichoice.models import Entity, EntityQuestion, TriviaItem
from tests.conftest import api_as
from tests.multichoice.conftest import FIXTURES, item_values
from tests.multichoice.test_entities import ATTRIBUTES, CSV


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def companies(coordinator):
    return entities.entity_project_create(
        name="Companies", slug="companies", language="eng", attributes=ATTRIBUTES,
        grouping_fields=["market", "country", "region"], seed=5, created_by=coordinator,
    )  # fmt: skip


def test_a_trivia_import_through_the_api_is_a_job_with_progress_and_the_report(
    trivia, coordinator, django_capture_on_commit_callbacks
):
    upload = SimpleUploadedFile("both_correct_examples.csv", (FIXTURES / "both_correct_examples.csv").read_bytes())
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = api_as(coordinator).post(
            f"/api/projects/{trivia.slug}/trivia/import/", {"file": upload, "subset": "local"}, format="multipart"
        )
    assert response.status_code == 202, response.content
    assert response["Location"] == response.json()["url"]
    assert response.json()["status"] == "pending" and not TriviaItem.objects.exists()  # nothing in the request

    for callback in queued:
        callback()
    job = api_as(coordinator).get(response.json()["url"]).json()
    assert job["status"] == "done" and job["percent"] == 100
    assert job["report"]["result"]["created"] == 50 and job["report"]["summary"] == "50 items imported."
    assert TriviaItem.objects.count() == 50


def test_the_trivia_import_page_redirects_to_the_job_page_which_shows_the_report(
    client, trivia, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)
    upload = SimpleUploadedFile("both_correct_examples.csv", (FIXTURES / "both_correct_examples.csv").read_bytes())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("trivia_import", args=[trivia.slug]), {"file": upload, "subset": "local", "add_categories": "on"}
        )
    job = ImportJob.objects.get(project=trivia)
    assert response.status_code == 302 and response.url == reverse("trivia_job", args=[trivia.slug, job.pk])

    page = client.get(response.url).content.decode()
    assert "50 items imported" in page and 'id="import-created">50<' in page
    polled = client.get(response.url, headers={"HX-Request": "true"}).content.decode()
    assert polled.strip().startswith('<section id="job-status"') and "50 items imported" in polled
    listing = client.get(reverse("trivia_import", args=[trivia.slug])).content.decode()
    assert 'id="trivia-imports"' in listing and "Undo this import" in listing and 'id="jobs"' in listing


def test_a_bad_trivia_file_ends_refused_naming_the_record_and_writes_nothing(
    trivia, coordinator, django_capture_on_commit_callbacks
):
    upload = SimpleUploadedFile("items.jsonl", json.dumps(item_values(id="x", answer=9)).encode() + b"\n")
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(coordinator).post(
            f"/api/projects/{trivia.slug}/trivia/import/", {"file": upload}, format="multipart"
        )

    job = api_as(coordinator).get(response.json()["url"]).json()
    assert job["status"] == "refused"
    assert "items.jsonl line 1 (id x)" in job["report"]["problems"][0]["message"]
    assert not TriviaItem.objects.exists()


@pytest.mark.parametrize("path", ["trivia/import/", "entities/import/"])
def test_a_file_over_the_import_cap_is_refused_at_once(
    path, trivia, companies, coordinator, settings, django_capture_on_commit_callbacks
):
    settings.IMPORT_MAX_BYTES = 100
    slug = trivia.slug if path.startswith("trivia") else companies.slug
    upload = SimpleUploadedFile("big.csv", b"name,description\n" + b"x,y\n" * 100)

    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(coordinator).post(f"/api/projects/{slug}/{path}", {"file": upload}, format="multipart")

    assert response.status_code == 400 and "IMPORT_MAX_BYTES" in response.json()["detail"]
    assert not ImportJob.objects.exists()


def test_an_entity_import_and_the_generation_are_jobs(companies, coordinator, django_capture_on_commit_callbacks):
    base = f"/api/projects/{companies.slug}/entities/"
    with django_capture_on_commit_callbacks(execute=True):
        imported = api_as(coordinator).post(
            base + "import/", {"file": SimpleUploadedFile("c.csv", CSV.encode())}, format="multipart"
        )
    assert imported.status_code == 202
    report = api_as(coordinator).get(imported.json()["url"]).json()["report"]
    assert report["result"]["created"] == 8 and Entity.objects.count() == 8

    with django_capture_on_commit_callbacks(execute=False) as queued:
        generating = api_as(coordinator).post(base + "generate/", {}, format="json")
    assert generating.status_code == 202 and not EntityQuestion.objects.exists()
    assert generating.json()["bytes_total"] == entities.fact_count(companies) == 26  # facts to work through
    for callback in queued:
        callback()
    job = api_as(coordinator).get(generating.json()["url"]).json()
    assert job["status"] == "done" and job["report"]["result"]["created"] == 52
    assert EntityQuestion.objects.count() == 52


def test_the_generate_button_leads_to_the_job_page(client, companies, coordinator, django_capture_on_commit_callbacks):
    entities.entities_import(project=companies, data=CSV.encode(), name="c.csv")
    client.force_login(coordinator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("entity_generate", args=[companies.slug]))
    job = ImportJob.objects.get(project=companies, format="generate")
    assert response.url == reverse("entity_job", args=[companies.slug, job.pk])
    page = client.get(response.url).content.decode()
    assert "52 questions generated" in page
    assert 'id="jobs"' in client.get(reverse("entity_home", args=[companies.slug])).content.decode()


def test_an_entity_file_beyond_the_project_cap_is_refused(
    companies, coordinator, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(entities, "MAX_ENTITIES", 5)
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(coordinator).post(
            f"/api/projects/{companies.slug}/entities/import/",
            {"file": SimpleUploadedFile("c.csv", CSV.encode())},
            format="multipart",
        )
    job = api_as(coordinator).get(response.json()["url"]).json()
    assert job["status"] == "refused" and "more than the limit of 5" in job["report"]["problems"][0]["message"]
    assert not Entity.objects.exists()


def test_another_projects_coordinator_cannot_read_a_job(
    trivia, coordinator, outsider, client, django_capture_on_commit_callbacks
):
    upload = SimpleUploadedFile("a.jsonl", json.dumps(item_values(id="a")).encode() + b"\n")
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(coordinator).post(
            f"/api/projects/{trivia.slug}/trivia/import/", {"file": upload}, format="multipart"
        )
    job_id = response.json()["id"]
    client.force_login(outsider)
    assert client.get(reverse("trivia_job", args=[trivia.slug, job_id])).status_code in (403, 404)
    assert api_as(outsider).get(response.json()["url"]).status_code in (403, 404)


def test_the_new_project_form_prefills_no_example_only_placeholders(client, superuser):
    client.force_login(superuser)

    page = client.get(reverse("entity_project_create")).content.decode()

    assert 'value="key_people"' not in page and 'value="Key people"' not in page
    assert 'value="market, country, region"' not in page
    assert 'placeholder="e.g. key_people"' in page and 'placeholder="e.g. Headquarters"' in page


def test_the_renamed_example_trap_is_refused_at_import_naming_both_columns(
    client, superuser, django_capture_on_commit_callbacks
):
    """The old form pre-filled "Key people" with its column key_people; renaming it "Founding year" kept the
    column, and a file with founding_year imported with every year empty."""
    client.force_login(superuser)
    fields = {"attribute-0-label": "Founding year", "attribute-0-key": "key_people", "attribute-0-kind": "year"}
    fields |= {"attribute-0-inductive": "When was {entity} founded?", "attribute-0-deductive": "Who in {value}?"}
    client.post(reverse("entity_project_create"), {"name": "Trap", "slug": "trap", "language": "eng",
                                                    "attribute_rows": "1", **fields})  # fmt: skip
    upload = SimpleUploadedFile("c.csv", b"name,description,founding_year\nA,a,1990\n")

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("entity_import", args=["trap"]), {"file": upload})

    page = client.get(response.url).content.decode()
    assert "Refused" in page
    assert (
        "no column for the attribute key_people (Founding year)" in page and "match no attribute: founding_year" in page
    )
    assert not Entity.objects.exists()


def test_columns_that_feed_nothing_are_reported(companies, coordinator, django_capture_on_commit_callbacks):
    data = CSV.replace("market,country,region", "website,country,region").replace(",Energy,", ",e.com,")
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(coordinator).post(
            f"/api/projects/{companies.slug}/entities/import/",
            {"file": SimpleUploadedFile("c.csv", data.encode())},
            format="multipart",
        )

    report = api_as(coordinator).get(response.json()["url"]).json()["report"]
    assert report["ok"] and report["result"]["ignored_columns"] == ["website"]
    warnings = [w["message"] for w in report["warnings"]]
    assert "Columns that match no attribute or grouping field, not imported: website." in warnings
    assert "No column for the grouping field market: left empty." in warnings
