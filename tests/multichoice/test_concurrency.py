"""Races against a real PostgreSQL: many verifiers, reviewers and translators asking for work at once.

Entity questions and trivia reviews are handed out by the review app's queue (FOR UPDATE SKIP LOCKED,
then a conditional update, claims that expire); translations by the translators' queue, claimed the same way.
"""

from __future__ import annotations

from collections import Counter

import pytest

from annotation.services.members import membership_set
from common.errors import InvalidState
from multichoice import entities
from multichoice.services.items import trivia_item_create
from multichoice.services.projects import trivia_project_create
from multichoice.services.reviews import trivia_review, trivia_review_next
from multichoice.services.translation import translation_claim_next
from review.models import ReviewSlot
from tests import factories
from tests.annotation.test_concurrency import THREADS, run_at_once
from tests.multichoice.conftest import CATEGORIES, item_values
from tests.multichoice.test_entities import ATTRIBUTES, CSV


def _entity_project(slug: str, verifiers: int):
    coordinator = factories.user(f"{slug}-coord")
    project = entities.entity_project_create(
        name=slug, slug=slug, language="eng", attributes=ATTRIBUTES, seed=3, created_by=coordinator
    )
    people = [factories.user(f"{slug}-v{i}") for i in range(verifiers)]
    for person in people:
        membership_set(project=project, user=person, roles={"reviewer"})
    entities.entities_import(project=project, data=CSV.encode(), name="companies.csv")
    entities.questions_generate(project=project)  # 8 entities x 3 attributes x 2 directions = 48
    return project, people


@pytest.mark.django_db(transaction=True)
def test_twenty_verifiers_asking_at_once_never_get_the_same_question():
    project, verifiers = _entity_project("race-ent", THREADS)

    questions = run_at_once(THREADS, lambda i: entities.verification_next(project=project, user=verifiers[i]))

    handed_out = [q.item_id for q in questions]
    assert len(set(handed_out)) == THREADS, Counter(handed_out).most_common(3)
    holders = dict(
        ReviewSlot.objects.filter(item_id__in=handed_out, status=ReviewSlot.Status.CLAIMED).values_list(
            "item_id", "reviewer_id"
        )
    )
    assert all(holders[q.item_id] == verifiers[i].pk for i, q in enumerate(questions))


@pytest.mark.django_db(transaction=True)
def test_when_questions_run_out_the_rest_get_none_and_no_question_is_shared():
    project, verifiers = _entity_project("scarce-ent", THREADS)
    keep = list(ReviewSlot.objects.filter(item__project=project).order_by("id").values_list("id", flat=True)[:5])
    ReviewSlot.objects.filter(item__project=project).exclude(pk__in=keep).update(status=ReviewSlot.Status.CANCELLED)

    questions = run_at_once(THREADS, lambda i: entities.verification_next(project=project, user=verifiers[i]))

    handed_out = [q.item_id for q in questions if q is not None]
    assert len(handed_out) == 5 and len(set(handed_out)) == 5


@pytest.mark.django_db
def test_an_expired_verification_claim_goes_to_the_next_verifier_and_the_first_is_refused():
    project, (first, second) = _entity_project("expiry-ent", 2)
    question = entities.verification_next(project=project, user=first)
    ReviewSlot.objects.filter(item_id=question.item_id, reviewer=first).update(
        claim_expires_at=question.item.created_at  # long ago
    )
    # open slots go first; leave only the expired claim in the queue
    ReviewSlot.objects.filter(item__project=project, status=ReviewSlot.Status.OPEN).update(
        status=ReviewSlot.Status.CANCELLED
    )

    again = entities.verification_next(project=project, user=second)

    assert again.item_id == question.item_id
    with pytest.raises(InvalidState):
        entities.question_verify(question=question, user=first, version=question.version, decision="accept")
    accepted = entities.question_verify(question=again, user=second, version=again.version, decision="accept")
    assert accepted.status == "accepted"


@pytest.mark.django_db(transaction=True)
def test_reviewers_and_translators_asking_at_once_never_share_a_trivia_item():
    coordinator = factories.user("t-coord")
    author = factories.user("t-author")
    project = trivia_project_create(
        name="Race trivia",
        slug="race-trivia",
        source_language="eus",
        target_language="eng",
        categories=CATEGORIES,
        created_by=coordinator,
    )
    membership_set(project=project, user=author, roles={"annotator"})
    people = [factories.user(f"t{i}") for i in range(THREADS)]
    for person in people:
        membership_set(project=project, user=person, roles={"annotator", "reviewer"})
    for index in range(THREADS + 5):
        trivia_item_create(project=project, user=author, **item_values(question=f"Q{index}?"))

    reviews = run_at_once(THREADS, lambda i: trivia_review_next(project=project, user=people[i]))
    assert len({item.item_id for item in reviews}) == THREADS

    criteria = {c["key"]: True for c in project.review_criteria}
    for person, item in zip(people, reviews, strict=True):
        trivia_review(item=item, user=person, criteria=criteria)
    translations = run_at_once(THREADS, lambda i: translation_claim_next(project=project, user=people[i]))

    handed_out = [item.item_id for item in translations if item is not None]
    assert len(handed_out) == len(set(handed_out)) == THREADS, Counter(handed_out).most_common(3)
