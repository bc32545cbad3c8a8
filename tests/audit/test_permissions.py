"""Who may read the audit log: the project's coordinators (their project), superusers (every project).

`PAGE_EXPECTED` and `API_EXPECTED` join the permission matrix (tests/security/test_permission_matrix.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine


PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "audit_project": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "audit_site": ("get", (LOGIN, 403, 403, 403, 403, 200)),
}

# method, path under /api/, body, statuses for ROLES
API_EXPECTED: list[tuple[str, str, Any, tuple[int, ...]]] = [
    ("get", "projects/{slug}/audit/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "audit/", None, (403, 403, 403, 403, 403, 200)),
]


@pytest.fixture
def users(project, annotator, reviewer, coordinator, outsider, superuser) -> dict[str, Any]:
    return {
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }


def test_each_audit_page_answers_each_visitor_as_the_table_says(project, users):
    url = {"audit_project": reverse("audit_project", args=[project.slug]), "audit_site": reverse("audit_site")}
    check_pages(users, page_cells(PAGE_EXPECTED, url.__getitem__))


def test_each_audit_api_route_answers_each_visitor_as_the_table_says(project, users):
    check_api(users, api_cells(API_EXPECTED, {"slug": project.slug}))
