"""The near-duplicate advice reads a project's latest questions through an index of items by project, not a backward
walk of the primary key past every other project's items, however many they are: PostgreSQL's plan for it, on a
table shaped so."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from annotation.models import QAItem
from annotation.warnings import latest_questions, project_questions
from tests import factories

SPREAD = "it reads PostgreSQL's plan (EXPLAIN in its JSON form) for a choice its planner makes from statistics"


def _items(project, count: int) -> None:
    pair = factories.pair(project)
    QAItem.objects.bulk_create(
        QAItem(project=project, pair=pair, kind=QAItem.Kind.LEAD, question=f"{project.slug} 问题 {i}？")
        for i in range(count)
    )


@pytest.mark.postgresql(reason=SPREAD)
@pytest.mark.django_db(transaction=True)  # ANALYZE outside a transaction block
def test_the_latest_questions_of_a_small_project_are_read_by_its_own_index(coordinator):
    small = factories.project(coordinator, slug="small")
    _items(small, 300)  # lower ids
    large = factories.project(coordinator, slug="large")
    _items(large, 8000)  # every later id belongs to another project
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_qaitem")

    plan = json.loads(latest_questions(small).explain(format="json", analyze=True))[0]["Plan"]

    def nodes(node):
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    scans = [node for node in nodes(plan) if node.get("Relation Name") == "annotation_qaitem"]
    assert scans[0].get("Index Name") not in (None, "annotation_qaitem_pkey"), scans[0]  # an index by project
    assert scans[0].get("Rows Removed by Filter", 0) == 0  # not 8,000 items of the other project read and dropped
    questions = project_questions(small)
    assert len(questions.original) == 300 and all(q.startswith("small ") for q in questions.original.values())
