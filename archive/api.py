"""The project archive REST API: a coordinator exports and downloads; a superuser uploads an archive to import."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation import access
from annotation.models import Project, Role
from archive import services
from archive.access import get_export_for_user, get_import_for_user, require_importer
from archive.downloads import export_response
from archive.models import ProjectArchive
from common.api import paginated, responses, validated
from common.requests import SignedInApiRequest

FILE = OpenApiResponse(OpenApiTypes.BINARY, description="The archive (.zip), streamed as an attachment.")


class ArchiveOutput(serializers.ModelSerializer):
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(slug_field="username", read_only=True)
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, help_text="Import: the project made."
    )
    percent = serializers.IntegerField(read_only=True)
    counts = serializers.DictField(read_only=True, help_text="Rows per model; users matched and created.")

    class Meta:
        model = ProjectArchive
        fields = [
            "id",
            "kind",
            "status",
            "slug",
            "project",
            "original_name",
            "size",
            "sha256",
            "progress_done",
            "progress_total",
            "percent",
            "stage",
            "counts",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields


class ImportInput(serializers.Serializer):
    file = serializers.FileField(help_text="A project archive (.zip) written by an export.")
    slug = serializers.SlugField(
        max_length=60, required=False, allow_blank=True, help_text="Default: the archived one."
    )


class ProjectArchiveListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Exports of a project, newest first (coordinator)",
        responses=responses({200: ArchiveOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        return paginated(self, request, services.exports_for_project(project), ArchiveOutput)

    @extend_schema(
        summary="Export the whole project into one archive (coordinator); a worker writes it",
        description="202 with the pending export; poll it for progress, then download it. 409 while one runs.",
        request=None,
        responses=responses({202: ArchiveOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        archive = services.archive_export_request(project=project, user=request.user)
        return Response(ArchiveOutput(archive).data, status=status.HTTP_202_ACCEPTED)


class ProjectArchiveDetailApi(APIView):
    @extend_schema(
        summary="An export: status, progress, size, sha256, rows per model (coordinator)",
        responses=responses({200: ArchiveOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, archive_id: int) -> Response:
        _, archive = get_export_for_user(request.user, slug, archive_id)
        return Response(ArchiveOutput(archive).data)


class ProjectArchiveDownloadApi(APIView):
    @extend_schema(
        summary="Download a finished export (coordinator); 409 while it is being written",
        responses=responses({200: FILE}, bad_input=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, archive_id: int) -> FileResponse:
        _, archive = get_export_for_user(request.user, slug, archive_id)
        return export_response(archive)


class ArchiveImportListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS
    parser_classes = [MultiPartParser]

    @extend_schema(
        summary="Imports of project archives, newest first (superuser)",
        responses=responses({200: ArchiveOutput(many=True)}, bad_input=False, conflict=False, not_found=False),
    )
    def get(self, request: SignedInApiRequest) -> Response:
        require_importer(request.user)
        return paginated(self, request, services.imports_list(), ArchiveOutput)

    @extend_schema(
        summary="Upload a project archive to import as a new project (superuser); a worker imports it",
        description=(
            "The upload is checked before anything is unpacked (size, member names, unpacked size, compression "
            "ratio, manifest); 400 says what is wrong and where. 202 with the pending import; poll it."
        ),
        request={"multipart/form-data": ImportInput},
        responses=responses({202: ArchiveOutput}, conflict=False, not_found=False),
    )
    def post(self, request: SignedInApiRequest) -> Response:
        require_importer(request.user)
        data = validated(ImportInput, request.data)
        archive = services.archive_import_request(upload=data["file"], user=request.user, slug=data.get("slug") or "")
        return Response(ArchiveOutput(archive).data, status=status.HTTP_202_ACCEPTED)


class ArchiveImportDetailApi(APIView):
    @extend_schema(
        summary="An import: status, progress, the project made, people matched and created (superuser)",
        responses=responses({200: ArchiveOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, archive_id: int) -> Response:
        return Response(ArchiveOutput(get_import_for_user(request.user, archive_id)).data)
