from __future__ import annotations

from pathlib import Path

import pytest

from multichoice.services.items import trivia_item_create, trivia_items
from multichoice.services.projects import trivia_project_create
from multichoice.services.reviews import trivia_review
from multichoice.services.translation import translation_claim_next, translation_submit

FIXTURES = Path("/work/shared/fixtures/bertaqa")
CATEGORIES = ["Geografia eta Historia", "Zinema eta ikuskizunak"]


def item_values(**changes):
    values = {
        "question": "Where's Atxondo?",
        "candidates": ["In Biscay", "In Gipuzkoa", "In Navarre"],
        "answer": 0,
        "subset": "local",
        "category": "Geografia eta Historia",
        "difficulty": "easy",
    }
    return values | changes


@pytest.fixture
def trivia(coordinator, annotator, second_annotator, reviewer):
    from annotation.services.members import membership_set

    project = trivia_project_create(
        name="Basque trivia",
        slug="basque-trivia",
        source_language="eus",
        target_language="eng",
        categories=CATEGORIES,
        created_by=coordinator,
    )
    membership_set(project=project, user=annotator, roles={"annotator"})
    membership_set(project=project, user=second_annotator, roles={"annotator"})
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    return project


@pytest.fixture
def accepted_item(trivia, annotator, reviewer):
    item = trivia_item_create(project=trivia, user=annotator, **item_values())
    criteria = {c["key"]: True for c in trivia.review_criteria}
    trivia_review(item=item, user=reviewer, criteria=criteria)
    return trivia_items(trivia).get(pk=item.pk)


@pytest.fixture
def flagged_item(trivia, accepted_item, second_annotator):
    item = translation_claim_next(project=trivia, user=second_annotator)
    return translation_submit(
        item=item,
        user=second_annotator,
        target_question="Where is Atxondo?",
        target_candidates=["In Biscay", "In Gipuzkoa", "In Navarre"],
        problem_tags=["outdated"],
        problem_note="Boundaries changed?",
    )
