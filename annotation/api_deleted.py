"""Deleted things over the API: the project's Deleted list, restore, deleted projects (coordinators).

Deleting itself is the DELETE method of the project, pair and item endpoints (annotation.api); it is soft.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import access
from annotation.models import Role
from annotation.serializers import ItemOutput, PairListOutput, ProjectOutput
from annotation.services.deletion import deleted_in_project, deleted_projects_for, pair_restore, project_restore
from annotation.services.items import qa_item_restore
from common.api import responses
from common.requests import SignedInApiRequest


class DeletedByMixin(serializers.Serializer):
    deleted_at = serializers.DateTimeField()
    deleted_by = serializers.CharField(source="deleted_by.username", default=None, allow_null=True)


class DeletedPairOutput(DeletedByMixin, serializers.Serializer):
    id = serializers.IntegerField()
    local_title = serializers.CharField()
    standard_title = serializers.CharField()
    status = serializers.CharField()


class DeletedItemOutput(DeletedByMixin, serializers.Serializer):
    id = serializers.IntegerField()
    pair = serializers.IntegerField(source="pair_id")
    kind = serializers.CharField()
    status = serializers.CharField()
    question = serializers.CharField()
    author = serializers.CharField(source="author.username", default=None, allow_null=True)


class DeletedListOutput(serializers.Serializer):
    pairs = DeletedPairOutput(many=True, help_text="Deleted pairs; each comes back with the items deleted with it.")
    items = DeletedItemOutput(many=True, help_text="Items deleted on their own (their pair is not deleted).")


class DeletedProjectOutput(DeletedByMixin, serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()


class DeletedListApi(APIView):
    @extend_schema(
        summary="What can be restored in a project: deleted pairs and items (coordinator)",
        responses=responses({200: DeletedListOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        return Response(DeletedListOutput(deleted_in_project(project)).data)


class PairRestoreApi(APIView):
    @extend_schema(
        summary="Restore a deleted pair with the items deleted with it (coordinator)",
        request=None,
        responses=responses({200: PairListOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_deleted_pair_for_user(request.user, slug, pair_id)
        pair = pair_restore(pair=pair, user=request.user)
        pair.item_count = pair.items.alive().count()  # type: ignore[attr-defined]
        return Response(PairListOutput(pair).data)


class ItemRestoreApi(APIView):
    @extend_schema(
        summary="Restore a deleted QA item as it was (coordinator)",
        request=None,
        responses=responses({200: ItemOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_deleted_item_for_user(request.user, slug, item_id)
        return Response(ItemOutput(qa_item_restore(item=item, user=request.user)).data)


class DeletedProjectListApi(APIView):
    @extend_schema(
        summary="Deleted projects you may restore (those you coordinate; every one for a superuser)",
        responses=responses({200: DeletedProjectOutput(many=True)}, bad_input=False, conflict=False, not_found=False),
    )
    def get(self, request: SignedInApiRequest) -> Response:
        return Response(DeletedProjectOutput(deleted_projects_for(request.user), many=True).data)


class ProjectRestoreApi(APIView):
    @extend_schema(
        summary="Restore a deleted project (its coordinators, superusers)",
        request=None,
        responses=responses({200: ProjectOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_deleted_project_for_user(request.user, slug)
        return Response(ProjectOutput(project_restore(project=project, user=request.user)).data)
