"""Who may see and do what in review, per object type (same rule as annotation.access).

A non-member gets 404; a member without the role or ownership gets 403. Reviewers
see items of their projects only after submission; authors see their own items.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotation.access import AnyUser, get_pair_for_user, get_project_for_user, project_of_row, with_membership
from annotation.models import Membership, PagePair, QAItem, Role
from review.models import ReviewSlot


def _item(user: AnyUser, slug: str, item_id: int) -> tuple[QAItem, Membership]:
    project = get_project_for_user(user, slug)
    item = QAItem.objects.alive().select_related("pair", "author").filter(project=project, pk=item_id).first()
    if item is None:
        raise Http404("No such QA item in this project.")
    item.project = project
    item.pair.project = project
    return item, project.membership  # type: ignore[attr-defined]


def get_item_for_reviewer(user: AnyUser, slug: str, item_id: int) -> QAItem:
    """An item a reviewer (or coordinator) may look at: submitted at least once, never a draft."""
    item, membership = _item(user, slug, item_id)
    if not (membership.is_reviewer or membership.is_coordinator):
        raise PermissionDenied("This needs the reviewer role in the project.")
    if item.status == QAItem.Status.DRAFT and not membership.is_coordinator:
        raise PermissionDenied("This item has not been submitted for review yet.")
    return item


def require_role(item: QAItem, role: Role) -> None:
    """For actions (not views) on an item reached through a wider access function."""
    membership: Membership = item.project.membership  # type: ignore[attr-defined]
    if not membership.has_role(role):
        raise PermissionDenied(f"This needs the {role.label.lower()} role in the project.")


def get_item_for_coordinator(user: AnyUser, slug: str, item_id: int) -> QAItem:
    item, membership = _item(user, slug, item_id)
    if not membership.is_coordinator:
        raise PermissionDenied("This needs the coordinator role in the project.")
    return item


def get_item_for_author(user: AnyUser, slug: str, item_id: int) -> QAItem:
    """The author's own item (for rewriting and resubmitting)."""
    item, membership = _item(user, slug, item_id)
    if item.author_id != user.pk:
        raise PermissionDenied("Only the item's author can do this.")
    if not membership.is_annotator:
        raise PermissionDenied("This needs the annotator role in the project.")
    return item


def get_item_for_reader(user: AnyUser, slug: str, item_id: int) -> QAItem:
    """History and verification: the author, coordinators, and reviewers once the item is submitted."""
    item, membership = _item(user, slug, item_id)
    if item.author_id == user.pk or membership.is_coordinator:
        return item
    if membership.is_reviewer and item.status != QAItem.Status.DRAFT:
        return item
    raise PermissionDenied("This item belongs to someone else.")


def get_slot_for_reviewer(user: AnyUser, slug: str, slot_id: int) -> ReviewSlot:
    """A review slot held (or filled) by this reviewer; coordinators may look at any.

    A member's slot comes with its item, pair, author, revision, project and membership in one query."""
    related = ("item", "item__pair", "item__author", "revision", "reviewer")
    # A deleted item has no review.
    slots = ReviewSlot.objects.select_related(*related).filter(pk=slot_id, item__deleted_at__isnull=True)
    slot = with_membership(slots, user, slug, project="item__project")
    if slot is not None:
        project = project_of_row(slot, slot.item.project, None)
    else:
        project = get_project_for_user(user, slug)
        slot = slots.filter(item__project=project).first()
        if slot is None:
            raise Http404("No such review in this project.")
    membership: Membership = project.membership  # type: ignore[attr-defined]
    if not (membership.is_reviewer or membership.is_coordinator):
        raise PermissionDenied("This needs the reviewer role in the project.")
    if slot.reviewer_id != user.pk and not membership.is_coordinator:
        raise PermissionDenied("This review is someone else's.")
    slot.item.project = project
    slot.item.pair.project = project
    return slot


def get_pair_for_labeller(user: AnyUser, slug: str, pair_id: int) -> PagePair:
    """Article labels and adjudication are the coordinators' work."""
    return get_pair_for_user(user, slug, pair_id, role=Role.COORDINATOR)
