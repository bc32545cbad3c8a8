"""Project agreement reports over the API: list them, queue one, read one (every statistic with its counts).

Same rules and services as the agreement page (`review.reports`): coordinators
and reviewers read reports (reviewers without per-rater figures), coordinators
queue them. A report is computed by a worker; poll its `status` and `progress`.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import get_project_for_user
from annotation.models import Role
from common.api import ErrorOutput, named_enum
from common.requests import SignedInApiRequest
from review import reports
from review.models import AgreementReport

NOT_ALLOWED = OpenApiResponse(ErrorOutput, description="Not logged in, or a member without the needed role.")
NOT_FOUND = OpenApiResponse(ErrorOutput, description="No such report, or you are not a member of the project.")
LIST_LIMIT = 100
ReportStatusField = named_enum(AgreementReport.Status, "AgreementReportStatusEnum")
ReportTriggerField = named_enum(AgreementReport.Trigger, "AgreementReportTriggerEnum")


class HeadlineOutput(serializers.Serializer):
    label = serializers.CharField()  # type: ignore[assignment]  # the JSON key, not Field.label
    alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's alpha; null when undefined.")
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    n_units = serializers.IntegerField()
    n_judgments = serializers.IntegerField()


class ReportOutput(serializers.ModelSerializer):
    status = ReportStatusField(read_only=True)
    trigger = ReportTriggerField(read_only=True)
    requested_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    progress = serializers.IntegerField(source="progress_done", read_only=True, help_text="Percent done.")
    headline = serializers.DictField(
        child=HeadlineOutput(), help_text="Per scope (review:<criterion>, label:topic, label:region, screening)."
    )
    url = serializers.SerializerMethodField()

    class Meta:
        model = AgreementReport
        fields = [
            "id",
            "status",
            "trigger",
            "requested_by",
            "progress",
            "stage",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "fingerprint",
            "same_as",
            "headline",
            "url",
        ]

    def get_url(self, report: AgreementReport) -> str:
        return f"/api/projects/{report.project.slug}/agreement/reports/{report.pk}/"


class ReportDetailOutput(ReportOutput):
    result = serializers.SerializerMethodField(
        help_text="Every statistic per scope: `scopes.<key>.summary` (overall `statistics`, `pairs`, `matrices`, "
        "`contested_units` with item_id/pair_id) and `scopes.<key>.strata.<topic|region|annotator>`; "
        "the layout of review.agreement's summary (docs/agreement.md)."
    )

    class Meta(ReportOutput.Meta):
        fields = [*ReportOutput.Meta.fields, "result"]

    def get_result(self, report: AgreementReport) -> dict:
        return reports.result_for_viewer(report.result, self.context["membership"])


class ReportListApi(APIView):
    @extend_schema(
        summary="The project's agreement reports, newest first",
        responses={200: ReportOutput(many=True), 403: NOT_ALLOWED, 404: NOT_FOUND},
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = reports.agreement_access(request.user, slug).project
        rows = list(reports.reports_for_project(project)[:LIST_LIMIT])
        for row in rows:
            row.project = project
        return Response(ReportOutput(rows, many=True).data)

    @extend_schema(
        summary="Queue an agreement report (coordinators)",
        description="202 with the new report; 200 with the report already queued or running (one at a time).",
        request=None,
        responses={202: ReportOutput, 200: ReportOutput, 403: NOT_ALLOWED, 404: NOT_FOUND},
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        report, created = reports.agreement_report_request(
            project=project, user=request.user, trigger=AgreementReport.Trigger.API
        )
        report.project = project
        return Response(ReportOutput(report).data, status=status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK)


class ReportDetailApi(APIView):
    @extend_schema(
        summary="One agreement report with every statistic and the counts behind it",
        responses={200: ReportDetailOutput, 403: NOT_ALLOWED, 404: NOT_FOUND},
    )
    def get(self, request: SignedInApiRequest, slug: str, report_id: int) -> Response:
        access, report = reports.get_report_for_user(request.user, slug, report_id)
        return Response(ReportDetailOutput(report, context={"membership": access.membership}).data)
