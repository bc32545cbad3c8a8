"""Reviewing trivia items: the review page's judgments per criterion, the next item, the strata."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from django.contrib.auth.models import User

from annotation import lifecycle
from annotation.models import Project
from common.errors import InvalidInput, InvalidState
from multichoice.models import TriviaItem
from multichoice.services.items import Status, trivia_items
from review import judging as review_judging
from review import queue as review_queue
from review.models import Judgment, ReviewSlot


def _criteria_keys(project: Project) -> list[str]:
    return [criterion["key"] for criterion in project.review_criteria]


def trivia_review(*, item: TriviaItem, user: User, criteria: Mapping[str, bool], comment: str = "") -> dict[str, Any]:
    """A reviewer's check against the project's criteria, recorded as the review app's judgments (a met
    criterion passes, an unmet one is flagged with the comment) on a review slot the reviewer holds or claims.

    When the round is complete, every criterion passed by every reviewer accepts the item (and opens it to
    translators); any flag sends it back to the author.
    """
    qa = item.item
    if qa.status != Status.SUBMITTED:
        raise InvalidState("This item is not in review.", field="status")
    lifecycle.require_may_review(user, qa)
    keys = _criteria_keys(item.project)
    unknown = sorted(set(criteria) - set(keys))
    if unknown:
        raise InvalidInput(f"criteria.{unknown[0]}: not a criterion of this project.", field=f"criteria.{unknown[0]}")
    checked = {key: bool(criteria.get(key, False)) for key in keys}
    accepted = all(checked.values())
    comment = (comment or "").strip()
    if not accepted and not comment:
        raise InvalidInput("comment: say what the author should change.", field="comment")
    slot = review_queue.review_claim(item=qa, user=user)
    judgments = {
        key: {"verdict": Judgment.Verdict.PASS if met else Judgment.Verdict.FLAG, "comment": "" if met else comment}
        for key, met in checked.items()
    }
    slot = review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)
    return trivia_reviews(item, slots=[slot.pk])[0]


def trivia_reviews(item: TriviaItem, *, slots: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """The item's reviews, one per filled review slot: revision number, criteria met, the comment."""
    judgments = Judgment.objects.filter(item_id=item.item_id).select_related("revision", "reviewer")
    if slots is not None:
        judgments = judgments.filter(slot_id__in=list(slots))
    reviews: dict[int, dict[str, Any]] = {}
    for judgment in judgments.order_by("slot_id", "id"):
        review = reviews.setdefault(
            judgment.slot_id,
            {
                "slot": judgment.slot_id,
                "revision": judgment.revision.number,
                "reviewer": judgment.reviewer,
                "criteria": {},
                "comment": "",
                "created_at": judgment.created_at,
            },
        )
        review["criteria"][judgment.criterion] = judgment.verdict == Judgment.Verdict.PASS
        if judgment.comment and not review["comment"]:
            review["comment"] = judgment.comment
    for review in reviews.values():
        review["accepted"] = all(review["criteria"].values())
    return list(reviews.values())


def trivia_review_next(*, project: Project, user: User) -> TriviaItem | None:
    """Claim the next review slot (the review app's queue: never an item the reviewer wrote or reviewed)."""
    slot = review_queue.review_claim_next(project=project, user=user)
    if slot is None:
        return None
    return trivia_items(project).get(item_id=slot.item_id)


def trivia_review_strata(project: Project, items: Collection[int]) -> dict[str, dict[int, str]]:
    """Agreement strata of trivia reviews (multichoice/kind.py): each of `items`' category, subset, difficulty."""
    strata: dict[str, dict[int, str]] = {"category": {}, "subset": {}, "difficulty": {}}
    for item_id, category, subset, difficulty in TriviaItem.objects.filter(
        project=project, item_id__in=items
    ).values_list("item_id", "category", "subset", "difficulty"):
        strata["category"][item_id] = category
        strata["subset"][item_id] = subset
        strata["difficulty"][item_id] = difficulty
    return strata


def trivia_may_review(item: TriviaItem, user: User) -> bool:
    """Whether the review form is offered: in review, not the author, and no judgment on this revision yet."""
    qa = item.item
    if qa.status != Status.SUBMITTED or not lifecycle.may_review(user, qa):
        return False
    latest = qa.revisions.order_by("-number").first()
    return (
        not ReviewSlot.objects.filter(item=qa, reviewer=user, revision=latest)
        .exclude(status__in=[ReviewSlot.Status.OPEN, ReviewSlot.Status.CLAIMED])
        .exists()
    )
