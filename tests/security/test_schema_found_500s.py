"""Requests schemathesis found answered with a 500: each is now a 400 naming the field."""

from __future__ import annotations

import pytest

from annotation.services.projects import project_update
from common.errors import InvalidInput
from review import queue as review_queue
from tests.conftest import api_as
from tests.review.conftest import submitted_pair


@pytest.mark.parametrize("value", [-1, 0, 21])
def test_a_lead_qa_minimum_out_of_range_is_a_400(project, coordinator, value):
    response = api_as(coordinator).patch(f"/api/projects/{project.slug}/", {"lead_qa_min": value}, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["field"] == "lead_qa_min"
    project.refresh_from_db()
    assert project.lead_qa_min == 2


def test_a_negative_lead_qa_minimum_is_refused_by_the_service_too(project, coordinator):
    with pytest.raises(InvalidInput, match="lead_qa_min"):
        project_update(project=project, actor=coordinator, lead_qa_min=-1)


@pytest.mark.parametrize("verdict", [{"pass": True}, ["pass"], 1, None, True])
def test_a_review_verdict_that_is_not_a_word_is_a_400(project, annotator, reviewer, verdict):
    _, items = submitted_pair(project, annotator)
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    body = {
        "version": slot.version,
        "judgments": {c["key"]: {"verdict": verdict, "comment": "x"} for c in project.review_criteria},
    }

    response = api_as(reviewer).post(f"/api/projects/{project.slug}/review/slots/{slot.pk}/", body, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["field"].endswith(".verdict")
