"""Every review page × every kind of visitor (collected by tests/annotation/test_page_permissions.py too)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from review import queue as review_queue
from tests.review.conftest import STANDARD_TEXT, submitted_pair
from tests.security.harness import LOGIN, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

# name: (method, statuses for anonymous, outsider, annotator (the author), reviewer, coordinator, superuser)
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "review_queue": ("get", (LOGIN, 404, 403, 200, 200, 200)),
    "review_next": ("post", (LOGIN, 404, 403, 302, 403, 302)),
    "review_claim": ("post", (LOGIN, 404, 403, 302, 403, 302)),
    "review_slot": ("get", (LOGIN, 404, 403, 200, 200, 200)),
    "review_release": ("post", (LOGIN, 404, 403, 302, 403, 403)),
    "review_activity": ("post", (LOGIN, 404, 403, 204, 403, 403)),
    "item_history": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "item_reject": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "item_rewrite": ("get", (LOGIN, 404, 200, 403, 403, 403)),
    "item_resubmit": ("post", (LOGIN, 404, 302, 403, 403, 403)),
    "item_reviewer_rewrite": ("post", (LOGIN, 404, 403, 302, 403, 302)),
    "item_verify": ("get", (LOGIN, 404, 200, 200, 200, 200)),
    "my_items": ("get", (LOGIN, 404, 200, 403, 403, 200)),
    "document_qa": ("get", (LOGIN, 404, 200, 403, 403, 403)),
    "label_list": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "pair_labels": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "adjudication": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "label_adjudicate": ("post", (LOGIN, 404, 403, 403, 302, 302)),
    "dashboard": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "reviewers": ("get", (LOGIN, 404, 403, 403, 200, 200)),
    "review_settings": ("get", (LOGIN, 404, 403, 403, 200, 200)),
}

POST_DATA = {
    "review_activity": {"seconds": "20"},
    "item_reject": {"reason": "Off topic", "version": "1"},
    "label_adjudicate": {"kind": "topic", "value": "food", "version": "0"},
}


@pytest.fixture
def world(project, annotator, reviewer, coordinator, outsider, superuser):
    pair, items = submitted_pair(project, annotator, standard_text=STANDARD_TEXT)
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    users = {"annotator": annotator, "reviewer": reviewer, "coordinator": coordinator, "outsider": outsider}
    users["superuser"] = superuser
    return {"project": project, "pair": pair, "item": items[0], "slot": slot, "users": users}


def _url(name: str, world: dict) -> str:
    slug = world["project"].slug
    if name.startswith("item_") or name == "review_claim":
        return reverse(name, args=[slug, world["item"].pk])
    if name in {"review_slot", "review_release", "review_activity"}:
        return reverse(name, args=[slug, world["slot"].pk])
    if name in {"document_qa", "pair_labels", "label_adjudicate"}:
        return reverse(name, args=[slug, world["pair"].pk])
    return reverse(name, args=[slug])


def test_each_review_page_answers_each_visitor_as_the_table_says(world):
    check_pages(world["users"], page_cells(PAGE_EXPECTED, lambda name: _url(name, world), **POST_DATA))
