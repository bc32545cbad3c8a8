"""Who may see a Wikipedia collection (the funnel of `annotation.access`, for this kind's own rows)."""

from __future__ import annotations

from django.http import Http404

from annotation.access import AnyUser, get_project_for_user
from annotation.models import Role
from wikiqa.models import Collection


def get_collection_for_user(user: AnyUser, slug: str, collection_id: int) -> Collection:
    """A Wikipedia collection of the project (coordinators)."""
    project = get_project_for_user(user, slug, role=Role.COORDINATOR)
    collection = Collection.objects.select_related("created_by").filter(project=project, pk=collection_id).first()
    if collection is None:
        raise Http404("No such collection in this project.")
    collection.project = project
    return collection
