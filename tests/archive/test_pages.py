"""The archive pages: a coordinator exports and downloads; a superuser uploads and sees what was imported."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Project
from archive import services
from archive.models import ProjectArchive
from audit.models import Action, AuditEvent


def test_a_coordinator_exports_watches_and_downloads_the_archive(client, project, coordinator, annotating_pair):
    client.force_login(coordinator)

    response = client.post(reverse("project_archive_start", args=[project.slug]))

    archive = ProjectArchive.objects.get(project=project)
    assert response.status_code == 302 and response.url == reverse(
        "project_archive_detail", args=[project.slug, archive.pk]
    )
    waiting = client.get(response.url, headers={"HX-Request": "true"})
    assert b'hx-trigger="every 1s"' in waiting.content and b"Waiting for a worker" in waiting.content
    services.archive_export_run(archive_id=archive.pk)  # what the worker does once the request commits
    done = client.get(response.url).content.decode()
    assert "Download the archive" in done and "annotation.PagePair" in done
    download = client.get(reverse("project_archive_download", args=[project.slug, archive.pk]))
    assert download.status_code == 200 and b"".join(download.streaming_content)[:2] == b"PK"
    listing = client.get(reverse("project_archives", args=[project.slug])).content.decode()
    archive.refresh_from_db()
    assert len(archive.sha256) == 64 and archive.sha256 in listing and "Done" in listing
    logged = AuditEvent.objects.filter(project=project, object_type="archive", object_id=archive.pk)
    assert sorted(logged.values_list("action", "actor")) == [
        (Action.ARCHIVE_EXPORT_REQUESTED, coordinator.pk),
        (Action.ARCHIVE_EXPORTED, coordinator.pk),
    ]


def test_a_second_export_while_one_waits_is_refused_with_a_message(client, project, coordinator):
    client.force_login(coordinator)
    client.post(reverse("project_archive_start", args=[project.slug]))

    response = client.post(reverse("project_archive_start", args=[project.slug]), follow=True)

    assert "already waiting or running" in response.content.decode()
    assert ProjectArchive.objects.filter(project=project).count() == 1


def test_a_superuser_uploads_an_archive_and_sees_the_project_it_made(
    client, project, superuser, annotating_pair, tmp_path
):
    out = tmp_path / "yue.zip"
    services.archive_write_to(project=project, out=out)
    client.force_login(superuser)

    response = client.post(
        reverse("archive_import_start"), {"file": SimpleUploadedFile("yue.zip", out.read_bytes()), "slug": "yue-2"}
    )

    archive = ProjectArchive.objects.get(kind="import")
    assert response.status_code == 302 and archive.slug == "yue-2"
    services.archive_import_run(archive_id=archive.pk)
    page = client.get(reverse("archive_import_detail", args=[archive.pk])).content.decode()
    assert "Imported as" in page and Project.objects.get(slug="yue-2").name in page
    assert "People matched: 4" in page
    imported = AuditEvent.objects.get(project__slug="yue-2", action=Action.ARCHIVE_IMPORTED)
    assert (imported.actor, imported.object_id, imported.details["file"]) == (superuser, archive.pk, "yue.zip")


def test_the_import_page_shows_why_an_upload_was_refused(client, superuser, tmp_path):
    client.force_login(superuser)

    response = client.post(reverse("archive_import_start"), {"file": SimpleUploadedFile("notes.zip", b"hello")})

    assert response.status_code == 400
    assert "notes.zip: not a zip file" in response.content.decode()
    assert not ProjectArchive.objects.exists()
