"""Who may delete, list deleted things and restore them: every URL × every kind of user.

`PAGE_EXPECTED` and `API_EXPECTED` join the permission matrix (tests/security/test_permission_matrix.py and
tests/annotation/test_page_permissions.py collect every `test_*permissions*.py` table).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from annotation.services.deletion import pair_delete, project_delete
from annotation.services.items import qa_item_create, qa_item_delete
from annotation.services.members import membership_set
from tests import factories
from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine


PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "deleted_list": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "pair_delete": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "pair_restore": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "item_restore": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "project_delete": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "deleted_projects": ("get", (LOGIN, 200, 200, 200, 200, 200)),
    # Only a deleted project's coordinators (and superusers) learn that it exists.
    "project_restore": ("post", (LOGIN, 404, 404, 404, 302, 302)),
}

# method, path under /api/, body, statuses for ROLES
API_EXPECTED: list[tuple[str, str, Any, tuple[int, ...]]] = [
    ("get", "deleted-projects/", None, (403, 200, 200, 200, 200, 200)),
    ("post", "deleted-projects/{gone}/restore/", None, (403, 404, 404, 404, 200, 200)),
    ("get", "projects/{slug}/deleted/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/pairs/{deleted_pair}/restore/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/items/{deleted_item}/restore/", None, (403, 404, 403, 403, 200, 200)),
]


@pytest.fixture
def world(project, annotator, reviewer, coordinator, outsider, superuser, annotating_pair):
    """The annotator's pair with a draft and a deleted draft; a deleted pair; a deleted project."""
    qa_item_create(pair=annotating_pair, user=annotator)
    deleted_item = qa_item_create(pair=annotating_pair, user=annotator)
    qa_item_delete(item=deleted_item, user=annotator)
    deleted_pair = pair_delete(pair=factories.pair(project), user=coordinator)
    gone = factories.project(coordinator, slug="gone")
    for user, roles in ((annotator, {"annotator"}), (reviewer, {"reviewer"})):
        membership_set(project=gone, user=user, roles=roles)
    project_delete(project=gone, user=coordinator)
    users = {"annotator": annotator, "reviewer": reviewer, "coordinator": coordinator, "outsider": outsider}
    users["superuser"] = superuser
    return {
        "slug": project.slug,
        "gone": gone.slug,
        "pair": annotating_pair.pk,
        "deleted_pair": deleted_pair.pk,
        "deleted_item": deleted_item.pk,
        "users": users,
    }


def page_url(name: str, world: dict[str, Any]) -> str:
    if name == "deleted_projects":
        return reverse(name)
    if name == "project_restore":
        return reverse(name, args=[world["gone"]])
    if name == "pair_delete":
        return reverse(name, args=[world["slug"], world["pair"]])
    if name == "pair_restore":
        return reverse(name, args=[world["slug"], world["deleted_pair"]])
    if name == "item_restore":
        return reverse(name, args=[world["slug"], world["deleted_item"]])
    return reverse(name, args=[world["slug"]])


def test_each_page_answers_each_visitor_as_the_table_says(world):
    check_pages(world["users"], page_cells(PAGE_EXPECTED, lambda name: page_url(name, world)))


def test_each_api_route_answers_each_visitor_as_the_table_says(world):
    check_api(world["users"], api_cells(API_EXPECTED, world))
