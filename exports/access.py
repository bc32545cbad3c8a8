"""Who may see, download and cut releases: the one place that loads releases for a user.

Every member of a project (any role) may list, open, compare and download its
published releases: the people who made the data may read it, and so may anyone
signed in when the project publishes its releases (`Project.releases_public`). Cutting a
release, building one again and editing the export settings need the
coordinator role. A non-member gets 404, a member without the role 403.
"""

from __future__ import annotations

from django.http import Http404

from annotation.access import AnyUser, project_access, release_reader_access
from annotation.models import Project, Role
from exports.models import Release, ReleaseQuerySet


def get_release_for_user(user: AnyUser, slug: str, version: int, *, role: Role | None = None) -> Release:
    """The project's release with this version: the latest row of that number (a failed build may share it)."""
    access = release_reader_access(user, slug) if role is None else project_access(user, slug, role=role)
    return get_release_of_project(access.project, version)


def get_release_of_project(project: Project, version: int) -> Release:
    release = (
        Release.objects.filter(project=project, version=version).select_related("created_by").order_by("-id").first()
    )
    if release is None:
        raise Http404("No such release of this project.")
    release.project = project
    return release


def releases_for_project(project: Project) -> ReleaseQuerySet:
    return Release.objects.filter(project=project).select_related("created_by").order_by("-version", "-id")
