"""The API of file imports, every project kind's (coordinators).

An import runs on a worker. Creating one answers 202 with the row; its status, progress and report are read
back from the same row. Wikipedia collections are `wikiqa.api`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation import access, ingest
from annotation.importers.sources import FORMATS
from annotation.models import ImportJob, Role
from common.api import ErrorOutput, named_enum, paginated, responses, validated
from common.parsers import JSONParser
from common.requests import SignedInApiRequest

ImportStatusField = named_enum(ImportJob.Status, "ImportStatusEnum")
REPORT_SCHEMA = {
    "type": "object",
    "description": (
        "The import report: `ok`, `dry_run`, `lines` (records read), `created` and `already_present` (pairs), "
        "`counts` (screenings by decision, items by kind and status, spans by document and match, original "
        "release rows, review outcomes applied to items already present), `files`, `problems` (each "
        "`{file, line, record, field, message}`), `problems_total`, `warnings` (residue kept as written but not "
        "imported, in the same shape) and `warnings_total`, `unknown_regions` (fine-grained region as written → "
        "records; map them with the rerun endpoint), `summary`. Null until the import has ended."
    ),
    "nullable": True,
}


@extend_schema_field(REPORT_SCHEMA)
class ReportField(serializers.JSONField):
    pass


class ImportFileOutput(serializers.Serializer):
    name = serializers.CharField()
    size = serializers.IntegerField(allow_null=True)


class ImportJobOutput(serializers.ModelSerializer):
    status = ImportStatusField()
    files = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    percent = serializers.IntegerField()
    report = ReportField()
    bytes_total = serializers.IntegerField(source="progress_total", read_only=True)
    bytes_done = serializers.IntegerField(source="progress_done", read_only=True)
    rerunnable = serializers.SerializerMethodField(
        help_text="A finished dry run that passed or only asked for regions: its files can be imported with rerun."
    )

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "status",
            "format",
            "dry_run",
            "files",
            "bytes_total",
            "bytes_done",
            "records_done",
            "percent",
            "report",
            "rerunnable",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]

    @extend_schema_field(ImportFileOutput(many=True))
    def get_files(self, job: ImportJob) -> list[dict[str, Any]]:
        return [{"name": f["name"], "size": f.get("size")} for f in job.files]

    def get_rerunnable(self, job: ImportJob) -> bool:
        # Without the storage look-up on list pages: a job can be rerun only if it is a dry run anyway.
        return (
            job.dry_run
            and not job.is_active
            and ingest.import_job_rerunnable(job, check_files=self.context.get("detail", False))
        )


class ImportCreateInput(serializers.Serializer):
    files = serializers.ListField(child=serializers.FileField(), allow_empty=False)
    format = serializers.ChoiceField(choices=FORMATS, default="auto")
    dry_run = serializers.BooleanField(default=False)


class ImportRerunInput(serializers.Serializer):
    region_map = serializers.DictField(
        child=serializers.CharField(),
        required=False,
        default=dict,
        help_text="Fine-grained region as the file writes it → one of the project's regions, e.g. "
        '{"Hongkong": "local"}; saved in the project\'s region vocabulary.',
    )
    dry_run = serializers.BooleanField(default=False, help_text="Check again instead of importing.")


class ImportListApi(APIView):
    parser_classes = [MultiPartParser, FormParser]
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Imports of the project, newest first (coordinator)",
        responses=responses({200: ImportJobOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        jobs = ImportJob.objects.filter(project=project).select_related("created_by").order_by("-created_at", "-id")
        return paginated(self, request, jobs, ImportJobOutput)

    @extend_schema(
        summary="Upload files to import (coordinator); a worker imports them",
        description=(
            "Multipart form: one or more `files` (JSONL, CSV, or a WiLoVa base and `_QualityMeta` file together), "
            "`format` (auto goes by the file name) and `dry_run`. Answers 202 with the job; poll it for progress "
            "and the report. Files over IMPORT_MAX_BYTES are refused with 400."
        ),
        request={"multipart/form-data": ImportCreateInput},
        responses=responses({202: ImportJobOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        # The form parsers always give a QueryDict; the stubs allow a JSON list too.
        form = request.data if isinstance(request.data, Mapping) else {}
        data = validated(
            ImportCreateInput,
            {
                "files": request.FILES.getlist("files"),
                "format": form.get("format", "auto"),
                "dry_run": form.get("dry_run", False),
            },
        )
        job = ingest.import_job_create(project=project, user=request.user, **data)
        job.refresh_from_db()
        return Response(ImportJobOutput(job).data, status=status.HTTP_202_ACCEPTED)


class ImportDetailApi(APIView):
    @extend_schema(
        summary="An import: status, progress and, once it has ended, its report (coordinator)",
        responses=responses({200: ImportJobOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, job_id: int) -> Response:
        job = access.get_import_job_for_user(request.user, slug, job_id)
        return Response(ImportJobOutput(job, context={"detail": True}).data)


class ImportRerunApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        summary="Import a dry run's files again, after mapping its unknown regions (coordinator)",
        description=(
            "For a finished dry run that passed, or whose only problems were regions the project's vocabulary "
            "does not know (`report.unknown_regions`): saves `region_map` into the project's region vocabulary "
            "and queues a new import (or, with `dry_run`, a new check) of the same files. Answers 202 with the new "
            "job; 409 if the dry run cannot be run again (its files are gone, or it was run again already)."
        ),
        request=ImportRerunInput,
        responses=responses({202: ImportJobOutput, 409: OpenApiResponse(ErrorOutput, description="Not rerunnable.")}),
    )
    def post(self, request: SignedInApiRequest, slug: str, job_id: int) -> Response:
        earlier = access.get_import_job_for_user(request.user, slug, job_id)
        data = validated(ImportRerunInput, request.data)
        job = ingest.import_job_rerun(job=earlier, user=request.user, **data)
        job.refresh_from_db()
        return Response(ImportJobOutput(job, context={"detail": True}).data, status=status.HTTP_202_ACCEPTED)
