"""Who may read the audit log: the project's coordinators (their project), superusers (every project).

`PAGE_EXPECTED` and `API_EXPECTED` join the permission matrix (tests/security/test_permission_matrix.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from tests.conftest import api_as

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

ROLES = ["anonymous", "outsider", "annotator", "reviewer", "coordinator", "superuser"]
LOGIN = 302

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


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", sorted(PAGE_EXPECTED))
def test_page_permission(client, project, users, name, role):
    method, row = PAGE_EXPECTED[name]
    if role != "anonymous":
        client.force_login(users[role])
    url = reverse(name, args=[project.slug]) if name == "audit_project" else reverse(name)

    response = getattr(client, method)(url)

    assert response.status_code == dict(zip(ROLES, row, strict=True))[role], f"{name} as {role}"


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "path", "body", "statuses"), API_EXPECTED)
def test_api_permission(project, users, role, method, path, body, statuses):
    client = api_as(users[role]) if role != "anonymous" else api_as(None)

    response = getattr(client, method)("/api/" + path.format(slug=project.slug), body, format="json")

    assert response.status_code == dict(zip(ROLES, statuses, strict=True))[role], response.content[:200]
