"""Every trivia page and API route × every kind of visitor.

Authors and translators are members with the annotator role, reviewers the reviewer role; coordinators manage
the project and resolve tagged translations. Non-members get 404, members without the role 403, and a project of
another kind has no trivia pages.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from django.urls import reverse

from annotation.models import ImportJob
from annotation.services.members import membership_set
from multichoice.models import TranslationSuggestionJob
from multichoice.services.files import trivia_import_jsonl
from multichoice.services.items import trivia_item_create
from multichoice.services.reviews import trivia_review
from multichoice.services.translation import translation_claim_next, translation_submit
from tests import factories
from tests.conftest import api_as
from tests.multichoice.conftest import item_values
from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

COORDINATOR_ONLY = (LOGIN, 404, 403, 403, 200, 200)

# name: (method, statuses in the order of ROLES: anonymous, outsider, annotator, reviewer, coordinator, superuser)
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "trivia_project_create": ("get", (LOGIN, 403, 403, 403, 403, 200)),
    "trivia_home": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "trivia_settings": ("get", COORDINATOR_ONLY),
    "trivia_items": ("get", COORDINATOR_ONLY),
    "trivia_item_new": ("get", (LOGIN, 404, 200, 403, 403, 200)),
    "trivia_item": ("get", (LOGIN, 404, 403, 200, 200, 200)),
    "trivia_review": ("post", (LOGIN, 404, 403, 302, 403, 302)),
    "trivia_resolve": ("get", COORDINATOR_ONLY),
    "trivia_review_next": ("post", (LOGIN, 404, 403, 302, 403, 302)),
    "trivia_translate_next": ("post", (LOGIN, 404, 302, 403, 403, 302)),
    "trivia_translate": ("get", (LOGIN, 404, 200, 403, 403, 403)),
    "trivia_problems": ("get", COORDINATOR_ONLY),
    "trivia_balance": ("get", COORDINATOR_ONLY),
    "trivia_import": ("get", COORDINATOR_ONLY),
    "trivia_job": ("get", COORDINATOR_ONLY),
    "trivia_export_csv": ("get", COORDINATOR_ONLY),
    "trivia_export_jsonl": ("get", COORDINATOR_ONLY),
    "trivia_import_undo": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "trivia_send_back": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "trivia_suggestions": ("get", COORDINATOR_ONLY),
}


def _accept(project, item, reviewer):
    trivia_review(item=item, user=reviewer, criteria={c["key"]: True for c in project.review_criteria})


@pytest.fixture
def world(trivia, annotator, second_annotator, reviewer, coordinator, outsider, superuser):
    author = factories.user("author")
    membership_set(project=trivia, user=author, roles={"annotator"})
    translated = trivia_item_create(project=trivia, user=author, **item_values(question="T?"))
    _accept(trivia, translated, reviewer)
    held = translation_claim_next(project=trivia, user=annotator)
    flagged = trivia_item_create(project=trivia, user=author, **item_values(question="F?"))
    _accept(trivia, flagged, reviewer)
    claimed = translation_claim_next(project=trivia, user=second_annotator)
    translation_submit(
        item=claimed,
        user=second_annotator,
        target_question="F",
        target_candidates=["a", "b", "c"],
        problem_tags=["outdated"],
    )
    in_review = trivia_item_create(project=trivia, user=author, **item_values(question="A?"))
    line = {
        "id": "9",
        "category": "C",
        "subset": "local",
        "difficulty": 1,
        "question": "Q?",
        "candidates": ["a", "b", "c"],
    }
    data = json.dumps(line | {"answer": 0, "target_question": "Q?", "target_candidates": ["a", "b", "c"]}).encode()
    imported = trivia_import_jsonl(project=trivia, data=data, user=coordinator)  # translated: no queue
    return {
        "slug": trivia.slug,
        "import": imported["import_id"],
        "job": ImportJob.objects.create(project=trivia, format="csv").pk,
        "suggestion_job": TranslationSuggestionJob.objects.create(project=trivia, endpoint_name="e", model="m").pk,
        "in_review": in_review.item_id,
        "held": held.item_id,
        "flagged": flagged.item_id,
        "users": {
            "annotator": annotator,
            "reviewer": reviewer,
            "coordinator": coordinator,
            "outsider": outsider,
            "superuser": superuser,
        },
    }


ITEM_OF_PAGE = {
    "trivia_item": "in_review",
    "trivia_review": "in_review",
    "trivia_resolve": "flagged",
    "trivia_translate": "held",
    "trivia_send_back": "flagged",
}


def page_url(name: str, world: dict) -> str:
    if name == "trivia_project_create":
        return reverse(name)
    kwargs = {"slug": world["slug"]}
    if name in ITEM_OF_PAGE:
        kwargs["item_id"] = world[ITEM_OF_PAGE[name]]
    if name == "trivia_import_undo":
        kwargs["import_id"] = world["import"]
    if name == "trivia_job":
        kwargs["job_id"] = world["job"]
    return reverse(name, kwargs=kwargs)


def test_each_trivia_page_answers_each_visitor_as_the_table_says(world):
    check_pages(world["users"], page_cells(PAGE_EXPECTED, lambda name: page_url(name, world)))


def test_a_wikipedia_project_has_no_trivia_pages(client, project, coordinator):
    client.force_login(coordinator)

    assert client.get(reverse("trivia_home", args=[project.slug])).status_code == 404
    assert api_as(coordinator).get(f"/api/projects/{project.slug}/trivia/settings/").status_code == 404


def test_a_translator_cannot_open_another_translators_item(client, world, second_annotator):
    client.force_login(second_annotator)

    assert client.get(page_url("trivia_translate", world)).status_code == 403


P = "projects/{slug}/trivia/"
NEW_PROJECT = {"name": "N", "slug": "n-trivia", "source_language": "eus", "target_language": "eng"}
API_EXPECTED: list[tuple[str, str, dict | None, tuple[int, ...]]] = [
    # method, path under /api/, body, statuses in the order of ROLES
    ("post", "trivia/projects/", NEW_PROJECT, (403, 403, 403, 403, 403, 201)),
    ("get", P + "settings/", None, (403, 404, 200, 200, 200, 200)),
    ("patch", P + "settings/", {"categories": ["Geografia eta Historia"]}, (403, 404, 403, 403, 200, 200)),
    ("get", P + "items/", None, (403, 404, 403, 403, 200, 200)),
    ("post", P + "items/", item_values(question="New?"), (403, 404, 201, 403, 403, 201)),
    ("get", P + "items/{in_review}/", None, (403, 404, 403, 200, 200, 200)),
    ("patch", P + "items/{in_review}/", {}, (403, 404, 403, 403, 403, 403)),
    ("post", P + "items/{in_review}/review/", {"criteria": {}}, (403, 404, 403, 400, 403, 400)),
    ("post", P + "items/{held}/translation/", {}, (403, 404, 400, 403, 403, 403)),
    ("post", P + "items/{flagged}/resolution/", {}, (403, 404, 403, 403, 400, 400)),
    ("post", P + "review/next/", None, (403, 404, 403, 200, 403, 200)),
    ("post", P + "translate/next/", None, (403, 404, 200, 403, 403, 204)),
    ("get", P + "problems/", None, (403, 404, 403, 403, 200, 200)),
    ("get", P + "balance/", None, (403, 404, 403, 403, 200, 200)),
    ("put", P + "balance/", {}, (403, 404, 403, 403, 400, 400)),
    ("get", P + "imports/", None, (403, 404, 403, 403, 200, 200)),
    ("post", P + "imports/{import}/undo/", None, (403, 404, 403, 403, 200, 200)),
    ("post", P + "items/{flagged}/send-back/", {}, (403, 404, 403, 403, 400, 400)),
    ("post", P + "import/", {}, (403, 404, 403, 403, 400, 400)),
    ("get", P + "export/csv/", None, (403, 404, 403, 403, 200, 200)),
    ("get", P + "export/jsonl/", None, (403, 404, 403, 403, 200, 200)),
    ("get", P + "suggestions/", None, (403, 404, 403, 403, 200, 200)),
    ("post", P + "suggestions/", {"endpoint": 987654321}, (403, 404, 403, 403, 400, 400)),
    ("get", P + "suggestions/{suggestion_job}/", None, (403, 404, 403, 403, 200, 200)),
]  # fmt: skip


def test_each_trivia_api_route_answers_each_visitor_as_the_table_says(world):
    cells = [
        replace(cell, fmt="multipart") if cell.url.endswith("import/") else cell
        for cell in api_cells(API_EXPECTED, world)
    ]
    check_api(world["users"], cells)
