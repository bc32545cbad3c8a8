"""The one place that decides who may see and do what, per object type.

Every page and API endpoint loads projects, pairs and items through these
functions. The rule is the same everywhere: a non-member gets 404 (the object's
existence is not revealed), a member without the needed role or ownership 403.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.db.models import Count, FilteredRelation, Model, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404

from annotation.models import ImportJob, Membership, PagePair, Project, QAItem, Role

AnyUser = User | AnonymousUser
# One role, or any of several: `role=Role.COORDINATOR`, `role=(Role.REVIEWER, Role.COORDINATOR)`.
RoleOption = Role | Sequence[Role] | None
Row = TypeVar("Row", bound=Model)


@dataclass(frozen=True, slots=True)
class ProjectAccess:
    """A project as one member may use it: the project and the member's roles, checked."""

    project: Project
    membership: Membership

    @property
    def is_coordinator(self) -> bool:
        return self.membership.is_coordinator

    def has_role(self, role: Role) -> bool:
        return self.membership.has_role(role)


@dataclass(frozen=True, slots=True)
class PairAccess(ProjectAccess):
    pair: PagePair


@dataclass(frozen=True, slots=True)
class ItemAccess(ProjectAccess):
    item: QAItem


def membership_of(user: AnyUser, project: Project) -> Membership | None:
    """The user's active membership (superusers hold every role of every project); None for others."""
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Membership(
            project=project, user=user, is_coordinator=True, is_annotator=True, is_reviewer=True, is_researcher=True
        )
    return Membership.objects.filter(project=project, user=user).first()  # active memberships only


def roles_of(role: RoleOption) -> tuple[Role, ...]:
    if role is None:
        return ()
    if isinstance(role, Role):
        return (role,)
    return tuple(role)


def _require(membership: Membership | None, role: RoleOption) -> Membership:
    if membership is None:
        raise Http404("No such project.")
    roles = roles_of(role)
    if roles and not any(membership.has_role(each) for each in roles):
        names = " or ".join(each.label.lower() for each in roles)
        raise PermissionDenied(f"This needs the {names} role in the project.")
    return membership


MEMBERSHIP = "viewer_membership"


def member_row(rows: QuerySet[Row], user: AnyUser, slug: str, *, project: str) -> Row | None:
    """The row of `rows` (the caller names it by id) in the project `slug`, with the project and the user's active
    membership (`row.viewer_membership`, a filtered left join), in one query: every hot request starts with one of
    these. None when there is no such row or the user is no member (or is a superuser, who has no membership
    row): the caller then goes the way of `project_access`, which says which (404 or 403)."""
    if not user.is_authenticated or user.is_superuser:
        return None
    members = f"{project}__memberships"
    mine = Q(**{f"{members}__user": user.pk, f"{members}__deactivated_at__isnull": True})
    try:
        row = (
            rows.annotate(**{MEMBERSHIP: FilteredRelation(members, condition=mine)})
            .select_related(project, MEMBERSHIP)
            .get(**{f"{project}__slug": slug, f"{project}__deleted_at__isnull": True})
        )
    except ObjectDoesNotExist:
        return None
    if getattr(row, MEMBERSHIP, None) is None:  # no member: the join left it unset
        return None
    return row


def access_of_row(row: Model, project: Project, role: RoleOption) -> ProjectAccess:
    """The access of a row found by `member_row`, as `project_access` gives it (the role checked)."""
    membership: Membership = getattr(row, MEMBERSHIP)
    membership.project = project
    return ProjectAccess(project, _require(membership, role))


def _held_pair() -> Subquery:
    """The unscreened pair the member holds in the project (the oldest claim), as the annotators' queue asks."""
    mine = Q(project=OuterRef("project"), assignee=OuterRef("user"), status=PagePair.Status.CLAIMED)
    held = PagePair.objects.filter(mine)
    return Subquery(held.order_by("claimed_at").values("id")[:1])


def project_access(
    user: AnyUser,
    slug: str,
    *,
    role: RoleOption = None,
    kind: str | None = None,
    related: tuple[str, ...] = (),
    held_pair: bool = False,
) -> ProjectAccess:
    """The project and the user's membership, or 404 (not a member) / 403 (none of the roles in `role`).

    With `kind`, a project of another kind is 404 as well: the page is one of that kind's screens only (the
    Wikipedia QA pairs, collection, labels and settings are no part of a trivia project).

    A member's project and membership come in one query: this runs on every request. A deactivated
    membership counts as none (404), through `Membership.objects`. `related`: relations of the membership
    loaded in the same query (the review queue asks for the reviewer's `reader_languages`). `held_pair`: the
    membership says which pair the member holds unscreened (`held_pair_id`, None for none), for the queue.
    """
    membership: Membership | None
    if user.is_authenticated and not user.is_superuser:
        found = Membership.objects.select_related("project", *related)
        if held_pair:
            found = found.annotate(held_pair_id=_held_pair())
        try:  # the join skips the live manager of projects
            membership = found.get(project__slug=slug, project__deleted_at__isnull=True, user=user.pk)
        except Membership.DoesNotExist:
            membership = None
        project = membership.project if membership is not None else None
    else:
        project = Project.objects.filter(slug=slug).first()
        membership = membership_of(user, project) if project is not None else None
    if project is None:
        raise Http404("No such project.")
    checked = _require(membership, role)
    if kind is not None and project.kind != kind:
        raise Http404(f"This page is not part of a {project.get_kind_display()} project.")
    return ProjectAccess(project, checked)


def get_project_for_user(user: AnyUser, slug: str, *, role: RoleOption = None, kind: str | None = None) -> Project:
    """The project alone, for pages that need no more than the access check (see `project_access`)."""
    return project_access(user, slug, role=role, kind=kind).project


def release_reader_access(user: AnyUser, slug: str) -> ProjectAccess:
    """A project whose releases the user may read: any member, or anyone signed in when it publishes them.

    A signed-in non-member of a project with `releases_public` gets a membership without roles, so every
    check of a role further on refuses them (403); other projects stay 404 for them.
    """
    try:
        return project_access(user, slug)
    except Http404:
        if not isinstance(user, User):
            raise
        project = Project.objects.filter(slug=slug, releases_public=True).first()
        if project is None:
            raise
    return ProjectAccess(project, Membership(project=project, user=user))


def is_coordinator(user: AnyUser, project: Project) -> bool:
    """Whether the user coordinates the project (superusers coordinate every project)."""
    membership = membership_of(user, project)
    return membership is not None and membership.is_coordinator


def get_deleted_project_for_user(user: AnyUser, slug: str) -> Project:
    """A deleted project, for its coordinators and superusers to restore; 404 for everyone else."""
    project = Project.all_objects.filter(slug=slug, deleted_at__isnull=False).first()
    if project is None or not is_coordinator(user, project):
        raise Http404("No such deleted project.")
    return project


def get_deleted_pair_for_user(user: AnyUser, slug: str, pair_id: int) -> PagePair:
    """A deleted pair of a live project (coordinator)."""
    project = get_project_for_user(user, slug, role=Role.COORDINATOR)
    pair = PagePair.all_objects.filter(project=project, pk=pair_id, deleted_at__isnull=False).first()
    if pair is None:
        raise Http404("No such deleted page pair in this project.")
    pair.project = project
    return pair


def get_deleted_item_for_user(user: AnyUser, slug: str, item_id: int) -> QAItem:
    """A deleted QA item of a live project (coordinator)."""
    project = get_project_for_user(user, slug, role=Role.COORDINATOR)
    item = QAItem.objects.filter(project=project, pk=item_id, deleted_at__isnull=False).first()
    if item is None:
        raise Http404("No such deleted QA item in this project.")
    item.project = project
    return item


def can_see_pair(membership: Membership, pair: PagePair) -> bool:
    if membership.is_coordinator:
        return True
    return membership.is_annotator and pair.assignee_id == membership.user_id


def _pairs(*, item_counts: bool) -> QuerySet[PagePair]:
    pairs = PagePair.objects.select_related("assignee")
    if item_counts:  # starting an item checks how many the pair holds of its kind: counted in the pair's own query
        pairs = pairs.annotate(
            live_lead_items=_live_items_of_kind(QAItem.Kind.LEAD),
            live_document_items=_live_items_of_kind(QAItem.Kind.DOCUMENT),
        )
    return pairs


def _live_items_of_kind(kind: str) -> Coalesce:
    live = QAItem.objects.filter(pair=OuterRef("pk"), kind=kind, deleted_at__isnull=True).order_by()
    return Coalesce(Subquery(live.values("pair").annotate(n=Count("pk")).values("n")), 0)


def _items() -> QuerySet[QAItem]:
    return QAItem.objects.alive().select_related("pair", "author")


def pair_access(
    user: AnyUser, slug: str, pair_id: int, *, role: RoleOption = None, item_counts: bool = False
) -> PairAccess:
    """A pair of the project. Annotators reach only pairs assigned to them; coordinators reach all.

    A member's pair, project and membership come in one query; anything else asks again the long way. With
    `item_counts`, the pair comes with the number of its live items of each kind (`live_lead_items`,
    `live_document_items`), counted in the same query."""
    pairs = _pairs(item_counts=item_counts)
    pair = member_row(pairs.filter(pk=pair_id), user, slug, project="project")
    if pair is not None:
        access = access_of_row(pair, pair.project, role)
    else:
        access = project_access(user, slug, role=role)
        pair = pairs.filter(pk=pair_id, project=access.project).first()
        if pair is None:
            raise Http404("No such page pair in this project.")
    project = access.project
    pair.project = project
    if Role.ANNOTATOR in roles_of(role) and pair.assignee_id != user.pk:
        raise PermissionDenied("This pair is assigned to someone else.")
    if not can_see_pair(access.membership, pair):
        raise PermissionDenied("This pair is assigned to someone else.")
    return PairAccess(project, access.membership, pair)


def get_pair_for_user(
    user: AnyUser, slug: str, pair_id: int, *, role: RoleOption = None, item_counts: bool = False
) -> PagePair:
    return pair_access(user, slug, pair_id, role=role, item_counts=item_counts).pair


def get_item_for_user(user: AnyUser, slug: str, item_id: int, *, role: RoleOption = None) -> QAItem:
    """A live QA item. Authors reach their own items; coordinators reach all.

    A member's item, project and membership come in one query, as `pair_access`."""
    item = member_row(_items().filter(pk=item_id), user, slug, project="project")
    if item is not None:
        access = access_of_row(item, item.project, role)
    else:
        access = project_access(user, slug, role=role)
        item = _items().filter(pk=item_id, project=access.project).first()
        if item is None:
            raise Http404("No such QA item in this project.")
    project = access.project
    item.project = project
    item.pair.project = project
    is_author = item.author_id == user.pk
    if Role.ANNOTATOR in roles_of(role) and not is_author:
        raise PermissionDenied("This item belongs to someone else.")
    if not (access.membership.is_coordinator or is_author):
        raise PermissionDenied("This item belongs to someone else.")
    return item


def get_import_job_for_user(user: AnyUser, slug: str, job_id: int) -> ImportJob:
    """An import of page pairs into the project (coordinators)."""
    project = get_project_for_user(user, slug, role=Role.COORDINATOR)
    job = ImportJob.objects.select_related("created_by").filter(project=project, pk=job_id).first()
    if job is None:
        raise Http404("No such import in this project.")
    job.project = project
    return job


def user_projects(user: AnyUser) -> QuerySet[Project]:
    """Projects the user may open, for lists."""
    if not isinstance(user, User):
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user, memberships__deactivated_at__isnull=True).distinct()


def may_create_projects(user: AnyUser) -> bool:
    """Creating a project needs the `annotation.add_project` permission; superusers have every permission."""
    return user.has_perm("annotation.add_project")


def require_project_creator(user: AnyUser) -> None:
    if not may_create_projects(user):
        raise PermissionDenied("Creating a project needs the permission to add projects; ask an administrator.")


def pairs_for_user(access: ProjectAccess) -> QuerySet[PagePair]:
    """The pairs a member may list: a coordinator every pair, an annotator only the pairs assigned to them,
    anyone else is refused (the same rule as `can_see_pair`)."""
    membership = access.membership
    pairs = PagePair.objects.filter(project=access.project)
    if membership.is_coordinator:
        return pairs
    if membership.is_annotator:
        return pairs.filter(assignee_id=membership.user_id)
    raise PermissionDenied("Listing pairs needs the coordinator or annotator role in the project.")
