"""Who may use the agreement calculator: any signed-in user (it computes on their own file), nobody anonymous."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.security.harness import LOGIN, Cell, check_api, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

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


def _ratings(visitor: str) -> dict[str, Any]:
    upload = SimpleUploadedFile("ratings.csv", RATINGS, content_type="text/csv")
    return {"ratings": upload, "level": "nominal", "bootstrap": 10, "seed": 1}


def _ratings_file(visitor: str) -> dict[str, Any]:
    return {
        "file": SimpleUploadedFile("ratings.csv", RATINGS, content_type="text/csv"),
        "level": "nominal",
        "bootstrap": 10,
    }


def test_each_calculator_page_answers_each_visitor_as_the_table_says(users):
    cells = page_cells(PAGE_EXPECTED, lambda name: reverse(name, kwargs=URL_KWARGS.get(name, {})))
    # Posting a file computes for anyone signed in.
    cells.append(Cell("post", reverse("agreement_calculator"), (LOGIN, 200, 200, 200, 200, 200), _ratings))
    check_pages(users, cells)


# API: path, statuses in the order of ROLES
API_EXPECTED: list[tuple[str, str, tuple[int, ...]]] = [
    ("post", "agreement/calculate/", (403, 200, 200, 200, 200, 200)),
]


def test_each_calculator_api_route_answers_each_visitor_as_the_table_says(users):
    cells = [
        Cell(method, "/api/" + path, statuses, _ratings_file, fmt="multipart")
        for method, path, statuses in API_EXPECTED
    ]
    check_api(users, cells)
