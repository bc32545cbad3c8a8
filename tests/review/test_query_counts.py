"""Review list pages take a fixed number of queries, however many items there are."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.services.members import membership_set
from common.errors import InvalidState
from review import judging as review_judging
from review import labels as review_labels
from review import queue as review_queue
from tests import factories
from tests.review.conftest import all_pass, flag, submitted_pair


def _fill(project, annotator, reviewer, coordinator, pairs: int) -> None:
    for index in range(pairs):
        pair, items = submitted_pair(project, annotator)
        slot = review_queue.review_claim(item=items[0], user=reviewer)
        judgments = all_pass(project) if index % 2 else flag(project, "fluency", "Typo")
        review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=judgments)
        for kind, value in (("topic", "food"), ("region", "local")):
            review_labels.label_set(pair=pair, user=coordinator, kind=kind, value=value)


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured)


PAGES = [
    ("review_queue", "reviewer", {}, 8),
    ("review_queue", "reviewer", {"status": "all"}, 8),
    ("my_items", "annotator", {}, 5),
    ("dashboard", "coordinator", {}, 13),  # the deleted items and pairs, left out without a join on all projects
    ("label_list", "coordinator", {}, 6),
    ("adjudication", "coordinator", {}, 7),
    ("reviewers", "coordinator", {}, 5),
]


@pytest.mark.parametrize(("name", "who", "query", "most"), PAGES)
def test_review_pages_take_a_fixed_number_of_queries(client, request, project, name, who, query, most):
    annotator, reviewer, coordinator = (request.getfixturevalue(n) for n in ("annotator", "reviewer", "coordinator"))
    client.force_login(request.getfixturevalue(who))
    url = reverse(name, args=[project.slug])
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    _fill(project, annotator, reviewer, coordinator, 2)
    few = _queries(client, url)
    _fill(project, annotator, reviewer, coordinator, 6)
    many = _queries(client, url)
    assert many == few, f"{name}: {few} queries with 2 pairs, {many} with 8"
    assert many <= most


def test_the_review_api_list_takes_a_fixed_number_of_queries(project, annotator, reviewer, coordinator):
    from tests.conftest import api_as

    client = api_as(reviewer)
    path = f"/api/projects/{project.slug}/review/items/"
    _fill(project, annotator, reviewer, coordinator, 2)
    with CaptureQueriesContext(connection) as few:
        client.get(path)
    _fill(project, annotator, reviewer, coordinator, 6)
    with CaptureQueriesContext(connection) as many:
        assert client.get(path).status_code == 200
    assert len(many) == len(few) <= 8


def test_a_second_labeller_is_told_when_the_pair_has_its_labellers(project, coordinator, annotator):
    pair, _ = submitted_pair(project, annotator)
    others = [factories.user(f"labeller{i}") for i in range(3)]
    for other in others:
        membership_set(project=project, user=other, roles={"coordinator"})
    review_labels.label_set(pair=pair, user=others[0], kind="topic", value="food")
    review_labels.label_set(pair=pair, user=others[1], kind="topic", value="food")
    with pytest.raises(InvalidState, match="already has its 2 labellers"):
        review_labels.label_set(pair=pair, user=others[2], kind="topic", value="food")
