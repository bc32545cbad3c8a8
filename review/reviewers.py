"""Reviewers of a project and the languages they read."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation.languages import UnknownLanguage, get_language
from annotation.models import Membership, Project
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState, StaleEdit
from review.models import ReviewerLanguages


def reader_languages(membership: Membership) -> list[str]:
    """The languages a member reads for review; by default just the project's standard language."""
    row = getattr(membership, "reader_languages", None) if membership.pk else None
    if row is None:
        return [membership.project.standard_language]
    return list(row.languages)


def reviewers_eligible(project: Project) -> list[Membership]:
    """Members who may be routed items: the reviewer role, and the project's standard language read."""
    members = Membership.objects.filter(project=project, is_reviewer=True).select_related("user", "reader_languages")
    return [m for m in members if project.standard_language in reader_languages(m)]


def reviewer_require(project: Project, user: User, membership: Membership | None = None) -> None:
    """`membership`: the one the request's access check loaded, if any (saves reading it again)."""
    if user.is_superuser:
        return
    if membership is None or membership.user_id != user.pk or membership.pk is None:
        membership = Membership.objects.filter(project=project, user=user).select_related("reader_languages").first()
    if membership is None or not membership.is_reviewer:
        raise InvalidState("Only reviewers of the project review items.", field="reviewer")
    membership.project = project
    if project.standard_language not in reader_languages(membership):
        raise InvalidState(
            f"Your reviewer languages do not include {project.standard.name} ({project.standard_language}), "
            "the language items are reviewed in; ask a coordinator.",
            field="reviewer",
        )


def reviewer_languages_set(
    *,
    project: Project,
    user: User,
    languages: Iterable[str],
    version: int | None = None,
    actor: User | None = None,
) -> ReviewerLanguages:
    """Say which languages a member reads (ISO 639-3 codes); `version` guards against a concurrent change."""
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is None:
        raise InvalidInput(f"{user} is not a member of this project.", field="username")
    codes: list[str] = []
    for index, code in enumerate(languages):
        try:
            codes.append(get_language(str(code).strip()).code)
        except UnknownLanguage as error:
            raise InvalidInput(f"languages[{index}]: {error}", field=f"languages[{index}]") from None
    codes = list(dict.fromkeys(codes))
    now = timezone.now()
    row = ReviewerLanguages.objects.filter(membership=membership).first()
    if row is None:
        if version not in (None, 0):
            raise StaleEdit("These languages were never saved; reload the page.", current=None)
        try:
            with transaction.atomic():
                created = ReviewerLanguages.objects.create(membership=membership, languages=codes, updated_at=now)
                audit.record(
                    actor, Action.MEMBER_LANGUAGES, membership, label=user.get_username(), before=[], after=codes
                )
                return created
        except IntegrityError:
            row = ReviewerLanguages.objects.get(membership=membership)
            raise StaleEdit("Someone else saved these languages just now; reload them.", current=row) from None
    query = ReviewerLanguages.objects.filter(pk=row.pk)
    if version is not None:
        query = query.filter(version=version)
    with transaction.atomic():
        if not query.update(languages=codes, version=F("version") + 1, updated_at=now):
            row.refresh_from_db()
            raise StaleEdit(
                f"These languages were changed by someone else (now version {row.version}); reload them.", current=row
            )
        if row.languages != codes:
            audit.record(
                actor, Action.MEMBER_LANGUAGES, membership, label=user.get_username(), before=row.languages, after=codes
            )
    row.refresh_from_db()
    return row


def review_slots_release(*, project: Project, user: User) -> int:
    """Give back the review slots `user` has claimed in `project` (deactivated there): open again, for anyone."""
    from review.models import ReviewSlot

    return ReviewSlot.objects.filter(project=project, reviewer=user, status=ReviewSlot.Status.CLAIMED).update(
        status=ReviewSlot.Status.OPEN, reviewer=None, claimed_at=None, claim_expires_at=None, version=F("version") + 1
    )
