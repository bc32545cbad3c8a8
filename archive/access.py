"""Who may export and import project archives: the one place that loads archive jobs for a user.

Exporting a project and downloading its archive need the coordinator role (non-members 404, other members
403): an archive holds all of the project's work and its members' names and e-mail addresses. Importing
creates a project and may create user accounts, so it is for superusers only (everyone else 403).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotation.access import AnyUser, get_project_for_user
from annotation.models import Project, Role
from archive.models import ProjectArchive


def get_export_for_user(user: AnyUser, slug: str, archive_id: int) -> tuple[Project, ProjectArchive]:
    project = get_project_for_user(user, slug, role=Role.COORDINATOR)
    archive = ProjectArchive.objects.filter(kind=ProjectArchive.Kind.EXPORT, project=project, pk=archive_id).first()
    if archive is None:
        raise Http404("No such export of this project.")
    return project, archive


def require_importer(user: AnyUser) -> None:
    if not (user.is_authenticated and user.is_superuser):
        raise PermissionDenied("Importing a project archive is for superusers: it creates a project and accounts.")


def get_import_for_user(user: AnyUser, archive_id: int) -> ProjectArchive:
    require_importer(user)
    archive = ProjectArchive.objects.filter(kind=ProjectArchive.Kind.IMPORT, pk=archive_id).first()
    if archive is None:
        raise Http404("No such import.")
    return archive
