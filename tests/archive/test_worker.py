"""Exports and imports through the API, run by a real Celery worker, with progress seen while they run."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Project
from archive.models import ProjectArchive
from exports import services as exports
from tests.archive.canonical import canonical_dump
from tests.conftest import api_as
from tests.exports.conftest import bulk_accepted_items

# The test watches progress move; SQLite (one writer at a time) shows it only at the end.
ONE_WRITER = "SQLite has one writer: a job's progress, written beside the transaction holding it, shows only at its end"


@pytest.fixture
def worker_env(media, monkeypatch):
    """The worker shares the media folder; progress is written at every batch, so a test can see it move."""
    monkeypatch.setenv("MEDIA_ROOT", str(media))
    monkeypatch.setenv("ARCHIVE_PROGRESS_SECONDS", "0")


def watch(live_worker, archive_id: int) -> tuple[ProjectArchive, set[tuple[int, int]]]:
    seen: set[tuple[int, int]] = set()

    def finished() -> bool:
        row = ProjectArchive.objects.get(pk=archive_id)
        if row.status == ProjectArchive.Status.RUNNING:
            seen.add((row.progress_done, row.progress_total))
        return not row.is_active

    live_worker.wait_for(finished, timeout=120, interval=0.01)
    return ProjectArchive.objects.get(pk=archive_id), seen


@pytest.mark.postgresql(reason=ONE_WRITER)
@pytest.mark.worker
def test_an_export_and_an_import_run_in_the_worker_with_progress(
    worker_env, live_worker, project, coordinator, superuser, settings
):
    settings.ARCHIVE_PROGRESS_SECONDS = 0
    bulk_accepted_items(project, 3000)
    exports.release_build_now(project=project, user=coordinator, seed=3)

    started = api_as(coordinator).post(f"/api/projects/{project.slug}/archives/")
    assert started.status_code == 202, started.content
    export, export_progress = watch(live_worker, started.data["id"])
    assert export.status == ProjectArchive.Status.DONE, export.error
    download = api_as(coordinator).get(f"/api/projects/{project.slug}/archives/{export.pk}/download/")
    data = b"".join(download.streaming_content)
    assert len(data) == export.size and download["Content-Disposition"].startswith("attachment")

    upload = SimpleUploadedFile("yue.zip", io.BytesIO(data).getvalue(), content_type="application/zip")
    queued = api_as(superuser).post("/api/archive-imports/", {"file": upload, "slug": "yue-moved"}, format="multipart")
    assert queued.status_code == 202, queued.content
    imported, import_progress = watch(live_worker, queued.data["id"])

    assert imported.status == ProjectArchive.Status.DONE, imported.error
    copy = Project.objects.get(slug="yue-moved")
    assert imported.project_id == copy.pk and imported.counts["annotation.QAItem"] == 3000
    assert canonical_dump(copy) == canonical_dump(project)
    # Progress moved while the work ran (the import's rows were not yet committed: a side connection wrote it).
    assert any(0 < done < total for done, total in export_progress), export_progress
    assert any(0 < done < total for done, total in import_progress), import_progress
    assert "archive.export" in live_worker.log() and "archive.import" in live_worker.log()
    assert not (settings.MEDIA_ROOT / imported.path).exists()  # the upload is removed once imported
