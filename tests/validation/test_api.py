"""The validation API end to end: create, import, seed queries, domains, validate, agreement, release."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Project
from annotation.services.members import membership_set
from exports.services import release_build_now, release_file_path
from tests.conftest import api_as
from tests.validation.conftest import ARABIC_TSV, NATIVQA, TSV_HEADER


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_a_validation_project_runs_from_import_to_release_through_the_api(
    superuser, reviewer, coordinator, django_capture_on_commit_callbacks
):
    root = api_as(superuser)
    created = root.post(
        "/api/validation/projects/",
        {"name": "Doha", "slug": "doha", "language": "arb", "location": "الدوحة", "validators_per_item": 1},
        format="json",
    )
    assert created.status_code == 201, created.data
    assert (created.data["kind"], created.data["language"]) == ("validation", "arb")
    project = Project.objects.get(slug="doha")
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    membership_set(project=project, user=coordinator, roles={"coordinator"})
    client = api_as(coordinator)
    base = "/api/projects/doha/validation/"

    with django_capture_on_commit_callbacks(execute=True):  # the task runs in-process (eager) once committed
        queued = client.post(
            base + "import/", {"file": SimpleUploadedFile("a.tsv", ARABIC_TSV.encode())}, format="multipart"
        )
    assert queued.status_code == 202 and queued["Location"] == queued.data["url"]
    job = client.get(queued.data["url"])
    assert (job.data["status"], job.data["report"]["created"]) == ("done", 1)
    with django_capture_on_commit_callbacks(execute=True):
        queued = client.post(
            base + "seeds/import/",
            {
                "file": SimpleUploadedFile("t.csv", (NATIVQA / "arabic_template.csv").read_bytes()),
                "locations": ["الدوحة"],
            },
            format="multipart",
        )
    seeds = client.get(queued.data["url"]).data["report"]["seeds"]
    # Every template row is either added or counted as a duplicate.
    assert queued.status_code == 202
    assert seeds["added"] + seeds["exact_duplicates"] + seeds["near_duplicates"] == 799
    assert client.get(base + "seeds/csv/").content.decode().startswith("topic,query,location\n")
    with django_capture_on_commit_callbacks(execute=True):
        queued = client.post(
            base + "domains/import/",
            {"file": SimpleUploadedFile("d.csv", (NATIVQA / "annotated_domains.csv").read_bytes())},
            format="multipart",
        )
    domains = client.get(queued.data["url"]).data["report"]
    assert queued.status_code == 202 and domains["counts"]["items_labelled"] == {"very_reliable": 1}

    validator = api_as(reviewer)
    task = validator.post(base + "next/")
    assert task.status_code == 200
    assert (task.data["direction"], task.data["domain_label"]) == ("rtl", "very_reliable")
    edited = "المجبوس، أرز متبل باللحم."
    judged = validator.post(
        base + f"tasks/{task.data['slot']}/",
        {
            "version": task.data["version"],
            "question": "good",
            "answer": edited,
            "location_relevant": "yes",
            "likert": {"clarity": 5, "faithfulness": 5, "informativeness": 4, "plausibility": 5},
        },
        format="json",
    )
    assert judged.status_code == 200, judged.data
    assert judged.data["edit_revision"] == 2
    assert validator.post(base + "next/").status_code == 204

    item = client.get(base + f"items/{task.data['item']}/")
    assert item.data["answer"] == edited and item.data["revisions"][1]["diff"][0][0] in {"equal", "delete"}
    listed = client.get(base + "items/?label=very_reliable")
    assert listed.data["count"] == 1
    assert client.get(base + "agreement/").data["judgments"] == 1

    release = release_build_now(project=project, user=coordinator)
    line = json.loads(release_file_path(release, "validation_qa.jsonl").read_text(encoding="utf-8"))
    assert (line["answer"], line["original_answer"]) == (edited, "المجبوس، أرز بالبهارات واللحم.")
    assert line["domain_label"] == "very_reliable"


def test_a_bad_api_import_is_refused_with_the_report_naming_line_and_field(
    imported, coordinator, django_capture_on_commit_callbacks
):
    bad = TSV_HEADER + "9\tfood\tq\t\t\tf\t\tx\n"
    client = api_as(coordinator)

    with django_capture_on_commit_callbacks(execute=True):
        queued = client.post(
            f"/api/projects/{imported.slug}/validation/import/",
            {"file": SimpleUploadedFile("b.tsv", bad.encode())},
            format="multipart",
        )
    job = client.get(queued.data["url"]).data

    assert queued.status_code == 202
    assert job["status"] == "refused" and job["report"]["ok"] is False
    assert [(p["line"], p["field"]) for p in job["report"]["problems"]] == [(2, "question"), (2, "answer")]


def test_an_upload_the_api_cannot_read_is_refused_at_once_with_400(imported, coordinator):
    response = api_as(coordinator).post(
        f"/api/projects/{imported.slug}/validation/import/",
        {"file": SimpleUploadedFile("b.xlsx", b"x")},
        format="multipart",
    )

    assert response.status_code == 400
    assert "cannot tell the format from the name (.tsv, .csv or .jsonl)" in response.data["detail"]


def test_an_incomplete_judgment_is_refused_by_the_api_naming_each_task(imported, reviewer):
    client = api_as(reviewer)
    base = f"/api/projects/{imported.slug}/validation/"
    task = client.post(base + "next/").data

    response = client.post(
        base + f"tasks/{task['slot']}/",
        {"version": task["version"], "question": "good", "better": "neither"},
        format="json",
    )

    assert response.status_code == 400
    assert {"location_relevant", "domain_label", "likert.clarity"} <= set(response.data["details"])


def test_duplicates_are_listed_and_merged_through_the_api(imported, coordinator):
    client = api_as(coordinator)
    base = f"/api/projects/{imported.slug}/validation/"
    groups = client.get(base + "duplicates/").data

    merged = client.post(
        base + "duplicates/merge/",
        {"keep": groups[0]["keep"]["item"], "duplicate": groups[0]["duplicates"][0]["item"]},
        format="json",
    )

    assert merged.status_code == 200 and len(merged.data["source_urls"]) == 2
    assert client.get(base + "duplicates/").data == []
