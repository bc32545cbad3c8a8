"""Every release page and API route × every kind of visitor.

Who may do what: every member of the project (any role) may list, open, compare
and download releases; only coordinators (and superusers) cut releases, build
failed ones again, edit export settings and write the project in other formats.
Non-members get 404, members without the role 403.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.conftest import api_as
from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

# name: (method, statuses in the order of ROLES: anonymous, outsider, annotator, reviewer, coordinator, superuser)
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "release_list": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "release_create": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "release_diff": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "export_settings": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "release_detail": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "release_rebuild": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "release_cancel": ("post", (LOGIN, 404, 403, 403, 302, 302)),  # v1 is published: refused with a message
    "release_archive": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "release_file": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "project_format": ("get", (LOGIN, 404, 403, 403, 404, 404)),  # a format this server does not have
}

POST_DATA = {
    "release_create": {"item_statuses": ["accepted"], "use_splits": "on", "train": 70, "dev": 10, "test": 20},
}


def page_url(name: str, world: dict) -> str:
    slug = world["slug"]
    kwargs = {
        "release_detail": {"slug": slug, "version": 1},
        "release_rebuild": {"slug": slug, "version": 2},
        "release_cancel": {"slug": slug, "version": 1},
        "release_archive": {"slug": slug, "version": 1},
        "release_file": {"slug": slug, "version": 1, "name": "lead_qa.jsonl"},
        "project_format": {"slug": slug, "format_name": "no-such-format"},
    }.get(name, {"slug": slug})
    return reverse(name, kwargs=kwargs)


def test_each_release_page_answers_each_visitor_as_the_table_says(release_world):
    cells = page_cells(PAGE_EXPECTED, lambda name: page_url(name, release_world), **POST_DATA)
    check_pages(release_world["users"], cells)


API_ENDPOINTS: list[tuple[str, str, dict | None, tuple[int, ...]]] = [
    # method, path, body, statuses in the order of ROLES
    ("get", "projects/{slug}/releases/", None, (403, 404, 200, 200, 200, 200)),
    ("post", "projects/{slug}/releases/", {"changelog": "x"}, (403, 404, 403, 403, 202, 202)),
    ("get", "projects/{slug}/releases/diff/?old=1&new=1", None, (403, 404, 200, 200, 200, 200)),
    ("get", "projects/{slug}/releases/readiness/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/releases/1/", None, (403, 404, 200, 200, 200, 200)),
    ("post", "projects/{slug}/releases/2/rebuild/", None, (403, 404, 403, 403, 202, 202)),
    ("post", "projects/{slug}/releases/1/cancel/", None, (403, 404, 403, 403, 409, 409)),  # published: not cancellable
    ("get", "projects/{slug}/releases/1/archive/", None, (403, 404, 200, 200, 200, 200)),
    ("get", "projects/{slug}/releases/1/files/lead_qa.jsonl", None, (403, 404, 200, 200, 200, 200)),
    ("get", "projects/{slug}/export-settings/", None, (403, 404, 403, 403, 200, 200)),
    ("patch", "projects/{slug}/export-settings/", {"license": "cc-by-4.0"}, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/formats/no-such-format/", None, (403, 404, 403, 403, 404, 404)),
]  # fmt: skip


def test_each_release_api_route_answers_each_visitor_as_the_table_says(release_world):
    check_api(release_world["users"], api_cells(API_ENDPOINTS, release_world))


def test_there_is_no_route_that_changes_or_deletes_a_release(release_world):
    client = api_as(release_world["users"]["coordinator"])
    url = f"/api/projects/{release_world['slug']}/releases/1/"

    assert client.put(url, {"changelog": "rewritten"}, format="json").status_code == 405
    assert client.patch(url, {"changelog": "rewritten"}, format="json").status_code == 405
    assert client.delete(url).status_code == 405
    release_world["published"].refresh_from_db()
    assert release_world["published"].status == "done"
