"""Who may open the import and collection pages and call their API: every URL × every kind of user.

`PAGE_EXPECTED` joins the page matrix in tests/annotation/test_page_permissions.py (its completeness test
collects every app's table); `API_EXPECTED` covers the routes of annotation.api_imports, and
tests/annotation/test_api.py's completeness test counts it too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from annotation import ingest
from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells
from wikiqa import collect
from wikiqa.models import Collection

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine


PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "import_start": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "import_detail": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    # The world's dry run has not run yet, so it cannot be run again: allowed users get the page back with 400.
    "import_rerun": ("post", (LOGIN, 404, 403, 403, 400, 400)),
    "collection_start": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "collection_detail": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "collection_cancel": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "collection_resume": ("post", (LOGIN, 404, 403, 403, 302, 302)),
}

# method, path, body, statuses for ROLES
API_EXPECTED: list[tuple[str, str, Any, tuple[int, ...]]] = [
    ("get", "projects/{slug}/imports/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/imports/", "upload", (403, 404, 403, 403, 202, 202)),
    ("get", "projects/{slug}/imports/{job}/", None, (403, 404, 403, 403, 200, 200)),
    # The world's dry run has not run yet: allowed users get 409 (not rerunnable), the rest 403/404.
    ("post", "projects/{slug}/imports/{job}/rerun/", {"region_map": {}}, (403, 404, 403, 403, 409, 409)),
    ("get", "projects/{slug}/collections/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/collections/", {"titles": ["Minga"]}, (403, 404, 403, 403, 202, 202)),
    ("get", "projects/{slug}/collections/{collection}/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/collections/{collection}/titles/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/collections/{collection}/cancel/", None, (403, 404, 403, 403, 200, 200)),
    # A running collection with a live worker cannot be resumed: allowed users get 409, the rest 403/404.
    ("post", "projects/{slug}/collections/{collection}/resume/", None, (403, 404, 403, 403, 409, 409)),
]


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    monkeypatch.setattr("wikiqa.tasks.collection_run.delay", lambda collection_id: None)
    monkeypatch.setattr("annotation.tasks.import_job_run.delay", lambda job_id: None)


@pytest.fixture
def world(project, annotator, reviewer, coordinator, outsider, superuser, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    job = ingest.import_job_create(
        project=project, user=coordinator, files=[SimpleUploadedFile("pairs.jsonl", b"")], dry_run=True
    )
    collection = collect.collection_create(project=project, user=coordinator, titles=["Minga"])
    Collection.objects.filter(pk=collection.pk).update(status=Collection.Status.RUNNING, heartbeat_at=timezone.now())
    users = {"annotator": annotator, "reviewer": reviewer, "coordinator": coordinator, "outsider": outsider}
    users["superuser"] = superuser
    return {"slug": project.slug, "job": job.pk, "collection": collection.pk, "users": users}


def page_url(name: str, world: dict) -> str:
    kwargs: dict[str, Any] = {"slug": world["slug"]}
    if name in ("import_detail", "import_rerun"):
        kwargs["job_id"] = world["job"]
    elif name.startswith("collection_") and name != "collection_start":
        kwargs["collection_id"] = world["collection"]
    return reverse(name, kwargs=kwargs)


def _upload(visitor: str) -> dict[str, Any]:
    return {
        "files": [SimpleUploadedFile("pairs.jsonl", b"\n", content_type="application/octet-stream")],
        "dry_run": "true",
    }


def test_each_page_answers_each_visitor_as_the_table_says(world):
    check_pages(world["users"], page_cells(PAGE_EXPECTED, lambda name: page_url(name, world)))


def test_each_api_route_answers_each_visitor_as_the_table_says(world):
    cells = [
        replace(cell, data=_upload, fmt="multipart") if cell.data == "upload" else cell
        for cell in api_cells(API_EXPECTED, world)
    ]
    check_api(world["users"], cells)
