"""Who may use the agreement calculator: any signed-in user (it computes on their own file), nobody anonymous."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from tests.conftest import api_as

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

ROLES = ["anonymous", "outsider", "annotator", "reviewer", "coordinator", "superuser"]
LOGIN = 302  # anonymous visitors are sent to the login page
REDIRECT = 302

RATINGS = b"unit,rater,value\nq1,a,pass\nq1,b,pass\nq2,a,flag\nq2,b,pass\nq3,a,pass\nq3,b,pass\n"

# name: (method, statuses in the order of ROLES); collected by tests/annotation/test_page_permissions.py
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "agreement_calculator": ("get", (LOGIN, 200, 200, 200, 200, 200)),
    # Nothing computed yet in the session: back to the calculator with a message.
    "agreement_calculator_download": ("get", (LOGIN, REDIRECT, REDIRECT, REDIRECT, REDIRECT, REDIRECT)),
}

URL_KWARGS = {"agreement_calculator_download": {"fmt": "json"}}


@pytest.fixture
def users(project, annotator, reviewer, coordinator, outsider, superuser):
    return {
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", sorted(PAGE_EXPECTED))
def test_page_permission(client, users, name, role):
    method, row = PAGE_EXPECTED[name]
    expected = dict(zip(ROLES, row, strict=True))[role]
    if role != "anonymous":
        client.force_login(users[role])
    url = reverse(name, kwargs=URL_KWARGS.get(name, {}))

    response = getattr(client, method)(url)

    assert response.status_code == expected, f"{method.upper()} {url} as {role}"
    if role == "anonymous":
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("role", ROLES)
def test_posting_a_file_to_the_page(client, users, role):
    if role != "anonymous":
        client.force_login(users[role])
    upload = SimpleUploadedFile("ratings.csv", RATINGS, content_type="text/csv")

    response = client.post(
        reverse("agreement_calculator"), {"ratings": upload, "level": "nominal", "bootstrap": 10, "seed": 1}
    )

    assert response.status_code == (LOGIN if role == "anonymous" else 200)


# API: path, statuses in the order of ROLES
API_EXPECTED: list[tuple[str, str, tuple[int, ...]]] = [
    ("post", "agreement/calculate/", (403, 200, 200, 200, 200, 200)),
]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "path", "statuses"), API_EXPECTED)
def test_api_permission(users, method, path, statuses, role):
    client = APIClient() if role == "anonymous" else api_as(users[role])
    upload = SimpleUploadedFile("ratings.csv", RATINGS, content_type="text/csv")

    response = getattr(client, method)(
        "/api/" + path, {"file": upload, "level": "nominal", "bootstrap": 10}, format="multipart"
    )

    assert response.status_code == dict(zip(ROLES, statuses, strict=True))[role], response.content


def test_the_api_table_covers_every_calculator_route():
    from review.calculator_api_urls import urlpatterns

    assert {str(pattern.pattern) for pattern in urlpatterns} == {path for _, path, _ in API_EXPECTED}
