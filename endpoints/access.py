"""Who may see and set a project's model endpoints: the one place that loads an endpoint for a user.

Endpoints belong to the project's coordinators (non-members 404, other members 403, as `project_access`
decides for every project page). A feature that lets another role *use* an endpoint (a researcher's
evaluation run) passes its roles: `get_endpoint_for_user(user, slug, pk, role=(Role.RESEARCHER,
Role.COORDINATOR))`; the key stays write-only for everyone.
"""

from __future__ import annotations

from django.http import Http404

from annotation.access import AnyUser, ProjectAccess, RoleOption, project_access
from annotation.models import Role
from endpoints.models import Endpoint


def endpoints_access(user: AnyUser, slug: str, *, role: RoleOption = Role.COORDINATOR) -> ProjectAccess:
    """The project whose endpoints the user may set (any kind of project has them)."""
    return project_access(user, slug, role=role)


def get_endpoint_for_user(
    user: AnyUser, slug: str, endpoint_id: int, *, role: RoleOption = Role.COORDINATOR
) -> tuple[ProjectAccess, Endpoint]:
    access = project_access(user, slug, role=role)
    endpoint = Endpoint.objects.filter(project=access.project, pk=endpoint_id).first()
    if endpoint is None:
        raise Http404("No such model endpoint in this project.")
    endpoint.project = access.project
    return access, endpoint
