"""Querysets compiled once (common/prepared.py) give what the ORM gives, for every call's own values."""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.db.models import Count, FilteredRelation, Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import services
from annotation.access import MEMBERSHIP, member_rows
from annotation.models import Membership, PagePair
from common.prepared import Prepared
from tests import factories

pytestmark = pytest.mark.django_db


def _pairs_of_member():
    return Prepared(
        lambda user_id, slug, pk: member_rows(
            PagePair.objects.select_related("assignee").filter(pk=pk), user_id, slug, project="project"
        ),
        int,
        str,
        int,
    )


def _fields(row) -> dict:
    return {field.attname: getattr(row, field.attname) for field in type(row)._meta.concrete_fields}


def test_rows_are_the_orms_rows_with_their_relations_for_each_calls_values(
    project, annotator, reviewer, outsider, coordinator
):
    other = factories.project(coordinator, slug="bar-de")
    services.membership_set(project=other, user=reviewer, roles={"reviewer"})
    mine = factories.pair(project, assignee=annotator, local_title="𠮶間茶餐廳 · Wirtshaus · مقهى")
    theirs = factories.pair(other)
    prepared = _pairs_of_member()

    found = prepared.first(annotator.pk, project.slug, mine.pk)
    orm = next(iter(member_rows(PagePair.objects.select_related("assignee").filter(pk=mine.pk), annotator.pk,
                                project.slug, project="project")))  # fmt: skip
    assert _fields(found) == _fields(orm) and found.local_title == "𠮶間茶餐廳 · Wirtshaus · مقهى"
    assert found.assignee == annotator and found.project == project
    assert isinstance(found.created_at, datetime.datetime) and found.created_at.tzinfo is not None  # converted
    membership = getattr(found, MEMBERSHIP)
    assert isinstance(membership, Membership) and membership.user_id == annotator.pk and membership.is_annotator
    assert found._state.adding is False and found._state.db == "default"

    # The same compiled SQL with other values: another user, another project, another row.
    with CaptureQueriesContext(connection) as captured:
        again = prepared.first(reviewer.pk, other.slug, theirs.pk)
    assert len(captured) == 1 and again.pk == theirs.pk and again.project == other and again.assignee is None
    assert getattr(again, MEMBERSHIP).user_id == reviewer.pk
    # A non-member's row comes with no membership; a row of another project does not come.
    assert getattr(prepared.first(outsider.pk, project.slug, mine.pk), MEMBERSHIP, None) is None
    assert prepared.first(annotator.pk, other.slug, mine.pk) is None
    assert prepared.first(annotator.pk, "no-such-project", mine.pk) is None
    # Hostile text is a parameter, never SQL.
    assert prepared.first(annotator.pk, "x' OR '1'='1", mine.pk) is None


def test_a_membership_comes_with_its_filtered_relation_as_the_orm_gives_it(project, annotator):
    pair = factories.pair(project)
    mine = Q(project__memberships__user=annotator.pk)
    prepared = Prepared(
        lambda pk: (
            PagePair.objects.annotate(m=FilteredRelation("project__memberships", condition=mine))
            .select_related("m")
            .filter(pk=pk)[:1]
        ),
        int,
    )
    assert prepared.first(pair.pk).m.user_id == annotator.pk
    assert prepared.all(pair.pk + 1000) == []


def test_a_datetime_value_goes_in_as_the_engine_adapts_it(project, annotator):
    earlier = factories.pair(project)
    since = timezone.now()
    later = factories.pair(project)
    PagePair.objects.filter(pk=earlier.pk).update(created_at=since - datetime.timedelta(minutes=1))
    PagePair.objects.filter(pk=later.pk).update(created_at=since + datetime.timedelta(minutes=1))
    prepared = Prepared(
        lambda project_id, when: PagePair.objects.filter(project=project_id, created_at__gte=when).order_by("pk"),
        int,
        datetime.datetime,
    )
    assert [pair.pk for pair in prepared.all(project.pk, since)] == [later.pk]
    assert [pair.pk for pair in prepared.all(project.pk, since - datetime.timedelta(hours=1))] == [earlier.pk, later.pk]
    with pytest.raises(TypeError, match="aware"):
        prepared.all(project.pk, datetime.datetime(2026, 12, 1, 12, 0))


def test_values_of_other_kinds_and_values_not_plain_parameters_are_refused(project, annotator):
    with pytest.raises(TypeError, match="int, str and datetime"):
        Prepared(lambda when: PagePair.objects.filter(created_at__gte=when), datetime.date)
    inlined = Prepared(lambda pk: PagePair.objects.extra(where=[f"id = {pk}"])[:1], int)  # noqa: S610
    with pytest.raises(ValueError, match="written into its SQL"):
        inlined.first(1)
    unused = Prepared(lambda pk, slug: PagePair.objects.filter(pk=pk)[:1], int, str)  # the slug is not asked
    pair = factories.pair(project)
    assert unused.first(pair.pk, "any").pk == pair.pk and unused.first(pair.pk + 1000, "any") is None
    prepared = _pairs_of_member()
    with pytest.raises(TypeError, match="must be int"):
        prepared.first(str(annotator.pk), project.slug, 1)
    with pytest.raises(TypeError, match="takes 3 values"):
        prepared.first(annotator.pk, project.slug)


def test_a_values_query_gives_its_rows_by_name_with_annotations(project, annotator):
    factories.pair(project, local_title="Wirtshaus")
    factories.pair(project, local_title="مقهى")
    prepared = Prepared(
        lambda project_id: (
            PagePair.objects.filter(project=project_id)
            .annotate(pairs_of_project=Count("project__pairs"))
            .values("local_title", "pairs_of_project")
            .order_by("local_title")
        ),
        int,
    )
    assert prepared.dicts(project.pk) == [
        {"local_title": "Wirtshaus", "pairs_of_project": 2},
        {"local_title": "مقهى", "pairs_of_project": 2},
    ]
    with pytest.raises(TypeError, match="use dicts"):
        prepared.all(project.pk)
