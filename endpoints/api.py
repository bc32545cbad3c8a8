"""The model endpoints REST API (coordinators): list, add, change, delete and test a project's endpoints, forget
their cached replies, and read the recorded calls. The API key is write-only: `key_set` says whether one is
stored, nothing ever returns it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from common.api import NO_CONTENT, named_enum, paginated, responses, validated
from common.errors import InvalidInput
from common.requests import SignedInApiRequest
from endpoints import services
from endpoints.access import endpoints_access, get_endpoint_for_user
from endpoints.models import Endpoint, ErrorKind, Mode, ModelCall

ModeField = named_enum(Mode, "EndpointMode")
ErrorKindField = named_enum(ErrorKind, "ModelCallErrorKind")


class EndpointOutput(serializers.ModelSerializer):
    key_set = serializers.BooleanField(read_only=True, help_text="Whether an API key is stored (never shown).")
    call_count = serializers.IntegerField(read_only=True, help_text="Calls recorded, cache hits included.")
    failed_count = serializers.IntegerField(read_only=True)
    cached_count = serializers.IntegerField(read_only=True)
    tokens_in_total = serializers.IntegerField(read_only=True, allow_null=True, help_text="Sent calls only.")
    tokens_out_total = serializers.IntegerField(read_only=True, allow_null=True, help_text="Sent calls only.")
    cost_total = serializers.DecimalField(max_digits=20, decimal_places=8, read_only=True, allow_null=True)
    mode = ModeField(read_only=True)

    class Meta:
        model = Endpoint
        fields = [
            "id",
            "name",
            "base_url",
            "model",
            "mode",
            "temperature",
            "top_p",
            "max_tokens",
            "seed",
            "stop",
            "concurrency",
            "timeout_seconds",
            "price_input",
            "price_output",
            "key_set",
            "version",
            "call_count",
            "failed_count",
            "cached_count",
            "tokens_in_total",
            "tokens_out_total",
            "cost_total",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class EndpointInput(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    base_url = serializers.CharField(max_length=500, help_text="Its host must be in the operator's allow-list.")
    model = serializers.CharField(max_length=200)
    mode = ModeField(required=False)
    temperature = serializers.FloatField(required=False, allow_null=True)
    top_p = serializers.FloatField(required=False, allow_null=True)
    max_tokens = serializers.IntegerField(required=False, allow_null=True)
    seed = serializers.IntegerField(required=False, allow_null=True)
    stop = serializers.ListField(child=serializers.CharField(trim_whitespace=False), required=False, max_length=4)
    concurrency = serializers.IntegerField(required=False)
    timeout_seconds = serializers.IntegerField(required=False)
    price_input = serializers.DecimalField(max_digits=12, decimal_places=4, required=False, allow_null=True)
    price_output = serializers.DecimalField(max_digits=12, decimal_places=4, required=False, allow_null=True)
    api_key = serializers.CharField(
        required=False, allow_blank=True, write_only=True, trim_whitespace=True, help_text="Write-only."
    )


class EndpointPatch(EndpointInput):
    name = serializers.CharField(max_length=100, required=False)
    base_url = serializers.CharField(max_length=500, required=False)
    model = serializers.CharField(max_length=200, required=False)
    api_key = serializers.CharField(
        required=False,
        allow_blank=True,
        write_only=True,
        trim_whitespace=True,
        help_text="Write-only. Absent or empty: the stored key stays; a text replaces it.",
    )
    remove_key = serializers.BooleanField(required=False, help_text="Drop the stored key.")
    version = serializers.IntegerField(required=False, help_text="The version you read: a change made since is 409.")


class CompletionOutput(serializers.Serializer):
    ok = serializers.BooleanField()
    text = serializers.CharField()
    finish_reason = serializers.CharField()
    tokens_in = serializers.IntegerField(allow_null=True)
    tokens_out = serializers.IntegerField(allow_null=True)
    latency_ms = serializers.IntegerField()
    attempts = serializers.IntegerField()
    cached = serializers.BooleanField()
    error_kind = serializers.CharField(help_text="Empty, or one of the ModelCallErrorKind values.")
    error = serializers.CharField()
    cost = serializers.DecimalField(max_digits=16, decimal_places=8, allow_null=True)
    call_id = serializers.IntegerField()


class ModelCallOutput(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)  # type: ignore[var-annotated]
    error_kind = ErrorKindField(read_only=True)

    class Meta:
        model = ModelCall
        fields = [
            "id",
            "endpoint",
            "endpoint_name",
            "model",
            "purpose",
            "request_hash",
            "status",
            "cached",
            "error_kind",
            "error",
            "finish_reason",
            "tokens_in",
            "tokens_out",
            "latency_ms",
            "attempts",
            "cost",
            "created_by",
            "created_at",
        ]
        read_only_fields = fields


def _settings(values: dict[str, Any]) -> dict[str, Any]:
    return {name: values[name] for name in services.SETTINGS_FIELDS if name in values}


def _output(endpoint: Endpoint) -> dict[str, Any]:
    row = services.endpoints_for_project(endpoint.project).get(pk=endpoint.pk)
    return dict(EndpointOutput(row).data)


class EndpointListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="A project's model endpoints, with their calls' totals (coordinator)",
        responses=responses({200: EndpointOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        access = endpoints_access(request.user, slug)
        return paginated(self, request, services.endpoints_for_project(access.project), EndpointOutput)

    @extend_schema(
        summary="Add a model endpoint (coordinator); its host must be one the operator allows",
        request=EndpointInput,
        responses=responses({201: EndpointOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        access = endpoints_access(request.user, slug)
        values = validated(EndpointInput, request.data)
        endpoint = services.endpoint_create(
            project=access.project, user=request.user, api_key=values.get("api_key", ""), **_settings(values)
        )
        return Response(_output(endpoint), status=status.HTTP_201_CREATED)


class EndpointDetailApi(APIView):
    @extend_schema(
        summary="A model endpoint (coordinator)",
        responses=responses({200: EndpointOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, endpoint_id: int) -> Response:
        _, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id)
        return Response(_output(endpoint))

    @extend_schema(
        summary="Change a model endpoint (coordinator); the key is kept unless a new one or remove_key is sent",
        request=EndpointPatch,
        responses=responses({200: EndpointOutput}),
    )
    def patch(self, request: SignedInApiRequest, slug: str, endpoint_id: int) -> Response:
        _, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id)
        values = validated(EndpointPatch, request.data)
        endpoint = services.endpoint_update(
            endpoint=endpoint,
            user=request.user,
            version=values.get("version"),
            api_key=values.get("api_key"),
            remove_key=values.get("remove_key", False),
            **_settings(values),
        )
        return Response(_output(endpoint))

    @extend_schema(
        summary="Delete a model endpoint and its key (coordinator); its recorded calls stay",
        responses=responses({204: NO_CONTENT}, bad_input=False, conflict=False),
    )
    def delete(self, request: SignedInApiRequest, slug: str, endpoint_id: int) -> Response:
        _, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id)
        services.endpoint_delete(endpoint=endpoint, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class EndpointTestApi(APIView):
    @extend_schema(
        summary="Send one short prompt to the endpoint and return the reply or the error (coordinator)",
        description=f"One attempt, at most {services.TEST_TIMEOUT:.0f} s, never from the cache; recorded as a call "
        "with purpose `test`. A server's failure is 200 with `ok: false` and the reason.",
        request=None,
        responses=responses({200: CompletionOutput}, bad_input=False, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, endpoint_id: int) -> Response:
        _, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id)
        completion = services.endpoint_test(endpoint=endpoint, user=request.user)
        return Response(CompletionOutput(completion).data)


class EndpointCacheApi(APIView):
    @extend_schema(
        summary="Forget the cached replies of this endpoint's base URL and model (coordinator)",
        responses=responses(
            {200: inline_serializer("CacheCleared", {"forgotten": serializers.IntegerField()})},
            bad_input=False,
            conflict=False,
        ),
    )
    def delete(self, request: SignedInApiRequest, slug: str, endpoint_id: int) -> Response:
        _, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id)
        return Response({"forgotten": services.endpoint_cache_clear(endpoint=endpoint, user=request.user)})


class ModelCallListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="The project's recorded model calls, newest first (coordinator)",
        parameters=[OpenApiParameter("endpoint", OpenApiTypes.INT, description="Only this endpoint's calls.")],
        responses=responses({200: ModelCallOutput(many=True)}, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        access = endpoints_access(request.user, slug)
        endpoint = None
        if request.query_params.get("endpoint"):
            try:
                endpoint_id = int(request.query_params["endpoint"])
            except ValueError:
                raise InvalidInput("endpoint: an endpoint id, please.", field="endpoint") from None
            _, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id)
        return paginated(self, request, services.calls_for_project(access.project, endpoint=endpoint), ModelCallOutput)
