"""The coordinator's import and collection pages, and their API, through HTTP."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import ImportJob, PagePair
from tests.conftest import api_as
from wikiqa.models import Collection


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    monkeypatch.setattr("wikiqa.tasks.collection_run.delay", lambda collection_id: None)


def row(number: int, **fields) -> dict:
    data = {
        "local_title": f"唐樓 {number}",
        "standard_title": f"唐楼 {number}",
        "local_url": f"https://zh-yue.wikipedia.org/wiki/T{number}",
        "standard_url": f"https://zh.wikipedia.org/wiki/T{number}",
        "local_lead": "唐樓係舊式樓宇。",
        "standard_lead": "唐楼。",
    }
    data.update(fields)
    return data


def upload(*rows, name="pairs.jsonl") -> SimpleUploadedFile:
    text = "".join((json.dumps(r, ensure_ascii=False) if isinstance(r, dict) else r) + "\n" for r in rows)
    return SimpleUploadedFile(name, text.encode())


def post_import(client, project, file, *, dry_run=False, capture):
    data = {"files": [file], "format": "auto"}
    if dry_run:
        data["dry_run"] = "1"
    with capture(execute=True):
        return client.post(reverse("import_start", args=[project.slug]), data)


def test_a_coordinator_uploads_a_file_and_sees_the_counts(
    client, project, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)

    response = post_import(client, project, upload(row(1), row(2)), capture=django_capture_on_commit_callbacks)

    job = ImportJob.objects.get(project=project)
    assert response.status_code == 302 and response["Location"] == reverse("import_detail", args=[project.slug, job.pk])
    page = client.get(response["Location"]).content.decode()
    assert "2 pairs created, 0 already present." in page
    assert PagePair.objects.filter(project=project).count() == 2


def test_the_dry_run_button_reports_without_writing(client, project, coordinator, django_capture_on_commit_callbacks):
    client.force_login(coordinator)

    response = post_import(client, project, upload(row(1)), dry_run=True, capture=django_capture_on_commit_callbacks)

    page = client.get(response["Location"]).content.decode()
    assert "Dry run, nothing written: 1 pair would be created" in page
    assert not PagePair.objects.exists()


def test_a_refused_upload_lists_every_problem_by_line_and_field(
    client, project, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)
    bad = row(2, local_url="<script>alert(1)</script>")
    del bad["standard_lead"]

    response = post_import(client, project, upload(row(1), bad, "{oops"), capture=django_capture_on_commit_callbacks)

    page = client.get(response["Location"]).content.decode()
    assert "Import refused: 3 problems in 3 lines; nothing was imported." in page
    assert "standard_lead" in page and "is missing" in page and "line 3" in page and "invalid JSON" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    assert ImportJob.objects.get().status == "refused"
    assert not PagePair.objects.exists()


def test_a_file_over_the_size_limit_is_refused_on_the_form(client, project, coordinator, settings):
    settings.IMPORT_MAX_BYTES = 20
    client.force_login(coordinator)

    response = client.post(reverse("import_start", args=[project.slug]), {"files": [upload(row(1))]})

    assert response.status_code == 400
    assert "more than the import limit of 20 bytes" in response.content.decode()
    assert not ImportJob.objects.exists()


def test_a_running_import_polls_and_a_finished_one_does_not(client, project, coordinator):
    client.force_login(coordinator)
    job = ImportJob.objects.create(project=project, status="running", progress_total=1000, progress_done=250)
    url = reverse("import_detail", args=[project.slug, job.pk])

    running = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    ImportJob.objects.filter(pk=job.pk).update(status="done", report={"summary": "0 pairs created", "ok": True})
    finished = client.get(url, HTTP_HX_REQUEST="true").content.decode()

    assert 'hx-trigger="every 2s"' in running and 'value="25"' in running
    assert "every 2s" not in finished and "0 pairs created" in finished
    assert "<html" not in running  # the partial alone


def test_an_import_of_another_project_is_not_found(client, project, other_project, coordinator):
    job = ImportJob.objects.create(project=other_project)
    client.force_login(coordinator)

    assert client.get(reverse("import_detail", args=[project.slug, job.pk])).status_code == 404


def test_the_api_takes_an_upload_and_returns_the_report(project, coordinator, django_capture_on_commit_callbacks):
    client = api_as(coordinator)

    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(
            f"/api/projects/{project.slug}/imports/",
            {"files": [upload(row(1), row(2, local_title="唐樓 1"))], "format": "jsonl"},
            format="multipart",
        )
    job = client.get(f"/api/projects/{project.slug}/imports/{created.data['id']}/")

    assert created.status_code == 202 and created.data["status"] == "pending"
    assert job.data["status"] == "refused"
    problem = job.data["report"]["problems"][0]
    assert (problem["line"], problem["field"]) == (2, "local_title")


def test_the_api_refuses_an_unknown_format(project, coordinator):
    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/imports/", {"files": [upload(row(1))], "format": "xml"}, format="multipart"
    )

    assert response.status_code == 400 and response.data["field"] == "format"


# Collections


def test_a_coordinator_starts_a_collection_from_pasted_titles(client, project, coordinator):
    client.force_login(coordinator)

    response = client.post(
        reverse("collection_start", args=[project.slug]), {"titles": "油麻地\n旺角\n油麻地\n", "local_heavy_only": "on"}
    )

    collection = Collection.objects.get(project=project)
    assert response["Location"] == reverse("collection_detail", args=[project.slug, collection.pk])
    assert list(collection.titles.values_list("title", flat=True)) == ["油麻地", "旺角"]
    page = client.get(response["Location"]).content.decode()
    assert 'hx-trigger="every 2s"' in page and "0 of 2 titles" in page


def test_titles_can_come_from_an_uploaded_file(client, project, coordinator):
    client.force_login(coordinator)
    titles = SimpleUploadedFile("titles.txt", "旺角\n深水埗\n".encode())

    client.post(reverse("collection_start", args=[project.slug]), {"titles_file": titles})

    assert list(Collection.objects.get().titles.values_list("title", flat=True)) == ["旺角", "深水埗"]


def test_a_collection_form_without_titles_or_category_is_refused(client, project, coordinator):
    client.force_login(coordinator)

    response = client.post(reverse("collection_start", args=[project.slug]), {"titles": "  \n"})

    assert response.status_code == 400 and "Give titles" in response.content.decode()
    assert not Collection.objects.exists()


def test_cancel_and_resume_from_the_page(client, project, coordinator):
    client.force_login(coordinator)
    client.post(reverse("collection_start", args=[project.slug]), {"titles": "旺角"})
    collection = Collection.objects.get()

    client.post(reverse("collection_cancel", args=[project.slug, collection.pk]))
    collection.refresh_from_db()
    assert collection.status == "cancelled"
    client.post(reverse("collection_resume", args=[project.slug, collection.pk]))
    collection.refresh_from_db()
    assert collection.status == "pending"


def test_the_api_starts_a_collection_and_lists_its_titles(project, coordinator):
    client = api_as(coordinator)

    created = client.post(f"/api/projects/{project.slug}/collections/", {"titles": ["旺角", "<b>x</b>"]}, format="json")
    titles = client.get(f"/api/projects/{project.slug}/collections/{created.data['id']}/titles/")

    assert created.status_code == 202
    assert created.data["outcomes"]["pending"] == 2 and created.data["total"] == 2
    assert [t["title"] for t in titles.data["results"]] == ["旺角", "<b>x</b>"]


def test_the_api_refuses_a_collection_with_both_titles_and_category(project, coordinator):
    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/collections/", {"titles": ["旺角"], "category": "X"}, format="json"
    )

    assert response.status_code == 400


def test_the_collection_page_escapes_titles(client, project, coordinator):
    client.force_login(coordinator)
    client.post(reverse("collection_start", args=[project.slug]), {"titles": "<img src=x onerror=alert(1)>"})

    page = client.get(reverse("collection_detail", args=[project.slug, Collection.objects.get().pk])).content.decode()

    assert "<img src=x" not in page and "&lt;img src=x" in page


def test_an_import_that_crashes_is_marked_failed_and_its_upload_removed(
    project, coordinator, monkeypatch, tmp_path, django_capture_on_commit_callbacks
):
    def crash(**kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("wikiqa.kind.pairs_import", crash)
    from annotation import ingest

    with pytest.raises(RuntimeError), django_capture_on_commit_callbacks(execute=True):
        ingest.import_job_create(project=project, user=coordinator, files=[upload(row(1))])

    job = ImportJob.objects.get()
    assert (job.status, job.error) == ("failed", "RuntimeError: disk on fire")
    assert not list(tmp_path.rglob("*.jsonl"))


def test_a_second_delivery_of_an_import_task_does_nothing(project, coordinator, django_capture_on_commit_callbacks):
    from annotation import ingest

    with django_capture_on_commit_callbacks(execute=True):
        job = ingest.import_job_create(project=project, user=coordinator, files=[upload(row(1))])

    assert ingest.import_job_run(job_id=job.pk) is None
    assert PagePair.objects.filter(project=project).count() == 1


def test_a_collection_may_fetch_the_standard_pages_in_another_script_variant(client, project, coordinator):
    client.force_login(coordinator)

    client.post(reverse("collection_start", args=[project.slug]), {"titles": "旺角", "standard_variant": "zh-TW"})
    refused = client.post(reverse("collection_start", args=[project.slug]), {"titles": "旺角", "standard_variant": "?"})

    assert Collection.objects.get().standard_variant == "zh-tw"
    assert refused.status_code == 400 and "not a language variant code" in refused.content.decode()
