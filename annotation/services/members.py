"""Members: who holds which roles in a project; a project keeps at least one active coordinator."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import transaction

from annotation.models import Membership, Project, Role
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState

LAST_COORDINATOR = "A project keeps at least one active coordinator: make someone else coordinator first."


def coordinator_is_last(*, project: Project, user: User) -> bool:
    """Whether `user` is the project's only coordinator who counts (an active membership of an active account).

    Call it inside the transaction of the change: it locks the coordinators' memberships until the end, so two
    coordinators stepping down at once cannot both succeed.
    """
    coordinators = list(
        Membership.objects.select_for_update(of=("self",))
        .filter(project=project, is_coordinator=True, user__is_active=True)
        .values_list("user_id", flat=True)
    )
    return coordinators == [user.pk]


def membership_set(*, project: Project, user: User, roles: Iterable[str], actor: User | None = None) -> Membership:
    roles = set(roles)
    unknown = roles - set(Role.values)
    if unknown:
        raise InvalidInput(f"Unknown role(s): {', '.join(sorted(unknown))}", field="roles")
    if not roles:
        raise InvalidInput("A member needs at least one role; remove the member instead.", field="roles")
    with transaction.atomic():
        # all_objects: a deactivated member keeps their row (and stays deactivated) when their roles change.
        existing = Membership.all_objects.select_for_update().filter(project=project, user=user).first()
        before = existing.roles if existing is not None else []
        if (
            Role.COORDINATOR in before
            and Role.COORDINATOR not in roles
            and coordinator_is_last(project=project, user=user)
        ):
            raise InvalidState(LAST_COORDINATOR, field="roles")
        membership, created = Membership.all_objects.update_or_create(
            project=project,
            user=user,
            defaults={f"is_{role}": role in roles for role in Role.values},
        )
        if created or set(before) != roles:
            action = Action.MEMBER_ADDED if created else Action.MEMBER_ROLES
            after = membership.roles
            audit.record(actor, action, membership, label=user.get_username(), before=before, after=after)
    return membership


def membership_remove(*, project: Project, user: User, actor: User | None = None) -> None:
    with transaction.atomic():
        if coordinator_is_last(project=project, user=user):
            raise InvalidState(LAST_COORDINATOR, field="user")
        membership = Membership.all_objects.filter(project=project, user=user).first()
        if membership is None:
            return
        audit.record(actor, Action.MEMBER_REMOVED, membership, label=user.get_username(), before=membership.roles)
        membership.delete()
