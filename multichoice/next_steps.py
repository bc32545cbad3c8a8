"""The next steps of trivia and entity-question projects' members (`common.kinds`: their `next_steps`)."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User

from annotation.models import Membership, Project, QAItem
from annotation.next_steps import Step, n, url
from multichoice import entities as entity_services
from multichoice.models import TriviaItem
from multichoice.services.projects import trivia_settings
from multichoice.services.translation import translation_waiting_count
from review import queue as review_queue
from review.next_steps import held_slots, sent_back_items


def trivia_steps(*, project: Project, membership: Membership, user: User) -> Iterable[Step]:
    if membership.is_annotator:
        source = trivia_settings(project).source_language
        sent_back, rewrites = sent_back_items(project, user, lambda item: url("trivia_item", project, item.pk), source)
        in_review = QAItem.objects.alive().filter(project=project, author=user, status=QAItem.Status.SUBMITTED).count()
        yield Step(
            "trivia-write",
            "Writer",
            "Write an item",
            url("trivia_item_new", project),
            facts=[
                n(in_review, "of yours in review"),
                n(sent_back, "of yours sent back"),
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
            url("trivia_translate_next", project),
            post=True,
            facts=[
                n(translation_waiting_count(project=project, user=user),
                   "item waiting for a translator", "items waiting for a translator"),
                n(translating, "held by you"),
            ],
        )  # fmt: skip
    if membership.is_reviewer:
        yield Step(
            "trivia-review-next",
            "Reviewer",
            "Review next",
            url("trivia_review_next", project),
            post=True,
            facts=[
                n(review_queue.review_waiting_count(project=project, user=user), "item waiting for you",
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
            url("trivia_problems", project),
            facts=[n(flagged, "translation tagged", "translations tagged")],
        )


def entity_steps(*, project: Project, membership: Membership, user: User) -> Iterable[Step]:
    if membership.is_reviewer:
        yield Step(
            "entity-verify-next",
            "Verifier",
            "Verify next",
            url("entity_verify_next", project),
            post=True,
            facts=[
                n(review_queue.review_waiting_count(project=project, user=user), "question waiting for you",
                   "questions waiting for you"),
                n(held_slots(project, user), "held by you"),
            ],
        )  # fmt: skip
    if membership.is_coordinator:
        entities = project.entities.count()
        counts = entity_services.question_counts(project, reuse=True) if entities else {}
        if not entities:
            yield Step("entity-import-step", "Coordinator", "Import entities", url("entity_home", project) + "#import")
        elif not any(counts.values()):
            yield Step(
                "entity-generate-step",
                "Coordinator",
                "Generate questions",
                url("entity_generate", project),
                post=True,
                facts=[n(entities, "entity", "entities")],
            )
        else:
            yield Step(
                "entity-release-step",
                "Coordinator",
                "Releases",
                url("release_list", project),
                facts=[
                    n(counts["accepted"], "verified"),
                    n(counts["generated"], "question waiting for verifiers", "questions waiting for verifiers"),
                    n(entities, "entity", "entities"),
                ],
            )
