"""The next steps of a Wikipedia QA project's members, and the review counts every kind's steps share."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.contrib.auth.models import User

from annotation.models import Membership, PagePair, PairSkip, Project, QAItem
from annotation.next_steps import Rewrite, Skipped, Step, n, url
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


def skipped_pairs(project: Project, user: User, limit: int = 10) -> list[Skipped]:
    """The pairs this member skipped and has not taken back, newest first (one query)."""
    rows = (
        PairSkip.objects.skipped_by(user.pk)
        .filter(pair__project=project, pair__deleted_at__isnull=True)
        .order_by("-created_at", "-id")
        .values_list("pair_id", "pair__local_title")[: limit * 2]
    )
    seen: dict[int, str] = {}
    for pair_id, title in rows:
        seen.setdefault(pair_id, title)
    return [
        Skipped(title, project.local_language, url("pair_skip_undo", project, pair_id))
        for pair_id, title in list(seen.items())[:limit]
    ]


def held_slots(project: Project, user: User) -> int:
    return ReviewSlot.objects.filter(
        project=project, item__deleted_at__isnull=True, reviewer=user, status=ReviewSlot.Status.CLAIMED
    ).count()


def wikipedia_steps(*, project: Project, membership: Membership, user: User) -> Iterable[Step]:
    if membership.is_annotator:
        waiting = PagePair.objects.filter(project=project).waiting_for(user.pk).count()
        mine = PagePair.objects.filter(
            project=project, assignee=user, status__in=[PagePair.Status.CLAIMED, PagePair.Status.ANNOTATING]
        ).count()
        sent_back, rewrites = sent_back_items(
            project, user, lambda item: url("item_rewrite", project, item.pk), project.standard_language
        )
        skipped = skipped_pairs(project, user)
        facts = [n(waiting, "pair waiting for you", "pairs waiting for you"), n(mine, "of yours in progress")]
        if skipped:
            facts.append(n(len(skipped), "skipped by you"))
        facts.append(n(sent_back, "item of yours needs a rewrite", "items of yours need a rewrite"))
        yield Step(
            "next-pair",
            "Annotator",
            "Next pair",
            url("queue_next", project),
            post=True,
            facts=facts,
            rewrites=rewrites,
            skipped=skipped,
            quiet=not waiting and not mine,
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
