"""The Members page: add people (one, or a CSV), hand out invitation links, deactivate and reactivate."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from accounts import people
from accounts.forms import PeopleCsvForm, PersonForm
from annotation.access import get_project_for_user
from annotation.models import Membership, Project, Role
from annotation.services.members import membership_remove
from annotation.views.common import report_error
from common.errors import ServiceError
from common.requests import SignedInRequest


def _page(
    request: SignedInRequest,
    project: Project,
    *,
    form: PersonForm | None = None,
    csv_form: PeopleCsvForm | None = None,
    added: list[people.PersonAdded] | None = None,
    csv_errors: list[tuple[str, str, str]] | None = None,
    row_error: dict[str, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "project": project,
        "members": people.members_of(project),
        "form": form or PersonForm(),
        "csv_form": csv_form or PeopleCsvForm(),
        "added": [(result, request.build_absolute_uri(result.invitation_path)) for result in added or []],
        "csv_errors": csv_errors or [],
        "separator": people.LIST_SEPARATOR,
        "columns": ",".join(people.CSV_COLUMNS),
        "link_days": settings.PASSWORD_RESET_TIMEOUT // 86400,
        "role_choices": Role.choices,
        "row_error": row_error,  # a member's row whose roles could not be saved, and why
    }
    return render(request, "accounts/members.html", context, status=status)


def _send_invitations(request: SignedInRequest, project: Project, added: list[people.PersonAdded]) -> None:
    for result in added:
        if result.invitation_path:
            people.invitation_send(
                result=result, project=project, url=request.build_absolute_uri(result.invitation_path)
            )


@never_cache  # the page may carry a password or a link shown once
@login_required
def project_members(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    if request.method != "POST":
        return _page(request, project)
    form = PersonForm(request.POST)
    from_row = request.POST.get("row") == "1"  # a member's roles changed on their row of the table
    if not form.is_valid():
        if from_row:
            problems = [str(error) for errors in form.errors.values() for error in errors]
            row_error = {"username": request.POST.get("username", ""), "message": " ".join(problems)}
            return _page(request, project, row_error=row_error, status=400)
        return _page(request, project, form=form, status=400)
    values = dict(form.cleaned_data)
    access = values.pop("access") or people.INVITATION
    try:
        result = people.person_add(project=project, actor=request.user, values=values, access=access)
    except ServiceError as error:
        if from_row:
            return _page(
                request, project, row_error={"username": values["username"], "message": error.message}, status=400
            )
        field = error.field if error.field in form.fields else None
        form.add_error(field, error.message)
        return _page(request, project, form=form, status=400)
    _send_invitations(request, project, [result])
    name = result.user.get_username()
    if not result.created:
        messages.success(request, f"{name} ({', '.join(result.membership.role_labels)}) is a member.")
        return redirect("project_members", project.slug)
    return _page(request, project, added=[result])


@never_cache
@login_required
@require_POST
def project_people_import(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    csv_form = PeopleCsvForm(request.POST, request.FILES)
    if not csv_form.is_valid():
        return _page(request, project, csv_form=csv_form, status=400)
    try:
        added = people.people_import_csv(
            project=project,
            actor=request.user,
            data=csv_form.cleaned_data["file"].read(),
            access=csv_form.cleaned_data["access"] or people.INVITATION,
        )
    except ServiceError as error:
        problems = []
        for key, messages_ in (error.details or {error.field or "file": [error.message]}).items():
            row, _, column = str(key).partition(".")
            for problem in messages_:
                problems.append((row, column, problem))
        summary = "Nobody was added; fix these rows and upload the file again." if error.details else error.message
        csv_form.add_error("file", summary)
        return _page(request, project, csv_form=csv_form, csv_errors=problems, status=400)
    _send_invitations(request, project, added)
    return _page(request, project, added=added)


def _member(project: Project, username: str) -> User:
    membership = Membership.all_objects.select_related("user").filter(project=project, user__username=username).first()
    if membership is None:
        raise Http404("No such member of this project.")
    return membership.user


@login_required
@require_POST
def project_member_remove(request: SignedInRequest, slug: str, username: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    user = get_user_model().objects.filter(username=username).first()
    if user is not None:
        try:
            membership_remove(project=project, user=user, actor=request.user)
        except ServiceError as error:
            report_error(request, error)
        else:
            messages.success(request, f"{username} is no longer a member.")
    return redirect("project_members", project.slug)


@login_required
@require_POST
def project_member_deactivate(request: SignedInRequest, slug: str, username: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    try:
        people.membership_deactivate(project=project, user=_member(project, username), actor=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, f"{username} is deactivated in this project; their work stays.")
    return redirect("project_members", project.slug)


@login_required
@require_POST
def project_member_reactivate(request: SignedInRequest, slug: str, username: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    people.membership_reactivate(project=project, user=_member(project, username), actor=request.user)
    messages.success(request, f"{username} is active in this project again.")
    return redirect("project_members", project.slug)


@never_cache
@login_required
@require_POST
def project_member_access(request: SignedInRequest, slug: str, username: str) -> HttpResponse:
    """A new invitation link or initial password for a member who has not signed in yet."""
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    user = _member(project, username)
    try:
        result = people.person_access_issue(
            project=project, actor=request.user, user=user, access=request.POST.get("access", people.INVITATION)
        )
    except ServiceError as error:
        report_error(request, error)
        return redirect("project_members", project.slug)
    _send_invitations(request, project, [result])
    return _page(request, project, added=[result])


@login_required
@require_POST
def account_set_active(request: SignedInRequest, slug: str, username: str, active: bool) -> HttpResponse:
    """A superuser switches a member's whole account off or on (every project, sign-in, API tokens)."""
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    if not request.user.is_superuser:
        raise PermissionDenied("Only a superuser may deactivate or reactivate an account.")
    user = _member(project, username)
    try:
        if active:
            people.account_reactivate(user=user, actor=request.user)
        else:
            people.account_deactivate(user=user, actor=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, f"The account {username} is {'active' if active else 'deactivated'}.")
    return redirect("project_members", project.slug)
