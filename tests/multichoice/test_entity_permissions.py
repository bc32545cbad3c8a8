"""Every entity-question page and API route × every kind of visitor (verifiers have the reviewer role)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.urls import reverse

from annotation.models import ImportJob
from annotation.services.members import membership_set
from multichoice import entities as services
from tests.conftest import api_as
from tests.multichoice.test_entities import ATTRIBUTES, CSV
from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

COORDINATOR_POST = (LOGIN, 404, 403, 403, 302, 302)

PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "entity_project_create": ("get", (LOGIN, 403, 403, 403, 403, 200)),
    "entity_home": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "entity_import": ("post", COORDINATOR_POST),
    "entity_correct": ("post", COORDINATOR_POST),
    "entity_generate": ("post", COORDINATOR_POST),
    "entity_job": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "entity_verify_next": ("post", (LOGIN, 404, 403, 302, 403, 302)),
    "entity_verify": ("get", (LOGIN, 404, 403, 200, 200, 200)),  # coordinators read, verifiers verify
}


@pytest.fixture
def world(coordinator, annotator, reviewer, outsider, superuser):
    project = services.entity_project_create(
        name="Companies", slug="companies", language="eng", attributes=ATTRIBUTES, created_by=coordinator
    )
    membership_set(project=project, user=annotator, roles={"annotator"})
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    services.entities_import(project=project, data=CSV.encode(), name="companies.csv")
    services.questions_generate(project=project)
    return {
        "slug": project.slug,
        "question": services.verification_next(project=project, user=reviewer).item_id,
        "entity": project.entities.first().pk,
        "job": ImportJob.objects.create(project=project, format="generate").pk,
        "users": {
            "annotator": annotator,
            "reviewer": reviewer,
            "coordinator": coordinator,
            "outsider": outsider,
            "superuser": superuser,
        },
    }


def page_url(name: str, world: dict) -> str:
    if name == "entity_project_create":
        return reverse(name)
    kwargs = {"slug": world["slug"]}
    if name == "entity_verify":
        kwargs["item_id"] = world["question"]
    if name == "entity_job":
        kwargs["job_id"] = world["job"]
    return reverse(name, kwargs=kwargs)


def test_each_entity_page_answers_each_visitor_as_the_table_says(world):
    check_pages(world["users"], page_cells(PAGE_EXPECTED, lambda name: page_url(name, world)))


E = "projects/{slug}/entities/"
NEW = {"name": "N", "slug": "n-ent", "language": "eng", "attributes": ATTRIBUTES[:1]}
CORRECT = {"entity": "ENTITY", "attribute": "founded", "value": "1900"}
API_EXPECTED: list[tuple[str, str, dict | None, tuple[int, ...]]] = [
    ("post", "entities/projects/", NEW, (403, 403, 403, 403, 403, 201)),
    ("get", E, None, (403, 404, 403, 403, 200, 200)),
    ("post", E + "import/", {}, (403, 404, 403, 403, 400, 400)),
    ("post", E + "correct/", CORRECT, (403, 404, 403, 403, 200, 200)),
    ("post", E + "generate/", {}, (403, 404, 403, 403, 202, 202)),
    ("get", E + "questions/", None, (403, 404, 403, 403, 200, 200)),
    ("post", E + "verify/next/", None, (403, 404, 403, 200, 403, 200)),
    ("get", E + "questions/{question}/", None, (403, 404, 403, 200, 200, 200)),
    ("post", E + "questions/{question}/", {}, (403, 404, 403, 400, 403, 400)),
]  # fmt: skip


def test_each_entity_api_route_answers_each_visitor_as_the_table_says(world):
    rows = [
        (method, path, body | {"entity": world["entity"]} if body == CORRECT else body, statuses)
        for method, path, body, statuses in API_EXPECTED
    ]
    cells = [
        replace(cell, fmt="multipart") if cell.url.endswith("import/") else cell for cell in api_cells(rows, world)
    ]
    check_api(world["users"], cells)


def test_a_trivia_project_has_no_entity_pages_and_another_projects_entity_is_404(client, world, trivia, coordinator):
    client.force_login(coordinator)

    assert client.get(reverse("entity_home", args=[trivia.slug])).status_code == 404
    response = api_as(coordinator).post(
        f"/api/{E.format(slug=trivia.slug)}correct/", {"entity": world["entity"]}, format="json"
    )
    assert response.status_code == 404
