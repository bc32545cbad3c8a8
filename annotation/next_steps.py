"""What each member does next on a project's page: one step per role they hold, with the counts behind it.

Read-only: every count is one query, and the page of every project kind shows the same steps block
(templates/annotation/_next_steps.html), so a person with several roles sees each of their next actions.
The steps of each kind are its own (`common.kinds.ProjectKind.next_steps`: review/next_steps.py for Wikipedia
QA, validation/next_steps.py, multichoice/next_steps.py); the shapes they build are these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db.models import Count, Q
from django.urls import reverse

from annotation.models import Membership, Project, QAItem
from common import kinds


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
class Skipped:
    """A pair the member skipped, with where to take the skip back (POST)."""

    title: str
    lang: str
    undo_url: str


@dataclass(frozen=True)
class Step:
    key: str  # the button's id
    role: str  # the role this step is for, as shown
    title: str
    url: str
    post: bool = False  # a queue claim (POST with CSRF) rather than a link
    facts: list[Fact] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    quiet: bool = False  # nothing waits for this person: the button is not the page's big call to action


def n(count: int, singular: str, plural: str | None = None) -> Fact:
    """A count with its label; `plural` only where the label changes with the number."""
    return Fact(count, singular if count == 1 or plural is None else plural)


def url(name: str, project: Project, *args: object) -> str:
    return reverse(name, args=[project.slug, *args])


def count(**conditions: object) -> Count:
    return Count("id", filter=Q(**conditions)) if conditions else Count("id")


def next_steps(*, project: Project, membership: Membership, user: User) -> list[Step]:
    """The member's next actions on this project, one per role (in the order: do, review, coordinate)."""
    steps = kinds.of(project).next_steps
    return list(steps(project=project, membership=membership, user=user)) if steps is not None else []


@dataclass(frozen=True)
class SentBack:
    project: Project
    rewrites: list[Rewrite]
    count: int


def sent_back_everywhere(*, user: User) -> list[SentBack]:
    """Every project where a reviewer sent items of this person's back, with those items (each kind's own links
    and reasons, from its next steps). Asked only of the projects that have such items: none, no further query."""
    waiting = QAItem.objects.alive().filter(author=user, status=QAItem.Status.NEEDS_REWRITE).values("project_id")
    memberships = (
        Membership.objects.filter(user=user, deactivated_at__isnull=True, project__in=waiting)
        .select_related("project")
        .order_by("project__name")
    )
    found: list[SentBack] = []
    for membership in memberships:
        for step in next_steps(project=membership.project, membership=membership, user=user):
            if step.rewrites:
                count = next((f.count for f in step.facts if "rewrite" in f.label), len(step.rewrites))
                found.append(SentBack(membership.project, step.rewrites, count))
    return found
