"""The REST API of search collections (coordinators): the services of validation/search.py, through
`validation.access`. A collection is started, polled, cancelled and resumed as the page does."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.models import Role
from common.api import ErrorOutput, named_enum, paginated, responses, validated
from common.parsers import JSONParser
from common.requests import SignedInApiRequest
from validation import search
from validation.access import get_search_collection, get_validation_project
from validation.models import SearchCollection, SearchEngine, SearchQuery, SearchType

TAG = ["validation"]

EngineField = named_enum(SearchEngine, "SearchEngineEnum")
SearchTypeField = named_enum(SearchType, "SearchTypeEnum")
QueryOriginField = named_enum(SearchQuery.Origin, "SearchQueryOriginEnum")
QueryStatusField = named_enum(SearchQuery.Status, "SearchQueryStatusEnum")


class SearchKeyInput(serializers.Serializer):
    api_key = serializers.CharField(max_length=search.MAX_KEY_LENGTH, help_text="The project's SerpApi key.")


class SearchKeyOutput(serializers.Serializer):
    key = serializers.CharField(help_text='"not set", or "set, ends in …abcd": the key itself is never shown.')


class SearchCollectionInput(serializers.Serializer):
    engine = EngineField(default=SearchEngine.GOOGLE)
    search_type = SearchTypeField(default=SearchType.TEXT)
    iterations = serializers.IntegerField(
        min_value=1, max_value=search.MAX_ITERATIONS, default=1, help_text="1: the seed queries only."
    )
    budget = serializers.IntegerField(
        min_value=1, max_value=search.MAX_BUDGET, help_text="Most calls to SerpApi; never exceeded."
    )
    location = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    gl = serializers.CharField(max_length=8, required=False, default="", allow_blank=True, help_text="e.g. qa")
    hl = serializers.CharField(max_length=16, required=False, default="", allow_blank=True, help_text="e.g. ar")


class SearchResumeInput(serializers.Serializer):
    budget = serializers.IntegerField(
        min_value=1, max_value=search.MAX_BUDGET, required=False, help_text="A new budget (at least the calls sent)."
    )


class SearchCollectionOutput(serializers.ModelSerializer):
    status_words = serializers.CharField()
    engine = EngineField()
    search_type = SearchTypeField()
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    percent = serializers.IntegerField()
    total = serializers.IntegerField(source="progress_total", read_only=True, help_text="Queries so far.")
    done = serializers.IntegerField(source="progress_done", read_only=True, help_text="Queries answered or failed.")
    queries = serializers.SerializerMethodField()

    class Meta:
        model = SearchCollection
        fields = [
            "id",
            "status",
            "status_words",
            "engine",
            "search_type",
            "location",
            "gl",
            "hl",
            "iterations",
            "budget",
            "calls_sent",
            "calls_cached",
            "items_created",
            "items_left_out",
            "total",
            "done",
            "percent",
            "stage",
            "queries",
            "cancel_requested",
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
            "description": "Queries by status: " + ", ".join(f"`{v}`" for v in SearchQuery.Status.values),
        }
    )
    def get_queries(self, collection: SearchCollection) -> dict[str, int]:
        return search.search_query_counts(collection)


class SearchQueryOutput(serializers.ModelSerializer):
    origin = QueryOriginField()
    status = QueryStatusField()

    class Meta:
        model = SearchQuery
        fields = [
            "position",
            "query",
            "iteration",
            "origin",
            "topic",
            "location",
            "status",
            "failures",
            "error",
            "items_created",
            "response",
            "done_at",
        ]


def _data(collection: SearchCollection) -> dict[str, Any]:
    collection.refresh_from_db()
    return SearchCollectionOutput(collection).data


class SearchKeyApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="Whether the project has a SerpApi key (coordinator)",
        responses=responses({200: SearchKeyOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        return Response({"key": search.search_key_hint(project)})

    @extend_schema(
        tags=TAG,
        summary="Set the project's SerpApi key (coordinator); stored encrypted, never shown again",
        request=SearchKeyInput,
        responses=responses({200: SearchKeyOutput}, conflict=False),
    )
    def put(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(SearchKeyInput, request.data)
        search.search_key_set(project=project, key=data["api_key"], user=request.user)
        return Response({"key": search.search_key_hint(project)})

    @extend_schema(
        tags=TAG,
        summary="Remove the project's SerpApi key (coordinator)",
        responses=responses({204: None}, bad_input=False, conflict=False),
    )
    def delete(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        search.search_key_remove(project=project, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SearchCollectionListApi(APIView):
    parser_classes = [JSONParser]
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="Search collections of the project, newest first (coordinator)",
        responses=responses({200: SearchCollectionOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        rows = SearchCollection.objects.filter(project=project).select_related("created_by").order_by("-id")
        return paginated(self, request, rows, SearchCollectionOutput)

    @extend_schema(
        tags=TAG,
        summary="Search with the project's seed queries through SerpApi (coordinator); a worker collects",
        description=(
            "Sends every seed query, then for `iterations` > 1 the related questions and searches of the "
            "responses, never more than `budget` calls. Queries answered before (same parameters) are read from "
            "the stored responses and cost nothing. Answers 202 with the collection; poll it for progress."
        ),
        request=SearchCollectionInput,
        responses=responses({202: SearchCollectionOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(SearchCollectionInput, request.data)
        with transaction.atomic():
            collection = search.search_collection_start(project=project, user=request.user, **data)
            body = _data(collection)
        return Response(body, status=status.HTTP_202_ACCEPTED)


class SearchCollectionDetailApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="A search collection's status, calls sent and cached, and queries by status (coordinator)",
        responses=responses({200: SearchCollectionOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, collection_id: int) -> Response:
        return Response(_data(get_search_collection(request.user, slug, collection_id)))


class SearchQueryListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="The queries of a search collection, in the order they are sent (coordinator)",
        parameters=[
            OpenApiParameter("status", OpenApiTypes.STR, enum=SearchQuery.Status.values, description="Only these.")
        ],
        responses=responses({200: SearchQueryOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, collection_id: int) -> Response:
        collection = get_search_collection(request.user, slug, collection_id)
        rows = SearchQuery.objects.filter(collection=collection).order_by("iteration", "position")
        wanted = request.query_params.get("status")
        if wanted in SearchQuery.Status.values:
            rows = rows.filter(status=wanted)
        return paginated(self, request, rows, SearchQueryOutput)


class SearchCancelApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Cancel a search collection (coordinator); a running one stops before its next query",
        request=None,
        responses=responses({200: SearchCollectionOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, collection_id: int) -> Response:
        collection = get_search_collection(request.user, slug, collection_id)
        return Response(_data(search.search_collection_cancel(collection=collection, user=request.user)))


class SearchResumeApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="Resume a search collection from its first unanswered query, optionally with a larger budget",
        request=SearchResumeInput,
        responses=responses(
            {202: SearchCollectionOutput, 409: OpenApiResponse(ErrorOutput, description="Not resumable now.")}
        ),
    )
    def post(self, request: SignedInApiRequest, slug: str, collection_id: int) -> Response:
        collection = get_search_collection(request.user, slug, collection_id)
        data = validated(SearchResumeInput, request.data or {})
        with transaction.atomic():
            resumed = search.search_collection_resume(
                collection=collection, user=request.user, budget=data.get("budget")
            )
            body = _data(resumed)
        return Response(body, status=status.HTTP_202_ACCEPTED)
