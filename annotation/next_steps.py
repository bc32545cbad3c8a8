"""What each member does next on a project's page: one step per role they hold, with the counts behind it.

Read-only: every count is one query, and the page of every project kind shows the same steps block
(templates/annotation/_next_steps.html), so a person with several roles sees each of their next actions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q
from django.urls import reverse

from annotation.models import Membership, PagePair, Project, QAItem
from multichoice import entities as entity_services
from multichoice import services as trivia_services
from multichoice.models import TriviaItem
from review import queue as review_queue
from review.models import Judgment, ReviewSlot


@dataclass(frozen=True)
class Fact:
    count: int
    label: str


@dataclass(frozen=True)
class Rewrite:
    """An item of the member's that a reviewer sent back, with what the reviewers said."""

    url: str
    question: str
    lang: str
    reasons: list[str]


@dataclass(frozen=True)
class Step:
    key: str  # the button's id
    role: str  # the role this step is for, as shown
    title: str
    url: str
    post: bool = False  # a queue claim (POST with CSRF) rather than a link
    facts: list[Fact] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)


def _n(count: int, singular: str, plural: str | None = None) -> Fact:
    """A count with its label; `plural` only where the label changes with the number."""
    return Fact(count, singular if count == 1 or plural is None else plural)


def _url(name: str, project: Project, *args: object) -> str:
    return reverse(name, args=[project.slug, *args])


def _rewrites(
    project: Project, user: AbstractBaseUser, url: Callable[[QAItem], str], lang: str, limit: int = 10
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
    return count, [Rewrite(url(item), item.question, lang, reasons[item.pk]) for item in items]


def _held_slots(project: Project, user: AbstractBaseUser) -> int:
    return ReviewSlot.objects.filter(
        item__project=project, item__deleted_at__isnull=True, reviewer=user, status=ReviewSlot.Status.CLAIMED
    ).count()


def _wikipedia_steps(project: Project, membership: Membership, user: AbstractBaseUser) -> Iterable[Step]:
    if membership.is_annotator:
        waiting = PagePair.objects.filter(project=project).available().count()
        mine = PagePair.objects.filter(
            project=project, assignee=user, status__in=[PagePair.Status.CLAIMED, PagePair.Status.ANNOTATING]
        ).count()
        sent_back, rewrites = _rewrites(
            project, user, lambda item: _url("item_rewrite", project, item.pk), project.standard_language
        )
        yield Step(
            "next-pair",
            "Annotator",
            "Next pair",
            _url("queue_next", project),
            post=True,
            facts=[
                _n(waiting, "pair waiting", "pairs waiting"),
                _n(mine, "of yours in progress"),
                _n(sent_back, "item of yours needs a rewrite", "items of yours need a rewrite"),
            ],
            rewrites=rewrites,
        )
    if membership.is_reviewer:
        yield Step(
            "review-next",
            "Reviewer",
            "Review next",
            _url("review_next", project),
            post=True,
            facts=[
                _n(review_queue.review_waiting_count(project=project, user=user), "item waiting for you",
                   "items waiting for you"),
                _n(_held_slots(project, user), "held by you"),
            ],
        )  # fmt: skip
    if membership.is_coordinator:
        in_review = QAItem.objects.alive().filter(project=project, status=QAItem.Status.SUBMITTED).count()
        yield Step(
            "open-dashboard",
            "Coordinator",
            "Open the dashboard",
            _url("dashboard", project),
            facts=[_n(in_review, "item in review", "items in review")],
        )


def _validation_steps(project: Project, membership: Membership, user: AbstractBaseUser) -> Iterable[Step]:
    if membership.is_reviewer:
        held = _held_slots(project, user)
        left = review_queue.review_waiting_count(project=project, user=user) + held
        yield Step(
            "validation-next",
            "Validator",
            "Validate next",
            _url("validation_next", project),
            post=True,
            facts=[_n(left, "item left", "items left"), _n(held, "held by you")],
        )
    if membership.is_coordinator:
        items = QAItem.objects.alive().filter(project=project)
        counts = items.aggregate(
            total=_count(), waiting=_count(status=QAItem.Status.SUBMITTED), done=_count(status=QAItem.Status.ACCEPTED)
        )
        if not counts["total"]:
            yield Step("validation-import-step", "Coordinator", "Import items", _url("validation_import", project))
        else:
            yield Step(
                "validation-release-step",
                "Coordinator",
                "Releases",
                _url("release_list", project),
                facts=[_n(counts["done"], "validated"), _n(counts["waiting"], "waiting for validators")],
            )


def _trivia_steps(project: Project, membership: Membership, user: AbstractBaseUser) -> Iterable[Step]:
    if membership.is_annotator:
        source = trivia_services.trivia_settings(project).source_language
        sent_back, rewrites = _rewrites(project, user, lambda item: _url("trivia_item", project, item.pk), source)
        in_review = QAItem.objects.alive().filter(project=project, author=user, status=QAItem.Status.SUBMITTED).count()
        yield Step(
            "trivia-write",
            "Writer",
            "Write an item",
            _url("trivia_item_new", project),
            facts=[
                _n(in_review, "of yours in review"),
                _n(sent_back, "of yours sent back"),
            ],
            rewrites=rewrites,
        )
        translating = TriviaItem.objects.filter(
            project=project, translator=user, translation_status=TriviaItem.Translation.CLAIMED
        ).count()
        yield Step(
            "trivia-translate-next",
            "Translator",
            "Translate next",
            _url("trivia_translate_next", project),
            post=True,
            facts=[
                _n(trivia_services.translation_waiting_count(project=project, user=user),
                   "item waiting for a translator", "items waiting for a translator"),
                _n(translating, "held by you"),
            ],
        )  # fmt: skip
    if membership.is_reviewer:
        yield Step(
            "trivia-review-next",
            "Reviewer",
            "Review next",
            _url("trivia_review_next", project),
            post=True,
            facts=[
                _n(review_queue.review_waiting_count(project=project, user=user), "item waiting for you",
                   "items waiting for you"),
            ],
        )  # fmt: skip
    if membership.is_coordinator:
        flagged = TriviaItem.objects.filter(
            project=project, item__deleted_at__isnull=True, translation_status=TriviaItem.Translation.FLAGGED
        ).count()
        yield Step(
            "trivia-problems-step",
            "Coordinator",
            "Resolve tagged translations",
            _url("trivia_problems", project),
            facts=[_n(flagged, "translation tagged", "translations tagged")],
        )


def _entity_steps(project: Project, membership: Membership, user: AbstractBaseUser) -> Iterable[Step]:
    if membership.is_reviewer:
        yield Step(
            "entity-verify-next",
            "Verifier",
            "Verify next",
            _url("entity_verify_next", project),
            post=True,
            facts=[
                _n(review_queue.review_waiting_count(project=project, user=user), "question waiting for you",
                   "questions waiting for you"),
                _n(_held_slots(project, user), "held by you"),
            ],
        )  # fmt: skip
    if membership.is_coordinator:
        entities = project.entities.count()  # type: ignore[attr-defined]
        counts = entity_services.question_counts(project) if entities else {}
        if not entities:
            yield Step("entity-import-step", "Coordinator", "Import entities", _url("entity_home", project) + "#import")
        elif not any(counts.values()):
            yield Step(
                "entity-generate-step",
                "Coordinator",
                "Generate questions",
                _url("entity_generate", project),
                post=True,
                facts=[_n(entities, "entity", "entities")],
            )
        else:
            yield Step(
                "entity-release-step",
                "Coordinator",
                "Releases",
                _url("release_list", project),
                facts=[
                    _n(counts["accepted"], "verified"),
                    _n(counts["generated"], "question waiting for verifiers", "questions waiting for verifiers"),
                    _n(entities, "entity", "entities"),
                ],
            )


def _count(**conditions: object) -> Count:
    return Count("id", filter=Q(**conditions)) if conditions else Count("id")


KIND_STEPS: dict[str, Callable[[Project, Membership, AbstractBaseUser], Iterable[Step]]] = {
    Project.Kind.WIKIPEDIA_QA: _wikipedia_steps,
    Project.Kind.VALIDATION: _validation_steps,
    Project.Kind.TRIVIA: _trivia_steps,
    Project.Kind.ENTITY_QA: _entity_steps,
}


def next_steps(*, project: Project, membership: Membership, user: AbstractBaseUser) -> list[Step]:
    """The member's next actions on this project, one per role (in the order: do, review, coordinate)."""
    return list(KIND_STEPS.get(project.kind, _wikipedia_steps)(project, membership, user))
