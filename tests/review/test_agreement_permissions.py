"""Who may see and compute agreement reports: coordinators everything, reviewers read, other members 403, others 404.

Reviewers may read the figures (they are the raters being measured) but not who
agrees with whom: per-rater figures are for coordinators.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from review import reports
from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells

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


def test_each_agreement_page_answers_each_visitor_as_the_table_says(world):
    check_pages(world["users"], page_cells(PAGE_EXPECTED, lambda name: _url(name, world)))


def test_each_agreement_api_route_answers_each_visitor_as_the_table_says(world):
    values = {"slug": world["project"].slug, "report_id": world["report"].pk}
    check_api(world["users"], api_cells([(method, path, None, row) for method, path, row in API_EXPECTED], values))
