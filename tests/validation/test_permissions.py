"""Every validation page and API route × every kind of visitor.

Coordinators manage the project; validators are members with the reviewer role
and reach only the tasks they hold; any member sees the validation home. Non-members
get 404, members without the role 403, and a project of another kind has no validation pages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from django.urls import reverse

from annotation.models import ImportJob
from tests.conftest import api_as
from tests.security.harness import LOGIN, Cell, api_cells, check_api, check_pages, page_cells
from validation import services
from validation.models import ModelJob, SearchCollection, SeedDraft

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

# name: (method, statuses in the order of ROLES: anonymous, outsider, annotator, reviewer, coordinator, superuser)
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "validation_project_create": ("get", (LOGIN, 403, 403, 403, 403, 200)),
    "validation_home": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "validation_settings": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_import": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_import_job": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_seeds": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_seeds_csv": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_domains": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_duplicates": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_merge": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "validation_merge_all": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "validation_items": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_item": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_final_answer": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "validation_next": ("post", (LOGIN, 404, 403, 302, 403, 302)),
    "validation_task": ("get", (LOGIN, 404, 403, 200, 403, 403)),
    "validation_agreement": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_search": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_search_detail": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_search_cancel": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "validation_search_resume": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "validation_suggestions": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_model_job": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_seed_drafts": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "validation_seed_draft": ("post", (LOGIN, 404, 403, 403, 302, 302)),
}


@pytest.fixture
def world(imported, annotator, reviewer, coordinator, outsider, superuser):
    slot = services.validation_claim_next(project=imported, user=reviewer)
    group = services.duplicate_groups(imported)[0]
    job = ImportJob.objects.create(project=imported, created_by=coordinator, status=ImportJob.Status.DONE)
    collection = SearchCollection.objects.create(project=imported, created_by=coordinator, budget=5)
    model_job = ModelJob.objects.create(project=imported, purpose="seed_drafts", endpoint_name="e", model="m")
    draft = SeedDraft.objects.create(
        project=imported, job=model_job, location="Doha", topic="food", language="eng", drafted="q", query="q"
    )
    services.source_domain_label(
        project=imported, domain="b.org", label="not_sure", user=coordinator, origin="coordinator"
    )
    users = {
        "annotator": annotator,
        "reviewer": reviewer,
        "coordinator": coordinator,
        "outsider": outsider,
        "superuser": superuser,
    }
    return {
        "project": imported,
        "slug": imported.slug,
        "slot": slot.pk,
        "item": slot.item_id,
        "keep": group["keep"].item_id,
        "duplicate": group["duplicates"][0].item_id,
        "job": job.pk,
        "collection": collection.pk,
        "model_job": model_job.pk,
        "draft": draft.pk,
        "domain": "b.org",
        "users": users,
    }


def page_url(name: str, world: dict) -> str:
    if name == "validation_project_create":
        return reverse(name)
    kwargs = {"slug": world["slug"]}
    if name == "validation_task":
        kwargs["slot_id"] = world["slot"]
    if name in ("validation_item", "validation_final_answer"):
        kwargs["item_id"] = world["item"]
    if name == "validation_import_job":
        kwargs["job_id"] = world["job"]
    if name.startswith("validation_search_"):
        kwargs["collection_id"] = world["collection"]
    if name == "validation_model_job":
        kwargs["model_job_id"] = world["model_job"]
    if name == "validation_seed_draft":
        kwargs["draft_id"] = world["draft"]
    return reverse(name, kwargs=kwargs)


def test_each_validation_page_answers_each_visitor_as_the_table_says(world):
    data = {
        "validation_merge": {"keep": world["keep"], "duplicate": world["duplicate"]},
        "validation_final_answer": {"revision": 1},
    }
    check_pages(world["users"], page_cells(PAGE_EXPECTED, lambda name: page_url(name, world), **data))


def test_a_wikipedia_project_has_no_validation_pages(client, project, coordinator):
    client.force_login(coordinator)

    assert client.get(reverse("validation_home", args=[project.slug])).status_code == 404
    assert api_as(coordinator).get(f"/api/projects/{project.slug}/validation/settings/").status_code == 404


def test_a_validator_cannot_open_another_validators_task(client, world, second_reviewer):
    client.force_login(second_reviewer)

    assert client.get(page_url("validation_task", world)).status_code == 403


LABEL = {"domain": "a.org", "label": "not_sure"}
RELABEL = {"label": "very_reliable"}
DRAFTING = {"endpoint": 987654321, "locations": ["Doha"], "topics": ["food"]}
API_ENDPOINTS: list[tuple[str, str, dict | str | None, tuple[int, ...]]] = [
    # method, path, body, statuses in the order of ROLES
    ("post", "validation/projects/", {"name": "N", "slug": "n-new", "language": "ara"}, (403, 403, 403, 403, 403, 201)),
    ("get", "projects/{slug}/validation/settings/", None, (403, 404, 200, 200, 200, 200)),
    ("patch", "projects/{slug}/validation/settings/", {"location": "Doha"}, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/import/", {}, (403, 404, 403, 403, 400, 400)),
    ("get", "projects/{slug}/validation/seeds/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/validation/locations/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/locations/", {"name": "Doha"}, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/seeds/", {"topic": "t", "query": "Q?"}, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/seeds/import/", {}, (403, 404, 403, 403, 400, 400)),
    ("get", "projects/{slug}/validation/seeds/csv/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/validation/domains/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/domains/", LABEL, (403, 404, 403, 403, 201, 409)),
    ("post", "projects/{slug}/validation/domains/import/", {}, (403, 404, 403, 403, 400, 400)),
    ("get", "projects/{slug}/validation/domains/{domain}/", None, (403, 404, 403, 403, 200, 200)),
    ("patch", "projects/{slug}/validation/domains/{domain}/", RELABEL, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/validation/duplicates/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/duplicates/merge/", "MERGE", (403, 404, 403, 403, 200, 409)),
    ("post", "projects/{slug}/validation/duplicates/merge-all/", {"which": "exact"}, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/validation/items/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/validation/items/{item}/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/items/{item}/final-answer/", {"revision": 1}, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/next/", None, (403, 404, 403, 200, 403, 200)),
    ("get", "projects/{slug}/validation/tasks/{slot}/", None, (403, 404, 403, 200, 403, 403)),
    ("post", "projects/{slug}/validation/tasks/{slot}/", {"version": 0}, (403, 404, 403, 400, 403, 403)),
    ("post", "projects/{slug}/validation/tasks/{slot}/skip/", None, (403, 404, 403, 204, 403, 403)),
    ("get", "projects/{slug}/validation/agreement/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/validation/search/key/", None, (403, 404, 403, 403, 200, 200)),
    ("put", "projects/{slug}/validation/search/key/", {"api_key": "k-1234"}, (403, 404, 403, 403, 200, 200)),
    ("delete", "projects/{slug}/validation/search/key/", None, (403, 404, 403, 403, 204, 204)),
    ("get", "projects/{slug}/validation/search/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/search/", {"budget": 5}, (403, 404, 403, 403, 409, 409)),
    ("get", "projects/{slug}/validation/search/{collection}/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/validation/search/{collection}/queries/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/search/{collection}/cancel/", None, (403, 404, 403, 403, 200, 409)),
    ("post", "projects/{slug}/validation/search/{collection}/resume/", {}, (403, 404, 403, 403, 409, 409)),
    ("get", "projects/{slug}/validation/suggestions/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/suggestions/", {"endpoint": 987654321}, (403, 404, 403, 403, 400, 400)),
    ("get", "projects/{slug}/validation/model-jobs/{model_job}/", None, (403, 404, 403, 403, 200, 200)),
    ("get", "projects/{slug}/validation/seeds/drafts/", None, (403, 404, 403, 403, 200, 200)),
    ("post", "projects/{slug}/validation/seeds/drafts/", DRAFTING, (403, 404, 403, 403, 400, 400)),
    ("post", "projects/{slug}/validation/seeds/drafts/{draft}/", {"action": "reject"}, (403, 404, 403, 403, 200, 409)),
]  # fmt: skip


def test_each_validation_api_route_answers_each_visitor_as_the_table_says(world):
    merge = {"keep": world["keep"], "duplicate": world["duplicate"]}
    rows = [(method, path, merge if body == "MERGE" else body, row) for method, path, body, row in API_ENDPOINTS]
    cells = []
    for cell in api_cells(rows, world):
        if cell.url.endswith("import/"):  # uploads
            cell = replace(cell, fmt="multipart")
        if cell.expected[-1] == 409:  # the superuser's answer when the coordinator did it first
            cell = replace(cell, before=_coordinator_first(world, cell))
        cells.append(cell)
    check_api(world["users"], cells)


def _coordinator_first(world: dict, cell: Cell) -> Callable[[str], None]:
    def before(visitor: str) -> None:
        if visitor == "superuser":
            api_as(world["users"]["coordinator"]).post(cell.url, cell.data, format="json")

    return before
