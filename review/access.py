"""Who may see and do what in review, per object type (same rule as annotation.access).

A non-member gets 404; a member without the role or ownership gets 403. Reviewers
see items of their projects only after submission; authors see their own items.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import Http404

from annotation.access import (
    AnyUser,
    ItemAccess,
    ProjectAccess,
    RoleOption,
    access_of_row,
    get_pair_for_user,
    member_row,
    project_access,
    roles_of,
)
from annotation.models import Membership, PagePair, QAItem, Role
from review.judging import slots_judged
from review.models import ReviewSlot, SlotQuerySet
from review.queue import slots_held

REVIEWING = (Role.REVIEWER, Role.COORDINATOR)


def _item_access(user: AnyUser, slug: str, item_id: int) -> ItemAccess:
    access = project_access(user, slug)
    project = access.project
    item = QAItem.objects.alive().select_related("pair", "author").filter(project=project, pk=item_id).first()
    if item is None:
        raise Http404("No such QA item in this project.")
    item.project = project
    item.pair.project = project
    return ItemAccess(project, access.membership, item)


def _item(user: AnyUser, slug: str, item_id: int) -> tuple[QAItem, Membership]:
    access = _item_access(user, slug, item_id)
    return access.item, access.membership


def get_item_for_reviewer(user: AnyUser, slug: str, item_id: int, *, role: RoleOption = REVIEWING) -> QAItem:
    """An item a reviewer (or coordinator) may look at: submitted at least once, never a draft. `role` narrows
    who may act (claiming and rewriting need the reviewer role itself)."""
    item, membership = _item(user, slug, item_id)
    if not any(membership.has_role(each) for each in roles_of(role)):
        names = " or ".join(each.label.lower() for each in roles_of(role))
        raise PermissionDenied(f"This needs the {names} role in the project.")
    if item.status == QAItem.Status.DRAFT and not membership.is_coordinator:
        raise PermissionDenied("This item has not been submitted for review yet.")
    return item


def get_item_for_coordinator(user: AnyUser, slug: str, item_id: int) -> QAItem:
    item, membership = _item(user, slug, item_id)
    if not membership.is_coordinator:
        raise PermissionDenied("This needs the coordinator role in the project.")
    return item


def author_access(user: AnyUser, slug: str, item_id: int) -> ItemAccess:
    """The author's own item (for rewriting and resubmitting)."""
    access = _item_access(user, slug, item_id)
    if access.item.author_id != user.pk:
        raise PermissionDenied("Only the item's author can do this.")
    if not access.membership.is_annotator:
        raise PermissionDenied("This needs the annotator role in the project.")
    return access


def get_item_for_author(user: AnyUser, slug: str, item_id: int) -> QAItem:
    return author_access(user, slug, item_id).item


def reader_access(user: AnyUser, slug: str, item_id: int) -> ItemAccess:
    """History and verification: the author, coordinators, and reviewers once the item is submitted."""
    access = _item_access(user, slug, item_id)
    item, membership = access.item, access.membership
    if item.author_id == user.pk or membership.is_coordinator:
        return access
    if membership.is_reviewer and item.status != QAItem.Status.DRAFT:
        return access
    raise PermissionDenied("This item belongs to someone else.")


def get_item_for_reader(user: AnyUser, slug: str, item_id: int) -> QAItem:
    return reader_access(user, slug, item_id).item


def _slots() -> SlotQuerySet:
    """A slot with all its review shows; a deleted item has no review."""
    return ReviewSlot.objects.select_related("item", "item__pair", "item__author", "revision", "reviewer").filter(
        item__deleted_at__isnull=True
    )


def get_slot_for_reviewer(user: AnyUser, slug: str, slot_id: int, *, held: bool = False) -> ReviewSlot:
    """A review slot held (or filled) by this reviewer; coordinators may look at any, unless `held`: then
    only the reviewer holding it may act on it (give it back, send its active time).

    A member's slot comes with its item, pair, author, revision, project and membership in one query."""
    return _slot_for(_slots(), user, slug, slot_id, held=held)


def get_slot_for_judging(user: AnyUser, slug: str, slot_id: int) -> ReviewSlot:
    """`get_slot_for_reviewer(held=True)` with its item locked, for `review_submit(locked=True)` in the same
    transaction (the caller's): the lock and what the judgment needs come in the access query itself."""
    return _slot_for(slots_judged(_slots()), user, slug, slot_id, held=True)


def _slot_for(slots: QuerySet[ReviewSlot], user: AnyUser, slug: str, slot_id: int, *, held: bool) -> ReviewSlot:
    slot = member_row(slots.filter(pk=slot_id), user, slug, project="item__project")
    if slot is not None:
        access = access_of_row(slot, slot.item.project, None)
    else:
        access = project_access(user, slug)
        slot = slots.filter(pk=slot_id, item__project=access.project).first()
        if slot is None:
            raise Http404("No such review in this project.")
    project, membership = access.project, access.membership
    if not (membership.is_reviewer or membership.is_coordinator):
        raise PermissionDenied("This needs the reviewer role in the project.")
    if slot.reviewer_id != user.pk and (held or not membership.is_coordinator):
        raise PermissionDenied("This review is held by someone else.")
    slot.item.project = project
    slot.item.pair.project = project
    return slot


def get_pair_for_labeller(user: AnyUser, slug: str, pair_id: int) -> PagePair:
    """Article labels and adjudication are the coordinators' work."""
    return get_pair_for_user(user, slug, pair_id, role=Role.COORDINATOR)


def reviewer_queue_access(user: AnyUser, slug: str) -> tuple[ProjectAccess, int | bool | None]:
    """`project_access(user, slug, role=Role.REVIEWER, related=("reader_languages",))` and the id of the slot the
    reviewer holds in the project: None when none, False when not asked (superusers, who go the general way)."""
    if user.is_authenticated and not user.is_superuser:
        # The membership with its project and languages, as `project_access(related=("reader_languages",))` reads
        # it, and the slot the reviewer holds in the project: one query, for the review queue's every claim.
        held = slots_held(OuterRef("project_id"), OuterRef("user_id")).values("id")[:1]
        memberships = Membership.objects.select_related("project", "reader_languages").annotate(
            held_slot=Subquery(held)
        )
        try:
            membership = memberships.get(project__slug=slug, project__deleted_at__isnull=True, user=user.pk)
        except Membership.DoesNotExist:
            membership = None
        if membership is not None and membership.is_reviewer:
            return ProjectAccess(membership.project, membership), membership.held_slot
    # A superuser, a non-member (404) or a member without the role (403): as `project_access` says.
    return project_access(user, slug, role=Role.REVIEWER, related=("reader_languages",)), False
