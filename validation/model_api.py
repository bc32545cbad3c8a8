"""The REST API of a model as a collaborator (coordinators): suggestion jobs, drafted seed queries and their
review, through `validation.access`; the services of validation/suggestions.py, as the pages call them."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.models import Role
from common.api import named_enum, paginated, responses, validated
from common.parsers import JSONParser
from common.requests import SignedInApiRequest
from validation import suggestions
from validation.access import get_model_job, get_seed_draft, get_validation_project
from validation.models import ModelJob, SeedDraft

TAG = ["validation"]

PurposeField = named_enum(ModelJob.Purpose, "ModelJobPurposeEnum")
DraftStatusField = named_enum(SeedDraft.Status, "SeedDraftStatusEnum")


class ModelJobOutput(serializers.ModelSerializer):
    purpose = PurposeField()
    status_words = serializers.CharField()
    percent = serializers.IntegerField()
    total = serializers.IntegerField(source="progress_total", read_only=True)
    done = serializers.IntegerField(source="progress_done", read_only=True)
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    failures = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        help_text="Drafting: [{what, error}] per location and topic that failed. Suggestions: each failed item's "
        "error is on its suggestion (`failed_items`).",
    )
    failed_items = serializers.SerializerMethodField()

    class Meta:
        model = ModelJob
        fields = [
            "id",
            "purpose",
            "status",
            "status_words",
            "endpoint_name",
            "model",
            "options",
            "total",
            "done",
            "percent",
            "answered",
            "failed",
            "failures",
            "failed_items",
            "stage",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_failed_items(self, job: ModelJob) -> list[dict[str, Any]]:
        rows = job.suggestions.filter(ok=False).order_by("item_id").values("item_id", "error")[:1000]
        return [{"item": row["item_id"], "error": row["error"]} for row in rows]


class SuggestionsStartInput(serializers.Serializer):
    endpoint = serializers.IntegerField(help_text="One of the project's model endpoints.")
    redo = serializers.BooleanField(default=False, help_text="Ask again for items that have a suggestion.")


class SeedDraftsStartInput(serializers.Serializer):
    endpoint = serializers.IntegerField(help_text="One of the project's model endpoints.")
    locations = serializers.ListField(child=serializers.CharField(max_length=200), min_length=1)
    topics = serializers.ListField(child=serializers.CharField(max_length=100), min_length=1)
    count = serializers.IntegerField(
        min_value=1, max_value=suggestions.MAX_DRAFTS_PER_PAIR, default=5, help_text="Queries per location and topic."
    )


class SeedDraftOutput(serializers.ModelSerializer):
    status = DraftStatusField()
    job = serializers.IntegerField(source="job_id")
    seed = serializers.IntegerField(source="seed_id", allow_null=True, help_text="The seed query it became.")
    reviewed_by = serializers.CharField(source="reviewed_by.username", default=None, allow_null=True)

    class Meta:
        model = SeedDraft
        fields = [
            "id",
            "job",
            "location",
            "topic",
            "language",
            "drafted",
            "query",
            "status",
            "seed",
            "note",
            "reviewed_by",
            "reviewed_at",
            "created_at",
        ]


class SeedDraftReviewInput(serializers.Serializer):
    action = serializers.ChoiceField(choices=["accept", "reject"])
    query = serializers.CharField(
        required=False, max_length=5000, help_text="The query as accepted (leave out: as drafted)."
    )


def _job(job: ModelJob) -> dict[str, Any]:
    job.refresh_from_db()
    return ModelJobOutput(job).data


class SuggestionJobListApi(APIView):
    parser_classes = [JSONParser]
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="Model suggestion jobs of the project, newest first (coordinator)",
        responses=responses({200: ModelJobOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        rows = ModelJob.objects.filter(project=project, purpose=ModelJob.Purpose.SUGGEST).select_related("created_by")
        return paginated(self, request, rows.order_by("-id"), ModelJobOutput)

    @extend_schema(
        tags=TAG,
        summary="Ask a model endpoint for suggestions on the items waiting for validation (coordinator)",
        description="Answers 202 with the job; a worker asks the model. Validators see each suggestion beside "
        "their controls; it never counts as a judgment.",
        request=SuggestionsStartInput,
        responses=responses({202: ModelJobOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(SuggestionsStartInput, request.data)
        with transaction.atomic():
            job = suggestions.suggestions_start(
                project=project, endpoint_id=data["endpoint"], user=request.user, redo=data["redo"]
            )
            body = _job(job)
        return Response(body, status=status.HTTP_202_ACCEPTED)


class ModelJobDetailApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="A model job's status, counts and failures (coordinator)",
        responses=responses({200: ModelJobOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, model_job_id: int) -> Response:
        return Response(_job(get_model_job(request.user, slug, model_job_id)))


class SeedDraftListApi(APIView):
    parser_classes = [JSONParser]
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="Drafted seed queries of the project (coordinator)",
        parameters=[
            OpenApiParameter("status", OpenApiTypes.STR, enum=SeedDraft.Status.values, description="Only these.")
        ],
        responses=responses({200: SeedDraftOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        rows = SeedDraft.objects.filter(project=project).select_related("reviewed_by").order_by("id")
        wanted = request.query_params.get("status")
        if wanted in SeedDraft.Status.values:
            rows = rows.filter(status=wanted)
        return paginated(self, request, rows, SeedDraftOutput)

    @extend_schema(
        tags=TAG,
        summary="Ask a model endpoint to draft seed queries per location and topic (coordinator)",
        description="Answers 202 with the job. Drafts wait for review: only accepted ones become seed queries.",
        request=SeedDraftsStartInput,
        responses=responses({202: ModelJobOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(SeedDraftsStartInput, request.data)
        with transaction.atomic():
            job = suggestions.seed_drafts_start(
                project=project,
                endpoint_id=data["endpoint"],
                locations=data["locations"],
                topics=data["topics"],
                count=data["count"],
                user=request.user,
            )
            body = _job(job)
        return Response(body, status=status.HTTP_202_ACCEPTED)


class SeedDraftReviewApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="Accept (as drafted or edited) or reject a drafted seed query (coordinator)",
        operation_id="projects_validation_seeds_draft_review",
        request=SeedDraftReviewInput,
        responses=responses({200: SeedDraftOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, draft_id: int) -> Response:
        draft = get_seed_draft(request.user, slug, draft_id)
        data = validated(SeedDraftReviewInput, request.data)
        draft = suggestions.seed_draft_review(
            draft=draft, user=request.user, action=data["action"], query=data.get("query")
        )
        return Response(SeedDraftOutput(draft).data)
