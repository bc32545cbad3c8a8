"""The API of Wikipedia collections (coordinators): collecting page pairs from Wikipedia for titles or a category.

A collection runs on a worker. Creating one answers 202 with the row; its status and progress are read back from
the same row. Paths and names are the ones these views had in `annotation` (`wikiqa/api_urls.py`).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation import access
from annotation.models import Role
from common.api import ErrorOutput, named_enum, paginated, responses, validated
from common.parsers import JSONParser
from common.requests import SignedInApiRequest
from wikiqa import collect
from wikiqa.access import get_collection_for_user
from wikiqa.models import Collection, CollectionTitle

CollectionStatusField = named_enum(Collection.Status, "CollectionStatusEnum")
CollectionSourceField = named_enum(Collection.Source, "CollectionSourceEnum")
OutcomeField = named_enum(CollectionTitle.Outcome, "CollectionOutcomeEnum")


class CollectionCreateInput(serializers.Serializer):
    titles = serializers.ListField(child=serializers.CharField(max_length=500), required=False, default=list)
    category = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)
    local_heavy_only = serializers.BooleanField(default=True)
    standard_variant = serializers.CharField(
        max_length=16, required=False, allow_null=True, default=None, help_text="e.g. zh-hk; default: the project's."
    )


class CollectionOutput(serializers.ModelSerializer):
    status = CollectionStatusField()
    # DRF's metaclass takes declared fields off the class; the stubs see this as Field.source, a str.
    source = CollectionSourceField()  # type: ignore[assignment]
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    dropped = serializers.IntegerField()
    percent = serializers.IntegerField()
    total = serializers.IntegerField(source="progress_total", read_only=True, help_text="Titles to process.")
    done = serializers.IntegerField(source="progress_done", read_only=True, help_text="Titles processed.")
    outcomes = serializers.SerializerMethodField()

    class Meta:
        model = Collection
        fields = [
            "id",
            "status",
            "source",
            "category",
            "local_wiki",
            "standard_wiki",
            "standard_variant",
            "local_heavy_only",
            "cancel_requested",
            "total",
            "done",
            "kept",
            "dropped",
            "created_pairs",
            "percent",
            "outcomes",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]

    @extend_schema_field(
        {
            "type": "object",
            "additionalProperties": {"type": "integer"},
            "description": "Titles by outcome: " + ", ".join(f"`{v}`" for v in CollectionTitle.Outcome.values),
        }
    )
    def get_outcomes(self, collection: Collection) -> dict[str, int]:
        if not self.context.get("with_outcomes"):
            return {}
        return collect.collection_outcome_counts(collection)


class CollectionTitleOutput(serializers.ModelSerializer):
    outcome = OutcomeField()

    class Meta:
        model = CollectionTitle
        fields = [
            "position",
            "title",
            "outcome",
            "error",
            "local_title",
            "standard_title",
            "local_revision",
            "standard_revision",
            "pair",
            "pair_created",
            "processed_at",
        ]


def _collection_data(collection: Collection) -> dict[str, Any]:
    return CollectionOutput(collection, context={"with_outcomes": True}).data


class CollectionListApi(APIView):
    parser_classes = [JSONParser]
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Wikipedia collections of the project, newest first (coordinator)",
        responses=responses({200: CollectionOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        collections = Collection.objects.filter(project=project).select_related("created_by")
        return paginated(self, request, collections.order_by("-created_at", "-id"), CollectionOutput)

    @extend_schema(
        summary="Collect page pairs from Wikipedia for titles or a category (coordinator)",
        description="Give `titles` (local-wiki titles) or a `category`. Answers 202; a worker collects.",
        request=CollectionCreateInput,
        responses=responses({202: CollectionOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        data = validated(CollectionCreateInput, request.data)
        collection = collect.collection_create(project=project, user=request.user, **data)
        collection.refresh_from_db()
        return Response(_collection_data(collection), status=status.HTTP_202_ACCEPTED)


class CollectionDetailApi(APIView):
    @extend_schema(
        summary="A collection's status and progress, with titles counted by outcome (coordinator)",
        responses=responses({200: CollectionOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, collection_id: int) -> Response:
        collection = get_collection_for_user(request.user, slug, collection_id)
        return Response(_collection_data(collection))


class CollectionTitlesApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="The titles of a collection and what became of each (coordinator)",
        parameters=[
            OpenApiParameter(
                "outcome", OpenApiTypes.STR, enum=CollectionTitle.Outcome.values, description="Only this outcome."
            )
        ],
        responses=responses({200: CollectionTitleOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, collection_id: int) -> Response:
        collection = get_collection_for_user(request.user, slug, collection_id)
        titles = CollectionTitle.objects.filter(collection=collection).order_by("position")
        outcome = request.query_params.get("outcome")
        if outcome in CollectionTitle.Outcome.values:
            titles = titles.filter(outcome=outcome)
        return paginated(self, request, titles, CollectionTitleOutput)


class CollectionCancelApi(APIView):
    @extend_schema(
        summary="Cancel a collection (coordinator); a running one stops before its next title",
        request=None,
        responses=responses({200: CollectionOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, collection_id: int) -> Response:
        collection = get_collection_for_user(request.user, slug, collection_id)
        collection = collect.collection_cancel(collection=collection, actor=request.user)
        return Response(_collection_data(collection))


class CollectionResumeApi(APIView):
    @extend_schema(
        summary="Resume a cancelled, failed or stalled collection from its first open title (coordinator)",
        request=None,
        responses=responses(
            {202: CollectionOutput, 409: OpenApiResponse(ErrorOutput, description="Not resumable now.")},
            bad_input=False,
        ),
    )
    def post(self, request: SignedInApiRequest, slug: str, collection_id: int) -> Response:
        collection = get_collection_for_user(request.user, slug, collection_id)
        collection = collect.collection_resume(collection=collection, actor=request.user)
        return Response(_collection_data(collection), status=status.HTTP_202_ACCEPTED)
