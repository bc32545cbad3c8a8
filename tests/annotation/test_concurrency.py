"""Races against a real PostgreSQL: many annotators at once, stale copies of one item."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import PagePair, QAItem
from annotation.services.items import qa_item_create, qa_item_update
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from common.errors import InvalidState, StaleEdit
from tests import factories

THREADS = 20


def run_at_once(count: int, work) -> list:
    """Run `work(index)` in `count` threads released together; each thread uses its own connection."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list[BaseException] = []

    def runner(index: int) -> None:
        try:
            barrier.wait()
            results[index] = work(index)
        except BaseException as error:  # reported to the test below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=runner, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    return results


@pytest.mark.django_db(transaction=True)
def test_twenty_annotators_asking_at_once_never_get_the_same_pair():
    coordinator = factories.user("coord")
    project = factories.project(coordinator, slug="race")
    annotators = [factories.user(f"ann{i}") for i in range(THREADS)]
    for annotator in annotators:
        membership_set(project=project, user=annotator, roles={"annotator"})
    for _ in range(THREADS + 5):
        factories.pair(project)

    pairs = run_at_once(THREADS, lambda i: pair_claim_next(project=project, user=annotators[i]))

    handed_out = [pair.pk for pair in pairs if pair is not None]
    assert len(handed_out) == THREADS
    assert len(set(handed_out)) == THREADS, Counter(handed_out).most_common(3)
    owners = dict(PagePair.objects.filter(pk__in=handed_out).values_list("pk", "assignee_id"))
    assert all(owners[pair.pk] == annotators[i].pk for i, pair in enumerate(pairs))


@pytest.mark.django_db(transaction=True)
def test_when_pairs_run_out_the_rest_get_none_and_no_pair_is_shared():
    coordinator = factories.user("coord")
    project = factories.project(coordinator, slug="scarce")
    annotators = [factories.user(f"ann{i}") for i in range(THREADS)]
    for annotator in annotators:
        membership_set(project=project, user=annotator, roles={"annotator"})
    for _ in range(5):
        factories.pair(project)

    pairs = run_at_once(THREADS, lambda i: pair_claim_next(project=project, user=annotators[i]))

    handed_out = [pair.pk for pair in pairs if pair is not None]
    assert len(handed_out) == 5
    assert len(set(handed_out)) == 5


@pytest.mark.django_db(transaction=True)
def test_two_saves_from_the_same_stale_copy_one_wins_the_other_is_refused():
    coordinator = factories.user("coord")
    annotator = factories.user("ann")
    project = factories.project(coordinator, slug="stale")
    membership_set(project=project, user=annotator, roles={"annotator"})
    factories.pair(project)
    pair = pair_claim_next(project=project, user=annotator)
    pair = pair_screen(pair=pair, user=annotator, decision="annotate")
    item = qa_item_create(pair=pair, user=annotator)
    questions = ["甲：这家店几时开？", "乙：老板姓什么？"]

    def save(index: int) -> str:
        copy = QAItem.objects.select_related("pair__project").get(pk=item.pk)
        try:
            qa_item_update(item=copy, user=annotator, version=item.version, question=questions[index])
        except StaleEdit as error:
            return f"stale:{error.current.question}"
        return "saved"

    outcomes = run_at_once(2, save)

    assert sorted(o.split(":")[0] for o in outcomes) == ["saved", "stale"]
    item.refresh_from_db()
    winner = questions[outcomes.index("saved")]
    assert item.question == winner
    assert item.version == 2
    stale = next(o for o in outcomes if o.startswith("stale"))
    assert stale == f"stale:{winner}"  # the refused writer is shown the newer text, nothing lost


@pytest.mark.django_db
def test_an_expired_claim_returns_the_pair_to_the_pool(project, annotator, second_annotator):
    factories.pair(project)
    first = pair_claim_next(project=project, user=annotator)
    PagePair.objects.filter(pk=first.pk).update(claim_expires_at=first.claimed_at)  # long ago

    second = pair_claim_next(project=project, user=second_annotator)

    assert second.pk == first.pk
    assert second.assignee_id == second_annotator.pk
    # Taken by the second waiting condition, it is read whole again: the pair as it is now, nothing deferred.
    assert not second.get_deferred_fields()
    assert (second.version, second.status, second.local_lead) == (
        PagePair.objects.values_list("version", "status", "local_lead").get(pk=first.pk)
    )
    with pytest.raises(InvalidState):  # the first annotator lost the pair; their screening is refused
        pair_screen(pair=first, user=annotator, decision="annotate")


@pytest.mark.django_db
def test_the_queue_hands_out_the_lowest_waiting_pair_new_or_expired(project, annotator, second_annotator, reviewer):
    membership_set(project=project, user=reviewer, roles={"annotator"})
    older, newer = factories.pair(project), factories.pair(project)
    held = pair_claim_next(project=project, user=annotator)
    assert held.pk == older.pk
    PagePair.objects.filter(pk=older.pk).update(claim_expires_at=held.claimed_at)  # expired, lower id than `newer`

    with CaptureQueriesContext(connection) as both:
        taken = pair_claim_next(project=project, user=second_annotator)
    assert taken.pk == older.pk  # the expired claim is older than the new pair: it goes first
    newest = factories.pair(project)
    PagePair.objects.filter(pk=older.pk).update(claim_expires_at=held.claimed_at)  # expired again, still lowest
    PagePair.objects.filter(pk=newer.pk).update(status=PagePair.Status.SUBMITTED)
    with CaptureQueriesContext(connection) as expired_first:
        assert pair_claim_next(project=project, user=reviewer).pk == older.pk

    PagePair.objects.filter(pk=older.pk).update(status=PagePair.Status.SUBMITTED)
    PagePair.objects.filter(pk=newest.pk).update(status=PagePair.Status.NEW)
    with CaptureQueriesContext(connection) as first_only:
        assert pair_claim_next(project=project, user=annotator).pk == newest.pk
    reads = [len([q for q in run if q["sql"].startswith("SELECT") and 'FROM "annotation_pagepair"' in q["sql"]])
             for run in (both, expired_first, first_only)]  # fmt: skip
    # The pair held, then the first row of each waiting condition (new pairs, expired claims), each by its index.
    assert reads == [3, 3, 3]


@pytest.mark.django_db
def test_asking_again_returns_the_unscreened_pair_already_held(project, annotator):
    factories.pair(project)
    factories.pair(project)
    first = pair_claim_next(project=project, user=annotator)

    again = pair_claim_next(project=project, user=annotator)

    assert again.pk == first.pk
    assert PagePair.objects.filter(project=project, assignee=annotator).count() == 1


@pytest.mark.django_db
def test_a_pair_being_annotated_never_expires(project, annotator, second_annotator, annotating_pair):
    PagePair.objects.filter(pk=annotating_pair.pk).update(claim_expires_at=annotating_pair.created_at)

    assert pair_claim_next(project=project, user=second_annotator) is None
