"""The local-knowledge check's setting through the API (coordinators): read it with the items' outcomes, set it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import project_access
from annotation.models import Role
from common.api import responses, validated
from common.errors import InvalidInput
from common.requests import SignedInApiRequest
from endpoints.models import Endpoint
from evaluation import local_checks
from evaluation.models import LocalCheckSetting


class SettingOutput(serializers.Serializer):
    enabled = serializers.BooleanField()
    endpoint = serializers.IntegerField(allow_null=True, help_text="The id of the model endpoint asked.")
    threshold = serializers.FloatField(help_text="chrF++ (0 to 1) from which a model answer counts as right.")
    judge = serializers.IntegerField(allow_null=True, help_text="A judge endpoint deciding instead of chrF++.")
    counts = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Items by outcome: not_answered, closed_book, standard_lead, waiting, failed.",
    )


class SettingInput(serializers.Serializer):
    enabled = serializers.BooleanField()
    endpoint = serializers.IntegerField(required=False, allow_null=True)
    threshold = serializers.FloatField(min_value=0, max_value=1, required=False, default=0.5)
    judge = serializers.IntegerField(required=False, allow_null=True)


def _output(setting: LocalCheckSetting) -> dict[str, Any]:
    return {
        "enabled": setting.enabled,
        "endpoint": setting.endpoint_id,
        "threshold": setting.threshold,
        "judge": setting.judge_id,
        "counts": local_checks.local_check_counts(setting.project),
    }


def _endpoint(project_id: int, pk: int | None, field: str) -> Endpoint | None:
    if pk is None:
        return None
    endpoint = Endpoint.objects.filter(project_id=project_id, pk=pk).first()
    if endpoint is None:
        raise InvalidInput(f"{field}: not a model endpoint of this project.", field=field)
    return endpoint


class LocalCheckSettingApi(APIView):
    @extend_schema(
        summary="The project's local-knowledge check and its items' outcomes",
        responses=responses({200: SettingOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        access = project_access(request.user, slug, role=Role.COORDINATOR)
        return Response(SettingOutput(_output(local_checks.local_check_setting(access.project))).data)

    @extend_schema(
        summary="Turn the local-knowledge check on or off, with its endpoint, threshold and optional judge",
        request=SettingInput,
        responses=responses({200: SettingOutput}, conflict=False),
    )
    def put(self, request: SignedInApiRequest, slug: str) -> Response:
        access = project_access(request.user, slug, role=Role.COORDINATOR)
        data = validated(SettingInput, request.data)
        project = access.project
        setting = local_checks.local_check_setting_save(
            project=project,
            user=request.user,
            enabled=data["enabled"],
            endpoint=_endpoint(project.pk, data.get("endpoint"), "endpoint"),
            threshold=data["threshold"],
            judge=_endpoint(project.pk, data.get("judge"), "judge"),
        )
        return Response(SettingOutput(_output(setting)).data)
