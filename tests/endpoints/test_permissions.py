"""Every model endpoint page and API route × every kind of visitor: coordinators (and superusers) only;
non-members 404, other members 403 (annotation.access.project_access)."""

from __future__ import annotations

import itertools

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from tests.annotation.test_page_permissions import LOGIN, ROLES
from tests.conftest import api_as
from tests.endpoints.conftest import make_endpoint

# name: (method, statuses in the order of ROLES: anonymous, outsider, annotator, reviewer, coordinator, superuser)
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "endpoint_list": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "endpoint_new": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "endpoint_edit": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "endpoint_test": ("post", (LOGIN, 404, 403, 403, 200, 200)),
    "endpoint_cache_clear": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "endpoint_delete": ("post", (LOGIN, 404, 403, 403, 302, 302)),
}

API_EXPECTED: list[tuple[str, str, dict | None, tuple[int, ...]]] = [
    ("get", "projects/{slug}/model-endpoints/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/model-endpoints/", {"name": "x"}, (403, 404, 403, 403, 400, 400)),
    ("get", "projects/{slug}/model-endpoints/{endpoint_id}/", None, (403, 404, 403, 403, 200, 200)),
    ("patch", "projects/{slug}/model-endpoints/{endpoint_id}/", {"concurrency": 2}, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/model-endpoints/{endpoint_id}/test/", None, (403, 404, 403, 403, 200, 200)),
    ("delete", "projects/{slug}/model-endpoints/{endpoint_id}/cache/", None, (403, 404, 403, 403, 200, 200)),
    ("delete", "projects/{slug}/model-endpoints/{endpoint_id}/", None, (403, 404, 403, 403, 204, 204)),
    ("get", "projects/{slug}/model-calls/", None, (403, 404, 403, 403, 200, 200)),
]  # fmt: skip


@pytest.fixture
def world(project, annotator, reviewer, coordinator, outsider, superuser, model_stub):
    numbers = itertools.count(1)

    def fresh() -> int:
        """Another endpoint, for each visitor of a route that deletes it."""
        return make_endpoint(project, coordinator, model_stub, name=f"endpoint {next(numbers)}").pk

    endpoint = make_endpoint(project, coordinator, model_stub)
    users = {
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }
    return {"slug": project.slug, "endpoint_id": endpoint.pk, "users": users, "fresh": fresh}


@pytest.mark.parametrize("name", sorted(PAGE_EXPECTED))
def test_endpoint_page_permission(client, world, name):
    method, row = PAGE_EXPECTED[name]
    for role, expected in zip(ROLES, row, strict=True):
        kwargs = {"slug": world["slug"]}
        if name not in {"endpoint_list", "endpoint_new"}:
            kwargs["endpoint_id"] = world["fresh"]() if name == "endpoint_delete" else world["endpoint_id"]
        url = reverse(name, kwargs=kwargs)
        client.logout()
        if role != "anonymous":
            client.force_login(world["users"][role])

        response = getattr(client, method)(url)

        assert response.status_code == expected, f"{method.upper()} {url} as {role}"


@pytest.mark.parametrize(("method", "path", "body", "statuses"), API_EXPECTED, ids=lambda v: str(v)[:50])
def test_endpoint_api_permission(world, method, path, body, statuses):
    for role, expected in zip(ROLES, statuses, strict=True):
        deletes = method == "delete" and path.endswith("{endpoint_id}/")
        url = "/api/" + path.format(**(world | ({"endpoint_id": world["fresh"]()} if deletes else {})))
        client = APIClient() if role == "anonymous" else api_as(world["users"][role])

        response = getattr(client, method)(url, body, format="json")

        assert response.status_code == expected, f"{method.upper()} {url} as {role}: {response.content[:200]}"


def test_the_api_table_covers_every_endpoint_route():
    from endpoints.api_urls import urlpatterns

    routes = {str(pattern.pattern) for pattern in urlpatterns}
    covered = {
        path.replace("{slug}", "<slug:slug>").replace("{endpoint_id}", "<int:endpoint_id>")
        for _, path, _, _ in API_EXPECTED
    }
    assert routes == covered


def test_an_endpoint_of_another_project_is_not_found_through_this_one(project, other_project, coordinator, model_stub):
    owner = other_project.memberships.get(is_coordinator=True).user
    theirs = make_endpoint(other_project, owner, model_stub, name="theirs")

    response = api_as(coordinator).get(f"/api/projects/{project.slug}/model-endpoints/{theirs.pk}/")
    calls = api_as(coordinator).get(f"/api/projects/{project.slug}/model-calls/?endpoint={theirs.pk}")

    assert (response.status_code, calls.status_code) == (404, 404)
