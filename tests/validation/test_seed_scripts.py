"""Seed queries never mix two languages, and every expansion left out is reported on the job's page."""

from __future__ import annotations

import csv
import io

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.conftest import api_as
from validation.models import SeedQuery

TEMPLATES = (
    "topic,query\n"
    "food,best restaurants in [LOCATION]\n"
    "food,أفضل المطاعم في [LOCATION]\n"
    "people,famous [LOCATION]ers\n"
    "travel,what to see\n"
)


def test_templates_are_filled_only_with_locations_in_their_script(
    vproject, coordinator, django_capture_on_commit_callbacks
):
    base = f"/api/projects/{vproject.slug}/validation/"
    with django_capture_on_commit_callbacks(execute=True):
        queued = api_as(coordinator).post(
            base + "seeds/import/",
            {"file": SimpleUploadedFile("t.csv", TEMPLATES.encode()), "locations": ["Doha", "الدوحة"]},
            format="multipart",
        )
    seeds = api_as(coordinator).get(queued.json()["url"]).json()["report"]["seeds"]

    queries = set(SeedQuery.objects.values_list("query", flat=True))
    assert "best restaurants in Doha" in queries and "أفضل المطاعم في الدوحة" in queries
    assert "best restaurants in الدوحة" not in queries and "أفضل المطاعم في Doha" not in queries
    # the Latin templates left out for الدوحة (two), the Arabic one for Doha
    assert seeds["other_script"] == {"الدوحة: Latin": 2, "Doha: Arabic": 1} and seeds["other_script_total"] == 3
    assert seeds["missing_forms"] == {"Doha: demonym": 1}
    rows = list(csv.reader(io.StringIO(api_as(coordinator).get(base + "seeds/csv/").content.decode())))
    assert ["food", "best restaurants in الدوحة", "الدوحة"] not in rows


def test_the_job_page_reports_what_was_left_out_and_why(
    client, vproject, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)
    upload = SimpleUploadedFile("t.csv", TEMPLATES.encode())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("validation_seeds", args=[vproject.slug]),
            {"action": "import", "file": upload, "locations": "Doha\nالدوحة"},
        )

    page = client.get(response.url).content.decode()
    assert 'id="seed-missing-forms"' in page and "1 query left out: the location lacks a word form" in page
    assert "Doha: demonym: 1" in page
    assert 'id="seed-other-script"' in page and "3 queries left out: the template and the location" in page
    assert "الدوحة: Latin templates: 2" in page


def test_a_hand_written_query_in_another_script_than_its_location_is_refused(vproject, coordinator):
    response = api_as(coordinator).post(
        f"/api/projects/{vproject.slug}/validation/seeds/",
        {"topic": "food", "query": "أفضل المطاعم في [LOCATION]", "location": "Doha"},
        format="json",
    )

    assert response.status_code == 400 and "written in Arabic script and Doha is not" in response.json()["detail"]
    assert not SeedQuery.objects.exists()
