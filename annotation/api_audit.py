"""The audit log over the API: read-only, filtered like the page, paginated (limit/offset)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation import access
from annotation import audit_log as services
from annotation.models import Project, Role
from common.api import responses, validated
from common.requests import SignedInApiRequest


class EventFilterInput(serializers.Serializer):
    actor = serializers.CharField(required=False, max_length=150, help_text="Username of who did it.")
    action = serializers.ChoiceField(choices=list(services.action_labels()), required=False)
    object_type = serializers.CharField(
        required=False,
        max_length=24,
        help_text=f"One of {', '.join(services.TYPE_CHOICES)}, or a type another app records (e.g. 'seed query').",
    )
    object_id = serializers.IntegerField(required=False, min_value=1, max_value=2**62)
    since = serializers.DateField(required=False, help_text="From this day on (inclusive).")
    until = serializers.DateField(required=False, help_text="Up to this day (inclusive).")

    def validate(self, data: dict) -> dict:
        if data.get("since") and data.get("until") and data["since"] > data["until"]:
            raise serializers.ValidationError({"until": ["must not be before since"]})
        return data


class SiteEventFilterInput(EventFilterInput):
    project = serializers.SlugField(required=False, max_length=60, help_text="Slug of one project.")


class AuditEventOutput(serializers.Serializer):
    at = serializers.DateTimeField()
    # DRF's metaclass takes declared fields off the class; the stubs see this as Field.source, a str.
    source = serializers.CharField(  # type: ignore[assignment]
        help_text="audit: the audit log; item_event: an item's review history."
    )
    id = serializers.IntegerField(help_text="Row id within its source.")
    project = serializers.CharField(help_text="Project slug; empty for a purged project.")
    actor = serializers.CharField(help_text="Username; empty for the system (a worker).")
    action = serializers.CharField()
    action_label = serializers.CharField()
    object_type = serializers.CharField()
    object_id = serializers.IntegerField(allow_null=True)
    object_label = serializers.CharField()
    details = serializers.DictField(help_text="What changed, e.g. before and after.")


def _page(view: APIView, request: SignedInApiRequest, project: Project | None, flt: services.EventFilter) -> Response:
    paginator = view.pagination_class()  # type: ignore[attr-defined]
    rows = paginator.paginate_queryset(services.events(project=project, flt=flt), request, view=view)
    return paginator.get_paginated_response(AuditEventOutput(services.describe(list(rows)), many=True).data)


class ProjectAuditApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="The project's audit log, newest first (coordinator)",
        parameters=[EventFilterInput],
        responses=responses({200: AuditEventOutput(many=True)}, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        data = validated(EventFilterInput, request.query_params)
        return _page(self, request, project, services.EventFilter(**data))


class SiteAuditApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="The audit log of every project, newest first (superuser)",
        parameters=[SiteEventFilterInput],
        responses=responses({200: AuditEventOutput(many=True)}, conflict=False, not_found=False),
    )
    def get(self, request: SignedInApiRequest) -> Response:
        if not request.user.is_superuser:
            raise PermissionDenied("The log of every project is for superusers.")
        data = validated(SiteEventFilterInput, request.query_params)
        return _page(self, request, None, services.EventFilter(**data))
