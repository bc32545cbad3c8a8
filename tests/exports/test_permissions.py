"""Every release page and API route × every kind of visitor.

Who may do what: every member of the project (any role) may list, open, compare
and download releases; only coordinators (and superusers) cut releases, build
failed ones again, edit export settings and write the project in other formats.
Non-members get 404, members without the role 403.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from tests.annotation.test_page_permissions import LOGIN, ROLES
from tests.conftest import api_as

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


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", sorted(PAGE_EXPECTED))
def test_release_page_permission(client, release_world, name, role):
    method, row = PAGE_EXPECTED[name]
    expected = dict(zip(ROLES, row, strict=True))[role]
    if role != "anonymous":
        client.force_login(release_world["users"][role])
    url = page_url(name, release_world)

    response = getattr(client, method)(url, POST_DATA.get(name, {}))

    assert response.status_code == expected, f"{method.upper()} {url} as {role}"


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


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "path", "body", "statuses"), API_ENDPOINTS, ids=lambda v: str(v)[:50])
def test_release_api_permission(release_world, role, method, path, body, statuses):
    expected = dict(zip(ROLES, statuses, strict=True))[role]
    client = APIClient() if role == "anonymous" else api_as(release_world["users"][role])

    response = getattr(client, method)("/api/" + path.format(**release_world), body, format="json")

    assert response.status_code == expected, getattr(response, "content", b"")[:300]


def test_the_api_permission_table_covers_every_release_route():
    from exports.api_urls import urlpatterns

    routes = {str(pattern.pattern) for pattern in urlpatterns}
    covered = {
        path.split("?")[0]
        .replace("{slug}", "<slug:slug>")
        .replace("releases/1/files/lead_qa.jsonl", "releases/<int:version>/files/<path:name>")
        .replace("releases/1/", "releases/<int:version>/")
        .replace("releases/2/", "releases/<int:version>/")
        .replace("formats/no-such-format/", "formats/<slug:format_name>/")
        for _, path, _, _ in API_ENDPOINTS
    }
    assert routes == covered


def test_there_is_no_route_that_changes_or_deletes_a_release(release_world):
    client = api_as(release_world["users"]["coordinator"])
    url = f"/api/projects/{release_world['slug']}/releases/1/"

    assert client.put(url, {"changelog": "rewritten"}, format="json").status_code == 405
    assert client.patch(url, {"changelog": "rewritten"}, format="json").status_code == 405
    assert client.delete(url).status_code == 405
    release_world["published"].refresh_from_db()
    assert release_world["published"].status == "done"
