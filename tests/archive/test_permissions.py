"""Every archive page and API route × every kind of visitor.

Exporting and downloading a project's archive: coordinators (and superusers); non-members 404, other members
403. Importing an archive creates a project and accounts: superusers only, everyone else 403.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from archive import services
from archive.models import ProjectArchive
from tests.conftest import api_as
from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

# name: (method, statuses in the order of ROLES: anonymous, outsider, annotator, reviewer, coordinator, superuser)
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "project_archives": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "project_archive_start": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "project_archive_detail": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "project_archive_download": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "archive_imports": ("get", (LOGIN, 403, 403, 403, 403, 200)),
    "archive_import_start": ("post", (LOGIN, 403, 403, 403, 403, 400)),  # no file chosen: the form says so
    "archive_import_detail": ("get", (LOGIN, 403, 403, 403, 403, 200)),
}

API_EXPECTED: list[tuple[str, str, dict | None, tuple[int, ...]]] = [
    ("get", "projects/{slug}/archives/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/archives/", None, (403, 404, 403, 403, 202, 202)),
    ("get", "projects/{slug}/archives/{archive_id}/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/archives/{archive_id}/download/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "archive-imports/", None, (403, 403, 403, 403, 403, 200)),
    ("post", "archive-imports/", {"slug": "copy"}, (403, 403, 403, 403, 403, 400)),  # no file: 400 naming it
    ("get", "archive-imports/{import_id}/", None, (403, 403, 403, 403, 403, 200)),
]  # fmt: skip


@pytest.fixture
def archive_world(project, annotator, reviewer, coordinator, outsider, superuser, media):
    export = services.archive_export_now(project=project, user=coordinator)
    assert export.status == ProjectArchive.Status.DONE, export.error
    failed_import = ProjectArchive.objects.create(
        kind=ProjectArchive.Kind.IMPORT, slug="copy", status=ProjectArchive.Status.FAILED, error="refused"
    )
    users = {
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }
    return {"slug": project.slug, "archive_id": export.pk, "import_id": failed_import.pk, "users": users}


def page_url(name: str, world: dict) -> str:
    kwargs = {
        "project_archive_detail": {"slug": world["slug"], "archive_id": world["archive_id"]},
        "project_archive_download": {"slug": world["slug"], "archive_id": world["archive_id"]},
        "archive_imports": {},
        "archive_import_start": {},
        "archive_import_detail": {"archive_id": world["import_id"]},
    }.get(name, {"slug": world["slug"]})
    return reverse(name, kwargs=kwargs)


def test_each_archive_page_answers_each_visitor_as_the_table_says(archive_world):
    check_pages(archive_world["users"], page_cells(PAGE_EXPECTED, lambda name: page_url(name, archive_world)))


def test_each_archive_api_route_answers_each_visitor_as_the_table_says(archive_world):
    cells = [
        replace(cell, fmt="multipart")
        if cell.url.startswith("/api/archive-imports") and cell.method == "post"
        else cell
        for cell in api_cells(API_EXPECTED, archive_world)
    ]
    check_api(archive_world["users"], cells)


def test_a_download_of_an_export_still_being_written_is_refused_with_409(project, coordinator, media):
    pending = services.archive_export_request(project=project, user=coordinator, enqueue=False)

    response = api_as(coordinator).get(f"/api/projects/{project.slug}/archives/{pending.pk}/download/")

    assert response.status_code == 409
    assert "not finished" in response.data["detail"]


def test_an_upload_by_a_coordinator_is_refused_before_it_is_stored(coordinator, media):
    upload = SimpleUploadedFile("yue.zip", b"PK\x03\x04")

    response = api_as(coordinator).post("/api/archive-imports/", {"file": upload}, format="multipart")

    assert response.status_code == 403
    assert not (media / "archives").exists()
