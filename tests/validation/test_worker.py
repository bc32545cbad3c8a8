"""Imports of collected QA pairs run on a real Celery worker (a subprocess, against Redis and the test database).

The request only stores the upload and queues a job; the worker imports it in one
transaction; the job page polls (htmx) until the job ends and then shows the report.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import ImportJob, QAItem
from review.models import ReviewSlot
from tests.conftest import api_as
from tests.validation.conftest import COLLECTED_TSV, TSV_HEADER
from validation.models import ValidationItem

pytestmark = pytest.mark.worker


@pytest.fixture
def media_root(tmp_path_factory):
    return tmp_path_factory.mktemp("media")


@pytest.fixture
def live_worker_env(media_root):
    return {"MEDIA_ROOT": str(media_root)}


@pytest.fixture(autouse=True)
def same_media(settings, media_root):
    settings.MEDIA_ROOT = media_root


def test_an_upload_in_the_browser_is_imported_by_the_worker_and_the_page_shows_the_report(
    live_worker, client, vproject, coordinator, media_root
):
    client.force_login(coordinator)

    response = client.post(
        reverse("validation_import", args=[vproject.slug]),
        {"file": SimpleUploadedFile("collected.tsv", COLLECTED_TSV.encode())},
    )

    assert response.status_code == 302  # the request returns before anything is imported
    job = ImportJob.objects.get(project=vproject)
    live_worker.wait_for(lambda: ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.DONE)
    assert ValidationItem.objects.filter(project=vproject).count() == 4
    assert ReviewSlot.objects.filter(item__project=vproject).count() == 4 * vproject.reviewers_per_item
    partial = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert "4 created" in partial and "duplicates: exact 1" in partial
    assert "every 2s" not in partial  # ended: the partial stops polling
    assert not list(media_root.rglob("*.tsv"))  # the upload is removed once imported


def test_an_api_import_answers_202_and_the_job_url_gives_the_report(live_worker, vproject, coordinator):
    client = api_as(coordinator)

    queued = client.post(
        f"/api/projects/{vproject.slug}/validation/import/",
        {"file": SimpleUploadedFile("collected.tsv", COLLECTED_TSV.encode())},
        format="multipart",
    )

    assert queued.status_code == 202 and queued.data["status"] == "pending"
    live_worker.wait_for(lambda: client.get(queued.data["url"]).data["status"] == "done")
    job = client.get(queued.data["url"]).data
    assert (job["percent"], job["report"]["created"], job["report"]["counts"]["duplicates"]) == (100, 4, {"exact": 1})


def test_a_bad_row_refuses_the_whole_file_on_the_worker_and_the_page_names_row_and_field(
    live_worker, client, vproject, coordinator
):
    client.force_login(coordinator)
    good = COLLECTED_TSV.splitlines(keepends=True)[1:]
    bad = "5\tfood\tq\tA question?\tAn answer.\tfactoid\t['ftp://files.example.org/x']\tgoogle\n"
    data = TSV_HEADER + "".join(good) + bad  # four good rows first, the bad one on line 6

    response = client.post(
        reverse("validation_import", args=[vproject.slug]), {"file": SimpleUploadedFile("c.tsv", data.encode())}
    )

    job = ImportJob.objects.get(project=vproject)
    live_worker.wait_for(lambda: ImportJob.objects.get(pk=job.pk).status == ImportJob.Status.REFUSED)
    assert not QAItem.objects.filter(project=vproject).exists()  # nothing half-imported
    assert not ValidationItem.objects.filter(project=vproject).exists()
    page = client.get(response["Location"]).content.decode()
    assert "Import refused: nothing was written." in page
    assert '<td class="num">6</td><td>answer_URLs[0]</td>' in page
    assert "&#x27;ftp://files.example.org/x&#x27; is not an http(s) URL" in page
