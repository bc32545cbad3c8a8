"""The judge REST API: the judge prompt (read, new version), a run's judgments (list, start, one with its results and
agreement, resume), the judged items (list, a person's check, an override), and a run compared with a baseline."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from common.api import named_enum, paginated, responses, validated
from common.jobs import JobStatus
from common.requests import SignedInApiRequest
from endpoints.access import get_endpoint_for_user
from evaluation import comparing, judging
from evaluation.access import (
    ROLES,
    evaluation_access,
    get_judged_item_for_user,
    get_judgment_for_user,
    get_run_for_user,
)
from evaluation.models import JudgedItem, JudgePrompt, Judgment, Verdict

StatusField = named_enum(JobStatus, "JudgmentStatus")
VerdictField = named_enum(Verdict, "JudgeVerdict")


class PersonVerdict(models.TextChoices):
    YES = "yes", "Correct"
    NO = "no", "Incorrect"


PersonVerdictField = named_enum(PersonVerdict, "JudgeCheckVerdict")


class PromptOutput(serializers.ModelSerializer):
    class Meta:
        model = JudgePrompt
        fields = ["version", "text", "created_at"]
        read_only_fields = fields


class PromptInput(serializers.Serializer):
    text = serializers.CharField(max_length=judging.MAX_PROMPT_CHARS, help_text="With {question}, {gold}, {answer}.")


class JudgePromptApi(APIView):
    @extend_schema(
        summary="The project's current judge prompt", responses=responses({200: PromptOutput}, bad_input=False)
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        access = evaluation_access(request.user, slug)
        return Response(PromptOutput(judging.judge_prompt_current(access.project)).data)

    @extend_schema(
        summary="Save the judge prompt as a new version (the same text saves nothing)",
        request=PromptInput,
        responses=responses({200: PromptOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        access = evaluation_access(request.user, slug)
        data = validated(PromptInput, request.data)
        prompt = judging.judge_prompt_save(project=access.project, user=request.user, text=data["text"])
        return Response(PromptOutput(prompt).data)


class ResultOutput(serializers.Serializer):
    kind = serializers.CharField()
    model = serializers.CharField()
    scenario = serializers.CharField()
    yes = serializers.IntegerField()
    no = serializers.IntegerField()
    unscored = serializers.IntegerField(help_text="Neither YES nor NO after every ask: left out of n, never 0.")
    failed = serializers.IntegerField(help_text="Judge calls that failed (asked again when the judgment resumes).")
    overridden = serializers.IntegerField()
    not_asked = serializers.IntegerField(help_text="Items without an answer, counted NO without a call.")
    n = serializers.IntegerField(help_text="YES + NO.")
    accuracy = serializers.FloatField(allow_null=True, help_text="YES / (YES + NO); null when n is 0.")
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)


class CoefficientOutput(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    se = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)


class AgreementOutput(serializers.Serializer):
    n = serializers.IntegerField(help_text="Items both the judge and a person called YES or NO.")
    checked = serializers.IntegerField(help_text="Items a person checked.")
    table = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Rows: the judge YES, NO; columns: the person YES, NO.",
    )
    raw = CoefficientOutput()
    kappa = CoefficientOutput()
    ac1 = CoefficientOutput()
    convention = serializers.CharField()


class JudgeRunOutput(serializers.ModelSerializer):
    status = StatusField(read_only=True)
    percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = Judgment
        fields = [
            "id",
            "run",
            "status",
            "endpoint_name",
            "endpoint_model",
            "prompt_version",
            "temperature",
            "max_asks",
            "progress_done",
            "progress_total",
            "percent",
            "error",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields


class JudgeRunDetailOutput(JudgeRunOutput):
    """The schema of a judgment's detail (built by `_detail`)."""

    prompt_text = serializers.CharField(read_only=True)
    results = ResultOutput(many=True, read_only=True)
    agreement = AgreementOutput(read_only=True)

    class Meta(JudgeRunOutput.Meta):
        fields = [*JudgeRunOutput.Meta.fields, "prompt_text", "results", "agreement"]
        read_only_fields = fields


class JudgmentStartInput(serializers.Serializer):
    endpoint = serializers.IntegerField(min_value=1, max_value=2**63 - 1, help_text="The judge: an endpoint's id.")


class JudgmentListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="The judgments of a run, newest first",
        responses=responses({200: JudgeRunOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int) -> Response:
        _, run = get_run_for_user(request.user, slug, run_id)
        return paginated(self, request, Judgment.objects.filter(run=run), JudgeRunOutput)

    @extend_schema(
        summary="Judge a scored run's answers with a model endpoint and the current judge prompt (a job)",
        description="202 with the judgment; poll it. 409 while another judgment of the run waits or runs.",
        request=JudgmentStartInput,
        responses=responses({202: JudgeRunOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, run_id: int) -> Response:
        _, run = get_run_for_user(request.user, slug, run_id)
        data = validated(JudgmentStartInput, request.data)
        _, endpoint = get_endpoint_for_user(request.user, slug, data["endpoint"], role=ROLES)
        judgment = judging.judgment_start(run=run, endpoint=endpoint, user=request.user)
        judgment.refresh_from_db()
        return Response(JudgeRunOutput(judgment).data, status=status.HTTP_202_ACCEPTED)


def _detail(judgment: Judgment) -> dict[str, Any]:
    data = dict(JudgeRunOutput(judgment).data)
    data["prompt_text"] = judgment.prompt.text
    data["results"] = ResultOutput(judging.judgment_results(judgment), many=True).data
    data["agreement"] = AgreementOutput(judging.judgment_agreement(judgment)).data
    return data


class JudgmentDetailApi(APIView):
    @extend_schema(
        summary="A judgment: status, judge, prompt version, accuracy per cell and agreement with people",
        responses=responses({200: JudgeRunDetailOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int, judgment_id: int) -> Response:
        _, _, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id)
        return Response(_detail(judgment))


class JudgmentResumeApi(APIView):
    @extend_schema(
        summary="Ask again what has no verdict yet (failed calls, an interrupted judgment)",
        request=None,
        responses=responses({202: JudgeRunOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, run_id: int, judgment_id: int) -> Response:
        _, _, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id)
        judgment = judging.judgment_resume(judgment=judgment)
        return Response(JudgeRunOutput(judgment).data, status=status.HTTP_202_ACCEPTED)


class JudgmentCsvApi(APIView):
    @extend_schema(
        summary="Every verdict of a judgment as CSV, the judge's model and prompt version on each line",
        responses=responses(
            {200: OpenApiResponse(OpenApiTypes.BINARY, description="text/csv")}, bad_input=False, conflict=False
        ),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int, judgment_id: int) -> HttpResponse:
        _, run, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id)
        response = HttpResponse(judging.judgment_csv(judgment), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{slug}-run{run.pk}-judgment{judgment.pk}.csv"'
        return response


class JudgedItemOutput(serializers.ModelSerializer):
    verdict = VerdictField(read_only=True)
    item_id = serializers.CharField(source="prediction.item_id", read_only=True)
    model = serializers.CharField(source="prediction.model", read_only=True)
    scenario = serializers.CharField(source="prediction.scenario", read_only=True)
    answer = serializers.CharField(source="prediction.extracted", read_only=True)
    outputs = serializers.ListField(child=serializers.CharField(), read_only=True, help_text="Each ask's output.")
    call_ids = serializers.ListField(child=serializers.IntegerField(), read_only=True)
    human = serializers.CharField(read_only=True, help_text="A person's own call: yes, no, or empty.")
    override = serializers.CharField(read_only=True, help_text="A person's override of the judge: yes, no, or empty.")
    effective = serializers.CharField(read_only=True, help_text="The override, else the judge's verdict.")

    class Meta:
        model = JudgedItem
        fields = [
            "id",
            "item_id",
            "model",
            "scenario",
            "answer",
            "verdict",
            "asked",
            "asks",
            "outputs",
            "call_ids",
            "error",
            "human",
            "override",
            "effective",
        ]
        read_only_fields = fields


class JudgedItemListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Every verdict of a judgment with the judge's raw outputs, people's checks and overrides",
        parameters=[OpenApiParameter("verdict", str, required=False, enum=list(Verdict.values))],
        responses=responses({200: JudgedItemOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int, judgment_id: int) -> Response:
        _, _, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id)
        verdict = request.query_params.get("verdict", "")
        items = judging.judgment_items(judgment, verdict=verdict if verdict in Verdict.values else "")
        return paginated(self, request, items, JudgedItemOutput)


class JudgeVerdictInput(serializers.Serializer):
    verdict = PersonVerdictField()


class JudgedItemCheckApi(APIView):
    @extend_schema(
        summary="A person's own call on a judged item (yes: correct, no: incorrect)",
        request=JudgeVerdictInput,
        responses=responses({200: JudgedItemOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, run_id: int, judgment_id: int, judged_id: int) -> Response:
        _, _, item = get_judged_item_for_user(request.user, slug, run_id, judgment_id, judged_id)
        data = validated(JudgeVerdictInput, request.data)
        return Response(JudgedItemOutput(judging.judged_item_check(item=item, user=request.user, **data)).data)


class JudgedItemOverrideApi(APIView):
    @extend_schema(
        summary="Override the judge on an item; the same verdict again restores the judge's",
        request=JudgeVerdictInput,
        responses=responses({200: JudgedItemOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, run_id: int, judgment_id: int, judged_id: int) -> Response:
        _, _, item = get_judged_item_for_user(request.user, slug, run_id, judgment_id, judged_id)
        data = validated(JudgeVerdictInput, request.data)
        return Response(JudgedItemOutput(judging.judged_item_override(item=item, user=request.user, **data)).data)


class CompareRowOutput(serializers.Serializer):
    scenario = serializers.CharField()
    item_id = serializers.CharField()
    baseline = serializers.BooleanField(allow_null=True)
    this = serializers.BooleanField(allow_null=True)
    status = serializers.CharField(help_text="regression, improvement, not comparable, both incorrect, both correct.")


class PairedOutput(serializers.Serializer):
    n = serializers.IntegerField()
    delta = serializers.FloatField(allow_null=True, help_text="Mean of this − baseline over comparable items.")
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    p = serializers.FloatField(allow_null=True, help_text="Exact McNemar.")


class CompareOutput(serializers.Serializer):
    run = serializers.IntegerField()
    baseline = serializers.IntegerField()
    measure = serializers.CharField()
    model = serializers.CharField()
    baseline_model = serializers.CharField()
    scenario = serializers.CharField()
    counts = serializers.DictField(child=serializers.IntegerField())
    paired = PairedOutput()
    only_here = serializers.IntegerField()
    only_in_baseline = serializers.IntegerField()
    rows = CompareRowOutput(many=True)
    rows_left_out = serializers.IntegerField()


class CompareInput(serializers.Serializer):
    baseline = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    measure = serializers.CharField(max_length=400)
    model = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    baseline_model = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    scenario = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)


class RunCompareApi(APIView):
    @extend_schema(
        summary="A run item by item against a baseline run of the same release: flips, regressions first",
        parameters=[
            OpenApiParameter("baseline", int, required=True),
            OpenApiParameter("measure", str, required=True, description="A proportion metric or judge:<name>:<v>"),
            OpenApiParameter("model", str, required=False),
            OpenApiParameter("baseline_model", str, required=False),
            OpenApiParameter("scenario", str, required=False),
        ],
        responses=responses({200: CompareOutput}, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int) -> Response:
        _, run = get_run_for_user(request.user, slug, run_id)
        data = validated(CompareInput, request.query_params)
        _, baseline = get_run_for_user(request.user, slug, data.pop("baseline"))
        return Response(CompareOutput(comparing.runs_compare(run=run, baseline=baseline, **data)).data)
