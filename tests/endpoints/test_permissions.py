"""Every model endpoint page and API route × every kind of visitor: coordinators (and superusers) only;
non-members 404, other members 403 (annotation.access.project_access)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.endpoints.conftest import make_endpoint
from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells

# Access rules: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

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
    endpoint = make_endpoint(project, coordinator, model_stub)
    users = {
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }
    return {"slug": project.slug, "endpoint_id": endpoint.pk, "users": users}


def page_url(name: str, world: dict) -> str:
    kwargs = {"slug": world["slug"]}
    if name not in {"endpoint_list", "endpoint_new"}:
        kwargs["endpoint_id"] = world["endpoint_id"]
    return reverse(name, kwargs=kwargs)


# Each cell is rolled back: a visitor who deletes the endpoint leaves it there for the next one.
def test_each_endpoint_page_answers_each_visitor_as_the_table_says(world):
    check_pages(world["users"], page_cells(PAGE_EXPECTED, lambda name: page_url(name, world)))


def test_each_endpoint_api_route_answers_each_visitor_as_the_table_says(world):
    check_api(world["users"], api_cells(API_EXPECTED, world))
