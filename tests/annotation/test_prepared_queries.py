"""Querysets compiled once (common/prepared.py) give what the ORM gives, for every call's own values."""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.db.models import Count, F, FilteredRelation, Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import services
from annotation.access import MEMBERSHIP, member_rows
from annotation.models import EvidenceSpan, Membership, PagePair
from audit.models import AuditEvent
from common.prepared import Prepared, preparable, rows_delete, rows_insert, rows_update
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


# Writes compiled once: rows_update, rows_delete, rows_insert.


def test_a_prepared_update_changes_the_rows_the_orm_would_for_each_calls_values(project, annotator):
    first, second = factories.pair(project), factories.pair(project, status=PagePair.Status.CLAIMED)
    now = timezone.now()
    changes = {"status": PagePair.Status.ANNOTATING, "updated_at": now, "version": F("version") + 1}
    # Versions are small columns: the comparison is compiled in, not left out as out of range.
    where = {"pk": first.pk, "version": first.version, "status__in": [PagePair.Status.NEW, PagePair.Status.CLAIMED]}
    assert rows_update(PagePair, where, changes) == 1
    first.refresh_from_db()
    assert (first.status, first.version, first.updated_at) == ("annotating", 2, now)
    # The same statement with other values: a stale version changes nothing, another row changes.
    with CaptureQueriesContext(connection) as captured:
        assert rows_update(PagePair, {**where, "version": 1}, changes) == 0
        assert rows_update(PagePair, {**where, "pk": second.pk, "version": 1}, changes) == 1
    assert len(captured) == 2 and captured[0]["sql"].split(" SET ")[0] == captured[1]["sql"].split(" SET ")[0]
    second.refresh_from_db()
    assert (second.status, second.version) == ("annotating", 2)
    # None and booleans are part of the statement's shape; hostile text is a parameter.
    title = "𠮶間茶餐廳'; DROP TABLE annotation_pagepair; --"
    assert (
        rows_update(PagePair, {"pk": first.pk, "deleted_at__isnull": True}, {"assignee": None, "local_title": title})
        == 1
    )
    assert rows_update(PagePair, {"pk": first.pk, "deleted_at__isnull": False}, {"local_title": "x"}) == 0
    first.refresh_from_db()
    assert first.assignee_id is None and first.local_title == title
    with pytest.raises(TypeError, match="prepared write"):
        rows_update(PagePair, {"pk": first.pk}, {"metadata": {"a": 1}})
    assert not preparable([{"a": 1}]) and preparable([1, "x", now, None, True, F("version") + 1])


def test_a_prepared_delete_takes_only_the_rows_asked(project, annotator):
    pair = factories.pair(project, status=PagePair.Status.ANNOTATING, assignee=annotator)
    span = {"start": 0, "end": 1, "text": pair.local_lead[0]}
    item = services.qa_item_create(pair=pair, user=annotator, question="Wo?", spans=[span])
    other = services.qa_item_create(pair=pair, user=annotator, question="Wer?", spans=[span])
    assert rows_delete(EvidenceSpan, {"item_id": item.pk}) == 1
    assert list(EvidenceSpan.objects.filter(item=item)) == [] and EvidenceSpan.objects.filter(item=other).count() == 1


def test_prepared_inserts_write_what_bulk_create_writes_and_give_the_ids(project, annotator):
    pair = factories.pair(project)
    events = [
        AuditEvent(project_id=project.pk, actor=annotator, action="pair.screened", object_type="pair",
                   object_id=pair.pk, object_label="مقهى · 𠮶", details={"note": "Wirtshaus", "n": [1, 2]}),
        AuditEvent(project_id=None, actor=None, action="pair.screened", object_type="pair", object_id=None),
    ]  # fmt: skip
    written = rows_insert(events)
    assert [event.pk for event in written] == [event.pk for event in events] and all(event.pk for event in events)
    assert events[0]._state.adding is False and events[0]._state.db == "default"
    stored = AuditEvent.objects.get(pk=events[0].pk)
    assert (stored.details, stored.object_label, stored.actor_id) == (
        {"note": "Wirtshaus", "n": [1, 2]},
        "مقهى · 𠮶",
        annotator.pk,
    )
    assert stored.created_at == events[0].created_at and stored.created_at.tzinfo is not None
    assert AuditEvent.objects.get(pk=events[1].pk).details == {}
    assert rows_insert([]) == []
    with pytest.raises(TypeError, match="one model"):
        rows_insert([events[0], pair])
