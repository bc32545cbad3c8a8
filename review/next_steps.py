"""The next steps of a Wikipedia QA project's members, and the review counts every kind's steps share."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.contrib.auth.models import User

from annotation.models import Membership, PagePair, Project, QAItem
from annotation.next_steps import Rewrite, Step, n, url
from review import queue as review_queue
from review.models import Judgment, ReviewSlot


def sent_back_items(
    project: Project, user: User, item_url: Callable[[QAItem], str], lang: str, limit: int = 10
) -> tuple[int, list[Rewrite]]:
    """How many of the member's items need a rewrite, and the oldest `limit` of them, each with the flags
    (criterion: comment) of its latest reviewed round.

    Two queries (three past `limit`): the items, then every flag of theirs, newest round first.
    """
    mine = QAItem.objects.alive().filter(project=project, author=user, status=QAItem.Status.NEEDS_REWRITE)
    items = list(mine.only("id", "question", "project_id", "pair_id").order_by("updated_at", "id")[:limit])
    if not items:
        return 0, []
    count = len(items) if len(items) < limit else mine.count()
    labels = {c.get("key"): c.get("label") or c.get("key") for c in project.review_criteria if isinstance(c, dict)}
    latest: dict[int, int] = {}
    reasons: dict[int, list[str]] = {item.pk: [] for item in items}
    flags = (
        Judgment.objects.filter(item__in=items, verdict=Judgment.Verdict.FLAG)
        .order_by("item_id", "-revision__number", "id")
        .values_list("item_id", "revision__number", "criterion", "comment")
    )
    for item_id, number, criterion, comment in flags:
        if latest.setdefault(item_id, number) != number:
            continue  # an older round's flag: already rewritten
        reason = f"{labels.get(criterion, criterion)}: {comment}" if comment else str(labels.get(criterion, criterion))
        if reason not in reasons[item_id]:
            reasons[item_id].append(reason)
    return count, [Rewrite(item_url(item), item.question, lang, reasons[item.pk]) for item in items]


def held_slots(project: Project, user: User) -> int:
    return ReviewSlot.objects.filter(
        item__project=project, item__deleted_at__isnull=True, reviewer=user, status=ReviewSlot.Status.CLAIMED
    ).count()


def wikipedia_steps(*, project: Project, membership: Membership, user: User) -> Iterable[Step]:
    if membership.is_annotator:
        waiting = PagePair.objects.filter(project=project).available().count()
        mine = PagePair.objects.filter(
            project=project, assignee=user, status__in=[PagePair.Status.CLAIMED, PagePair.Status.ANNOTATING]
        ).count()
        sent_back, rewrites = sent_back_items(
            project, user, lambda item: url("item_rewrite", project, item.pk), project.standard_language
        )
        yield Step(
            "next-pair",
            "Annotator",
            "Next pair",
            url("queue_next", project),
            post=True,
            facts=[
                n(waiting, "pair waiting", "pairs waiting"),
                n(mine, "of yours in progress"),
                n(sent_back, "item of yours needs a rewrite", "items of yours need a rewrite"),
            ],
            rewrites=rewrites,
        )
    if membership.is_reviewer:
        yield Step(
            "review-next",
            "Reviewer",
            "Review next",
            url("review_next", project),
            post=True,
            facts=[
                n(review_queue.review_waiting_count(project=project, user=user), "item waiting for you",
                   "items waiting for you"),
                n(held_slots(project, user), "held by you"),
            ],
        )  # fmt: skip
    if membership.is_coordinator:
        in_review = QAItem.objects.alive().filter(project=project, status=QAItem.Status.SUBMITTED).count()
        yield Step(
            "open-dashboard",
            "Coordinator",
            "Open the dashboard",
            url("dashboard", project),
            facts=[n(in_review, "item in review", "items in review")],
        )
