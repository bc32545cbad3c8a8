"""Who may see and compute agreement reports: coordinators everything, reviewers read, other members 403, others 404.

Reviewers may read the figures (they are the raters being measured) but not who
agrees with whom: per-rater figures are for coordinators.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from review import reports
from tests.annotation.test_page_permissions import LOGIN, ROLES
from tests.conftest import api_as

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

# name: (method, statuses for anonymous, outsider, annotator, reviewer, coordinator, superuser)
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "agreement": ("get", (LOGIN, 404, 403, 200, 200, 200)),
    "agreement_report": ("get", (LOGIN, 404, 403, 200, 200, 200)),
    "agreement_compute": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "agreement_download": ("get", (LOGIN, 404, 403, 200, 200, 200)),
}

# API: method, path under /api/ ({placeholders} filled per test), statuses in the order of ROLES;
# collected by tests/security/test_permission_matrix.py too.
API_EXPECTED: list[tuple[str, str, tuple[int, ...]]] = [
    ("get", "projects/{slug}/agreement/reports/", (403, 404, 403, 200, 200, 200)),
    ("post", "projects/{slug}/agreement/reports/", (403, 404, 403, 403, 202, 202)),
    ("get", "projects/{slug}/agreement/reports/{report_id}/", (403, 404, 403, 200, 200, 200)),
]


@pytest.fixture
def world(project, annotator, reviewer, coordinator, outsider, superuser):
    report, _ = reports.agreement_report_request(project=project, enqueue=False)
    report = reports.agreement_report_compute(report_id=report.pk, bootstrap=10)
    users = {
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }
    return {"project": project, "report": report, "users": users}


def _url(name: str, world: dict) -> str:
    slug, report = world["project"].slug, world["report"]
    if name == "agreement_report":
        return reverse(name, args=[slug, report.pk])
    if name == "agreement_download":
        return reverse(name, args=[slug, report.pk, "json"])
    return reverse(name, args=[slug])


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", sorted(PAGE_EXPECTED))
def test_agreement_page_permission(client, world, name, role):
    method, row = PAGE_EXPECTED[name]
    expected = dict(zip(ROLES, row, strict=True))[role]
    if role != "anonymous":
        client.force_login(world["users"][role])
    url = _url(name, world)

    response = getattr(client, method)(url)

    assert response.status_code == expected, f"{method.upper()} {url} as {role}"
    if role == "anonymous":
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "path", "statuses"), API_EXPECTED)
def test_agreement_api_permission(world, method, path, statuses, role):
    client = APIClient() if role == "anonymous" else api_as(world["users"][role])
    url = "/api/" + path.format(slug=world["project"].slug, report_id=world["report"].pk)

    response = getattr(client, method)(url)

    assert response.status_code == dict(zip(ROLES, statuses, strict=True))[role], response.content


def test_the_api_table_covers_every_agreement_route():
    from review.agreement_api_urls import urlpatterns

    routes = {re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern)) for pattern in urlpatterns}
    assert routes == {path for _, path, _ in API_EXPECTED}


def test_a_report_of_another_project_is_404(client, world, other_project):
    other, _ = reports.agreement_report_request(project=other_project, enqueue=False)
    client.force_login(world["users"]["coordinator"])

    assert client.get(reverse("agreement_report", args=[world["project"].slug, other.pk])).status_code == 404
    response = api_as(world["users"]["coordinator"]).get(
        f"/api/projects/{world['project'].slug}/agreement/reports/{other.pk}/"
    )
    assert response.status_code == 404
