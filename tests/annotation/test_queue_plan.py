"""The queue's first read goes straight to the lowest new pair of the project, however many pairs of other projects
and pairs already taken come before it: PostgreSQL's plan for it, on a table shaped as a server's after a while."""

from __future__ import annotations

import json

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotation.models import PagePair
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_queue
from common.claims import waiting_reads
from tests import factories

SPREAD = "it reads PostgreSQL's plan (EXPLAIN in its JSON form) for a choice its planner makes from statistics"


def _pairs(project, count: int, status: str, first: int) -> None:
    PagePair.objects.bulk_create(
        PagePair(
            project=project,
            local_title=f"{project.slug} {first + i}",
            standard_title=f"{project.slug} {first + i}",
            local_lead="𠮶間茶餐廳喺深水埗",
            standard_lead="这是一家茶餐厅",
            status=status,
        )
        for i in range(count)
    )


@pytest.mark.postgresql(reason=SPREAD)
@pytest.mark.django_db(transaction=True)  # ANALYZE, and the claim's FOR UPDATE in a transaction of its own
def test_the_first_read_of_the_pair_queue_takes_the_new_pairs_index_not_a_walk_of_the_ids(coordinator, annotator):
    earlier = factories.project(coordinator, slug="earlier")
    _pairs(earlier, 6000, PagePair.Status.SUBMITTED, 0)  # another project's, all taken: lower ids
    project = factories.project(coordinator, slug="later")
    membership_set(project=project, user=annotator, roles={"annotator"})
    _pairs(project, 1500, PagePair.Status.SUBMITTED, 0)  # this project's first pairs, done
    _pairs(project, 3000, PagePair.Status.NEW, 1500)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_pagepair")

    first_read = waiting_reads(*pair_queue(project=project, user=annotator, now=timezone.now()))[0]
    with transaction.atomic():  # a locking read
        plan = json.loads(first_read.explain(format="json", analyze=True))[0]["Plan"]

    def nodes(node):
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    scans = [node for node in nodes(plan) if node.get("Relation Name") == "annotation_pagepair"]
    first = scans[0]  # the outer scan (the NOT IN of the pairs given back comes after it)
    assert first.get("Index Name") == "pair_new_idx", first
    assert first.get("Rows Removed by Filter", 0) == 0  # not 7,500 pairs read and dropped

    claimed = pair_claim_next(project=project, user=annotator)
    assert claimed is not None
    assert claimed.local_title == "later 1500"  # the lowest new pair of this project
