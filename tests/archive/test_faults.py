"""A worker killed mid-import (SIGKILL to its process group): nothing of the half-done import is left, and the
next worker takes the job over and imports the project once. The same for an export: one file, complete.

Workers get a short stale time (2 s) and pause between batches (JOB_STEP_DELAY), so each job is killed mid-way.
"""

from __future__ import annotations

import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Project
from archive import services
from archive.models import ProjectArchive
from tests.archive.canonical import canonical_dump
from tests.conftest import api_as
from tests.exports.conftest import bulk_accepted_items
from tests.worker import NO_PAUSE

# The kill happens once progress is seen mid-way; SQLite (one writer at a time) shows it only at the end.
ONE_WRITER = "SQLite has one writer: a job's progress, written beside the transaction holding it, shows only at its end"
pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.timeout(180)]


@pytest.fixture
def live_worker_env(media) -> dict[str, str]:
    return {
        "ARCHIVE_STALE_SECONDS": "2",
        "ARCHIVE_PROGRESS_SECONDS": "0",
        "JOB_STEP_DELAY": "1",
        "MEDIA_ROOT": str(media),
    }


def running_past(archive_id: int, rows: int, stage: str):
    """True once the job is in a stage starting with `stage` and `rows` into it (an import first checks every
    member's sha256, counted in bytes: a kill there would come before any row is written)."""

    def check() -> bool:
        row = ProjectArchive.objects.get(pk=archive_id)
        return row.status == "running" and row.stage.startswith(stage) and row.progress_done >= rows

    return check


@pytest.mark.postgresql(reason=ONE_WRITER)
def test_an_import_killed_mid_way_leaves_nothing_and_the_next_worker_imports_once(
    start_worker, project, superuser, tmp_path, media
):
    bulk_accepted_items(project, 4000)  # 14,000 rows: 14 batches, a second's pause after each
    out = tmp_path / "yue.zip"
    services.archive_write_to(project=project, out=out)
    queued = api_as(superuser).post(
        "/api/archive-imports/",
        {"file": SimpleUploadedFile("yue.zip", out.read_bytes()), "slug": "yue-moved"},
        format="multipart",
    )
    assert queued.status_code == 202, queued.content
    archive_id = queued.data["id"]

    first = start_worker()
    first.wait_for(running_past(archive_id, 3000, "Importing"), timeout=60, interval=0.05)
    first.kill()

    killed = ProjectArchive.objects.get(pk=archive_id)
    assert killed.status == "running" and killed.progress_done < killed.progress_total, "finished before the kill"
    assert not Project.objects.filter(slug="yue-moved").exists()  # its transaction died with it
    second = start_worker(env=NO_PAUSE)
    second.wait_for(lambda: not ProjectArchive.objects.get(pk=archive_id).is_active, timeout=120)

    done = ProjectArchive.objects.get(pk=archive_id)
    assert (done.status, done.attempts) == ("done", 2), done.error
    assert Project.objects.filter(slug="yue-moved").count() == 1
    assert canonical_dump(Project.objects.get(slug="yue-moved")) == canonical_dump(project)
    assert not list((media / "releases").glob(".importing-*"))  # the killed run's staging folder is gone
    assert not (media / killed.path).exists()  # the upload is removed once imported


@pytest.mark.postgresql(reason=ONE_WRITER)
def test_an_export_killed_mid_way_is_written_once_by_the_next_worker(start_worker, project, coordinator, media):
    bulk_accepted_items(project, 12000)  # 42,000 rows: 21 chunks of 2,000, a second's pause after each
    queued = api_as(coordinator).post(f"/api/projects/{project.slug}/archives/")
    assert queued.status_code == 202, queued.content
    archive_id = queued.data["id"]

    first = start_worker()
    first.wait_for(running_past(archive_id, 4000, "Writing"), timeout=60, interval=0.05)
    first.kill()
    second = start_worker(env=NO_PAUSE)
    second.wait_for(lambda: not ProjectArchive.objects.get(pk=archive_id).is_active, timeout=150)

    done = ProjectArchive.objects.get(pk=archive_id)
    assert (done.status, done.attempts) == ("done", 2), done.error
    files = [path for path in (media / "archives").rglob("*") if path.is_file()]
    assert files == [services.archive_file(done)]  # the killed run's partial file is gone
    with zipfile.ZipFile(files[0]) as archive:
        assert archive.testzip() is None
        assert done.counts["annotation.QAItem"] == 12000
