"""The next steps of a validation project's members (`common.kinds`: the validation kind's `next_steps`)."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User

from annotation.models import Membership, Project, QAItem
from annotation.next_steps import Step, count, n, url
from review import queue as review_queue
from review.next_steps import held_slots


def validation_steps(*, project: Project, membership: Membership, user: User) -> Iterable[Step]:
    if membership.is_reviewer:
        held = held_slots(project, user)
        left = review_queue.review_waiting_count(project=project, user=user) + held
        yield Step(
            "validation-next",
            "Validator",
            "Validate next",
            url("validation_next", project),
            post=True,
            facts=[n(left, "item left", "items left"), n(held, "held by you")],
        )
    if membership.is_coordinator:
        items = QAItem.objects.alive().filter(project=project)
        counts = items.aggregate(
            total=count(), waiting=count(status=QAItem.Status.SUBMITTED), done=count(status=QAItem.Status.ACCEPTED)
        )
        if not counts["total"]:
            yield Step("validation-import-step", "Coordinator", "Import items", url("validation_import", project))
        else:
            yield Step(
                "validation-release-step",
                "Coordinator",
                "Releases",
                url("release_list", project),
                facts=[n(counts["done"], "validated"), n(counts["waiting"], "waiting for validators")],
            )
