"""The releases REST API: list, request, watch, build again, download, compare; export settings.

There is deliberately no route that changes or deletes a release: a published
release is immutable, and the next one is a new version.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import FileResponse, Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation import access
from annotation.models import QAItem, Role
from common.api import paginated, responses, validated
from common.errors import InvalidInput, InvalidState
from common.requests import SignedInApiRequest
from exports import formats, services
from exports.access import get_release_for_user, get_release_of_project, releases_for_project
from exports.downloads import archive_response, file_response
from exports.formats.prompts import SCENARIOS
from exports.models import Release

FILE = OpenApiResponse(OpenApiTypes.BINARY, description="The file, streamed as an attachment.")


class FileEntryOutput(serializers.Serializer):
    name = serializers.CharField()
    size = serializers.IntegerField()
    sha256 = serializers.CharField()
    lines = serializers.IntegerField(required=False, help_text="Lines of a JSONL file.")


class ReleaseOutput(serializers.ModelSerializer):
    files = FileEntryOutput(many=True, read_only=True)
    percent = serializers.IntegerField(read_only=True)
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(slug_field="username", read_only=True)
    counts = serializers.DictField(read_only=True)
    splits = serializers.DictField(child=serializers.IntegerField(), read_only=True)
    item_statuses = serializers.ListField(child=serializers.CharField(), read_only=True)
    readiness = serializers.DictField(
        read_only=True,
        help_text="What was unfinished when the release was requested, then when its build read the project: "
        "{ready, checked, unfinished: [{check, label, count, detail}]}.",
    )

    class Meta:
        model = Release
        fields = [
            "version",
            "status",
            "item_statuses",
            "splits",
            "seed",
            "changelog",
            "license",
            "schema_version",
            "progress_done",
            "progress_total",
            "percent",
            "files",
            "counts",
            "readiness",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields


class ReleaseRequestInput(serializers.Serializer):
    item_statuses = serializers.ListField(
        child=serializers.ChoiceField(choices=QAItem.Status.choices),
        required=False,
        help_text="Item statuses to include; accepted only when left out.",
    )
    splits = serializers.DictField(
        child=serializers.IntegerField(),
        required=False,
        allow_empty=True,
        help_text='Percentages, e.g. {"train": 70, "dev": 10, "test": 20} (the default); {} for no splits.',
    )
    seed = serializers.IntegerField(required=False, help_text="Kept from the previous release when left out.")
    changelog = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    license = serializers.CharField(required=False, help_text="Defaults to the project's export settings.")
    version = serializers.IntegerField(
        required=False, min_value=1, max_value=2**31 - 1, help_text="Defaults to the next number."
    )


class DiffValueOutput(serializers.Serializer):
    field = serializers.CharField(help_text="The release file's key.")
    before = serializers.JSONField(help_text="Its value in the earlier release (null: absent).")
    after = serializers.JSONField(help_text="Its value in the later release (null: absent).")


class DiffChangeOutput(serializers.Serializer):
    id = serializers.CharField()
    question = serializers.CharField(help_text="The item's question in the later release.")
    fields = serializers.ListField(child=serializers.CharField())  # type: ignore[assignment]  # the JSON key, not Serializer.fields
    values = DiffValueOutput(many=True, help_text="Each changed field with its value before and after.")


class DiffItemOutput(serializers.Serializer):
    id = serializers.CharField()
    question = serializers.CharField()


class DiffCountsOutput(serializers.Serializer):
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    changed = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class DiffOutput(serializers.Serializer):
    from_version = serializers.IntegerField()
    to_version = serializers.IntegerField()
    counts = DiffCountsOutput()
    added = serializers.ListField(child=serializers.CharField(), help_text="Stable ids of items added.")
    removed = serializers.ListField(child=serializers.CharField())
    changed = DiffChangeOutput(many=True)
    added_items = DiffItemOutput(many=True, help_text="The added items with their questions.")
    removed_items = DiffItemOutput(many=True, help_text="The removed items with their questions.")


class DiffInput(serializers.Serializer):
    old = serializers.IntegerField(min_value=1, help_text="The earlier version.")
    new = serializers.IntegerField(min_value=1, help_text="The later version.")


class ExportSettingsOutput(serializers.Serializer):
    prompt_templates = serializers.DictField(child=serializers.CharField())
    license = serializers.CharField()
    version = serializers.IntegerField()


class ExportSettingsInput(serializers.Serializer):
    prompt_templates = serializers.DictField(
        child=serializers.CharField(trim_whitespace=False),
        required=False,
        help_text=f"Templates by scenario ({', '.join(SCENARIOS)}); scenarios left out keep theirs.",
    )
    license = serializers.CharField(required=False)
    version = serializers.IntegerField(required=False, help_text="Refuse if the settings changed since this version.")


class ReadinessCheckOutput(serializers.Serializer):
    code = serializers.CharField(help_text="e.g. pairs_not_labelled, items_not_verified, splits_small")
    label = serializers.CharField()  # type: ignore[assignment]  # the JSON key, not Field.label
    count = serializers.IntegerField()
    url = serializers.CharField(help_text="The page where the work is done.")
    detail = serializers.CharField()


class SplitPlanOutput(serializers.Serializer):
    shares = serializers.DictField(child=serializers.IntegerField(), help_text="Percent per split; empty: no splits.")
    seed = serializers.IntegerField(allow_null=True, help_text="The seed the release will use.")
    unit = serializers.CharField(help_text="What a group is (page pair, entity, item): a group's items share a split.")
    groups = serializers.IntegerField()
    items = serializers.IntegerField(help_text="Items the release will hold.")
    sizes = serializers.DictField(
        child=serializers.IntegerField(), help_text="Items per split, as the build writes them."
    )
    left_out = serializers.DictField(child=serializers.IntegerField(), help_text="Items left out, by reason.")
    description = serializers.CharField()


class ReadinessOutput(serializers.Serializer):
    ready = serializers.BooleanField()
    checked = serializers.ListField(child=serializers.CharField(), help_text="The checks made for this project kind.")
    unfinished = ReadinessCheckOutput(many=True)
    splits = SplitPlanOutput(help_text="The split plan of the release as chosen (exports.splits).")


class ReadinessInput(serializers.Serializer):
    item_statuses = serializers.ListField(
        child=serializers.ChoiceField(choices=QAItem.Status.choices),
        required=False,
        help_text="Accepted when left out.",
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**31 - 1)


class ReleaseReadinessApi(APIView):
    @extend_schema(
        summary="What is unfinished before a release is built (coordinator)",
        description="Each unfinished check with its count and the page where the work is done. Building anyway is "
        "allowed; the release records what was unfinished.",
        parameters=[
            OpenApiParameter("item_statuses", str, many=True, required=False),
            OpenApiParameter("seed", int, required=False),
        ],
        responses=responses({200: ReadinessOutput}, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        query: dict[str, Any] = (
            {"item_statuses": request.query_params.getlist("item_statuses")}
            if "item_statuses" in request.query_params
            else {}
        )
        if "seed" in request.query_params:
            query["seed"] = request.query_params["seed"]
        data = validated(ReadinessInput, query)
        readiness = services.release_readiness_get(project=project, **data)
        return Response(ReadinessOutput(readiness.as_dict()).data)


class ReleaseListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Releases of a project, newest first (members)",
        responses=responses({200: ReleaseOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.release_reader_access(request.user, slug).project
        services.release_expire_stale(project=project)
        return paginated(self, request, releases_for_project(project), ReleaseOutput)

    @extend_schema(
        summary="Request a release (coordinator); a worker builds it",
        description="202 with the pending release; poll it for progress. 409 while another build of the project runs.",
        request=ReleaseRequestInput,
        responses=responses({202: ReleaseOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        data = validated(ReleaseRequestInput, request.data)
        release = services.release_request(project=project, user=request.user, **data)
        return Response(ReleaseOutput(release).data, status=status.HTTP_202_ACCEPTED)


class ReleaseDetailApi(APIView):
    @extend_schema(
        summary="A release: status, progress, files with size and sha256, error",
        responses=responses({200: ReleaseOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, version: int) -> Response:
        project = access.release_reader_access(request.user, slug).project
        services.release_expire_stale(project=project)
        return Response(ReleaseOutput(get_release_of_project(project, version)).data)


class ReleaseRebuildApi(APIView):
    @extend_schema(
        summary="Build a failed release again (coordinator)",
        request=None,
        responses=responses({202: ReleaseOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, version: int) -> Response:
        release = get_release_for_user(request.user, slug, version, role=Role.COORDINATOR)
        rebuilt = services.release_rebuild(release=release, user=request.user)
        return Response(ReleaseOutput(rebuilt).data, status=status.HTTP_202_ACCEPTED)


class ReleaseCancelApi(APIView):
    @extend_schema(
        summary="Cancel a waiting or running build (coordinator); nothing is published",
        request=None,
        responses=responses({200: ReleaseOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, version: int) -> Response:
        release = get_release_for_user(request.user, slug, version, role=Role.COORDINATOR)
        return Response(ReleaseOutput(services.release_cancel(release=release, user=request.user)).data)


class ReleaseFileApi(APIView):
    @extend_schema(
        summary="Download one file of a published release (members)",
        description="`name` is a file name as listed in the release's `files`, e.g. `lead_qa.jsonl`.",
        responses=responses({200: FILE}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, version: int, name: str) -> FileResponse:
        release = get_release_for_user(request.user, slug, version)
        try:
            return file_response(release, name)
        except InvalidInput as error:
            raise Http404(error.message) from None


class ReleaseArchiveApi(APIView):
    @extend_schema(
        summary="Download a published release as one zip, built when it was published (members)",
        responses=responses({200: FILE}, bad_input=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, version: int) -> FileResponse | StreamingHttpResponse:
        release = get_release_for_user(request.user, slug, version)
        if not release.is_published:
            raise InvalidState("Only a published release can be downloaded.", field="status")
        return archive_response(release)


class ReleaseDiffApi(APIView):
    @extend_schema(
        summary="Items added, removed and changed between two published releases (by stable id)",
        parameters=[
            OpenApiParameter("old", int, required=True, description="The earlier version."),
            OpenApiParameter("new", int, required=True, description="The later version."),
        ],
        responses=responses({200: DiffOutput}),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.release_reader_access(request.user, slug).project
        query = validated(DiffInput, request.query_params)
        old = get_release_of_project(project, query["old"])
        new = get_release_of_project(project, query["new"])
        return Response(DiffOutput(services.release_diff(old=old, new=new).as_dict()).data)


class ExportSettingsApi(APIView):
    @extend_schema(
        summary="Prompt templates and default license of the project's releases (coordinator)",
        responses=responses({200: ExportSettingsOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        return Response(ExportSettingsOutput(services.export_settings_get(project=project)).data)

    @extend_schema(
        summary="Change prompt templates or the default license (coordinator)",
        request=ExportSettingsInput,
        responses=responses({200: ExportSettingsOutput}),
    )
    def patch(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        data: dict[str, Any] = validated(ExportSettingsInput, request.data)
        updated = services.export_settings_update(project=project, actor=request.user, **data)
        return Response(ExportSettingsOutput(updated).data)


class ProjectFormatApi(APIView):
    @extend_schema(
        summary="The project written in another format, e.g. `wilova`, as a zip (coordinator)",
        description=(
            "404 when the format is not available on this server; 400 when the project was not imported from "
            "files of that format (there is nothing to write back)."
        ),
        responses=responses({200: FILE}, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, format_name: str) -> FileResponse:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        if formats.project_format(format_name) is None:
            raise Http404(f"No format {format_name!r} on this server.")
        # A format that does not apply to this project (not imported from its files) is a 400 naming `format`.
        archive, cleanup = services.project_format_archive(project=project, format=format_name)
        handle = archive.open("rb")
        cleanup()  # the open handle keeps the data readable; nothing is left on disk once it is sent
        return FileResponse(handle, as_attachment=True, filename=archive.name)
