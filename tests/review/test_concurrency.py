"""Races against a real PostgreSQL: reviewers claiming at once, one reviewer submitting twice at once."""

from __future__ import annotations

from collections import Counter

import pytest

from annotation.services.members import membership_set
from common.errors import InvalidState, StaleEdit
from review import judging as review_judging
from review import queue as review_queue
from review.models import Judgment, ReviewSlot
from tests import factories
from tests.annotation.test_concurrency import run_at_once
from tests.conftest import api_as
from tests.review.conftest import all_pass, submitted_pair

THREADS = 12


def _project_with_reviewers(slug: str, count: int, reviewers_per_item: int = 1):
    coordinator = factories.user(f"coord-{slug}")
    project = factories.project(coordinator, slug=slug, reviewers_per_item=reviewers_per_item)
    author = factories.user(f"author-{slug}")
    membership_set(project=project, user=author, roles={"annotator"})
    reviewers = [factories.user(f"rev{i}-{slug}") for i in range(count)]
    for reviewer in reviewers:
        membership_set(project=project, user=reviewer, roles={"reviewer"})
    return project, author, reviewers


@pytest.mark.django_db(transaction=True)
def test_reviewers_asking_at_once_never_fill_the_same_slot():
    project, author, reviewers = _project_with_reviewers("race-review", THREADS)
    for _ in range(4):  # 4 pairs x 2 items = 8 slots for 12 reviewers
        submitted_pair(project, author)

    slots = run_at_once(THREADS, lambda i: review_queue.review_claim_next(project=project, user=reviewers[i]))

    handed_out = [slot.pk for slot in slots if slot is not None]
    assert len(handed_out) == 8
    assert len(set(handed_out)) == 8, Counter(handed_out).most_common(3)
    owners = dict(ReviewSlot.objects.filter(pk__in=handed_out).values_list("pk", "reviewer_id"))
    assert all(owners[slot.pk] == reviewers[i].pk for i, slot in enumerate(slots) if slot is not None)


@pytest.mark.django_db(transaction=True)
def test_when_there_are_enough_slots_every_reviewer_asking_at_once_gets_one():
    """The slot is claimed in the transaction that locked it: the others skip it at once instead of racing for
    the same first slot, losing, and running out of attempts with slots still open."""
    project, author, reviewers = _project_with_reviewers("race-enough", 20)
    for _ in range(12):  # 12 pairs x 2 items = 24 slots for 20 reviewers
        submitted_pair(project, author)

    slots = run_at_once(20, lambda i: review_queue.review_claim_next(project=project, user=reviewers[i]))

    assert all(slot is not None for slot in slots), f"{slots.count(None)} of 20 reviewers got nothing"
    assert len({slot.pk for slot in slots}) == 20


@pytest.mark.django_db(transaction=True)
def test_two_slots_of_one_item_go_to_two_different_reviewers_even_when_one_asks_twice_at_once():
    project, author, reviewers = _project_with_reviewers("race-same", 1, reviewers_per_item=2)
    _, items = submitted_pair(project, author, evidences=("深水埗", "姓陳"))
    reviewer = reviewers[0]
    ReviewSlot.objects.exclude(item=items[0]).delete()  # only the two slots of one item are left

    slots = run_at_once(THREADS, lambda i: review_queue.review_claim(item=items[0], user=reviewer))

    assert {slot.pk for slot in slots} == {slots[0].pk}
    assert ReviewSlot.objects.filter(item=items[0], reviewer=reviewer).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_reviewer_submitting_the_same_review_twice_at_once_is_counted_once():
    project, author, reviewers = _project_with_reviewers("race-twice", 1)
    submitted_pair(project, author)
    reviewer = reviewers[0]
    slot = review_queue.review_claim_next(project=project, user=reviewer)

    def submit(_index: int) -> str:
        try:
            review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=all_pass(project))
        except (InvalidState, StaleEdit) as error:
            return type(error).__name__
        return "ok"

    outcomes = run_at_once(6, submit)

    assert outcomes.count("ok") == 1
    assert Judgment.objects.filter(slot=slot).count() == len(project.review_criteria)
    assert slot.item.events.filter(action="accepted").count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_finishing_a_round_at_once_decide_the_item_exactly_once():
    project, author, reviewers = _project_with_reviewers("race-decide", 2, reviewers_per_item=2)
    _, items = submitted_pair(project, author)
    item = items[0]
    slots = [review_queue.review_claim(item=item, user=reviewer) for reviewer in reviewers]

    run_at_once(
        2,
        lambda i: review_judging.review_submit(
            slot=slots[i], user=reviewers[i], version=slots[i].version, judgments=all_pass(project)
        ),
    )

    item.refresh_from_db()
    assert item.status == "accepted"
    assert item.events.filter(action="accepted").count() == 1
    assert Judgment.objects.filter(item=item).count() == 2 * len(project.review_criteria)


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_finishing_a_round_at_once_one_flagging_send_the_item_back_exactly_once():
    project, author, reviewers = _project_with_reviewers("race-flag", 2, reviewers_per_item=2)
    _, items = submitted_pair(project, author)
    item = items[0]
    slots = [review_queue.review_claim(item=item, user=reviewer) for reviewer in reviewers]
    verdicts = [all_pass(project), {**all_pass(project), "fluency": {"verdict": "flag", "comment": "Typo"}}]

    run_at_once(
        2,
        lambda i: review_judging.review_submit(
            slot=slots[i], user=reviewers[i], version=slots[i].version, judgments=verdicts[i]
        ),
    )

    item.refresh_from_db()
    assert item.status == "needs_rewrite"
    assert item.events.filter(action="needs_rewrite").count() == 1
    assert not item.events.filter(action="accepted").exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("flagging", [False, True])
def test_two_reviewers_judging_through_the_api_at_once_decide_the_item_exactly_once(flagging):
    # The API reads the slot with its item locked in the access query itself (access.get_slot_for_judging).
    project, author, reviewers = _project_with_reviewers(f"race-api-{int(flagging)}", 2, reviewers_per_item=2)
    _, items = submitted_pair(project, author)
    item = items[0]
    slots = [review_queue.review_claim(item=item, user=reviewer) for reviewer in reviewers]
    flagged = {**all_pass(project), "fluency": {"verdict": "flag", "comment": "Typo"}}
    verdicts = [all_pass(project), flagged if flagging else all_pass(project)]

    def judge(i: int) -> int:
        body = {"version": slots[i].version, "judgments": verdicts[i]}
        url = f"/api/projects/{project.slug}/review/slots/{slots[i].pk}/"
        return api_as(reviewers[i]).post(url, body, format="json").status_code

    assert run_at_once(2, judge) == [200, 200]

    item.refresh_from_db()
    decision = "needs_rewrite" if flagging else "accepted"
    assert item.status == decision
    assert item.events.filter(action=decision).count() == 1
    assert item.events.filter(action__in=["accepted", "needs_rewrite"]).count() == 1
    assert Judgment.objects.filter(item=item).count() == 2 * len(project.review_criteria)


@pytest.mark.django_db(transaction=True)
def test_reviews_saved_while_an_agreement_report_reads_are_in_none_of_its_criteria(monkeypatch):
    """The report reads the reviewers' names, then streams the judgments, looking up each chunk's strata as it
    goes: all in one snapshot, so reviews saved between those reads (by another connection) are in none of them
    rather than in some."""
    from review import reports

    project, author, reviewers = _project_with_reviewers("race-report", 2, reviewers_per_item=2)
    _, early = submitted_pair(project, author)
    _, late = submitted_pair(project, author)

    def review(item, reviewer):
        slot = review_queue.review_claim(item=item, user=reviewer)
        review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=all_pass(project))

    for item in early:
        for reviewer in reviewers:
            review(item, reviewer)
    before = Judgment.objects.filter(project=project).count()
    read_strata = reports._revision_strata

    def reviews_saved_meanwhile(*args, **kwargs):
        strata = read_strata(*args, **kwargs)
        run_at_once(1, lambda _: [review(item, reviewer) for item in late for reviewer in reviewers])
        return strata

    monkeypatch.setattr(reports, "_revision_strata", reviews_saved_meanwhile)
    report, _ = reports.agreement_report_request(project=project, enqueue=False)
    done = reports.agreement_report_compute(report_id=report.pk, bootstrap=50)

    assert done is not None and done.status == "done", done and done.error
    criteria = len(project.review_criteria)
    assert Judgment.objects.filter(project=project).count() == before * 2  # the late reviews were saved
    judged = {key: scope["summary"]["n_judgments"] for key, scope in done.result["scopes"].items()}
    assert [judged[f"review:{c['key']}"] for c in project.review_criteria] == [before // criteria] * criteria
    assert done.judgment_watermark < Judgment.objects.filter(project=project).order_by("-id").first().pk
