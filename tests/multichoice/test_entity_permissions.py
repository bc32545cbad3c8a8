"""Every entity-question page and API route × every kind of visitor (verifiers have the reviewer role)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import services as annotation_services
from annotation.models import ImportJob
from multichoice import entities as services
from tests.annotation.test_page_permissions import LOGIN, ROLES
from tests.conftest import api_as
from tests.multichoice.test_entities import ATTRIBUTES, CSV

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
    annotation_services.membership_set(project=project, user=annotator, roles={"annotator"})
    annotation_services.membership_set(project=project, user=reviewer, roles={"reviewer"})
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


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", sorted(PAGE_EXPECTED))
def test_entity_page_permission(client, world, name, role):
    method, row = PAGE_EXPECTED[name]
    expected = dict(zip(ROLES, row, strict=True))[role]
    if role != "anonymous":
        client.force_login(world["users"][role])

    response = getattr(client, method)(page_url(name, world))

    assert response.status_code == expected, f"{method.upper()} {name} as {role}"


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


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "path", "body", "statuses"), API_EXPECTED, ids=lambda v: str(v)[:50])
def test_entity_api_permission(world, role, method, path, body, statuses):
    expected = dict(zip(ROLES, statuses, strict=True))[role]
    client = APIClient() if role == "anonymous" else api_as(world["users"][role])
    if body and body.get("entity") == "ENTITY":
        body = body | {"entity": world["entity"]}
    fmt = "multipart" if path.endswith("import/") else "json"

    response = getattr(client, method)("/api/" + path.format(**world), body, format=fmt)

    assert response.status_code == expected, getattr(response, "content", b"")[:300]


def test_the_api_permission_table_covers_every_entity_route():
    from multichoice.api_urls import urlpatterns

    routes = {str(p.pattern) for p in urlpatterns if "entities" in str(p.pattern)}
    covered = {
        path.replace("projects/{slug}/", "projects/<slug:slug>/").replace("{question}", "<int:item_id>")
        for _, path, _, _ in API_EXPECTED
    }
    assert routes == covered


def test_a_trivia_project_has_no_entity_pages_and_another_projects_entity_is_404(client, world, trivia, coordinator):
    client.force_login(coordinator)

    assert client.get(reverse("entity_home", args=[trivia.slug])).status_code == 404
    response = api_as(coordinator).post(
        f"/api/{E.format(slug=trivia.slug)}correct/", {"entity": world["entity"]}, format="json"
    )
    assert response.status_code == 404
