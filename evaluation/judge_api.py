"""The judge REST API: the judge prompt of each rubric (read, new version), a run's judgments (list, start with a
rubric, one with its results and agreement per cell, resume), check samples (list, draw k per scenario), the judged
items (list, the next to check, a person's check, an override), and a run compared with a baseline."""

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
from common.errors import ServiceError
from common.jobs import JobStatus
from common.requests import SignedInApiRequest
from endpoints.access import get_endpoint_for_user
from evaluation import comparing, judging
from evaluation.access import (
    CHECKERS,
    ROLES,
    evaluation_access,
    get_judged_item_for_user,
    get_judgment_for_user,
    get_run_for_user,
)
from evaluation.models import RUBRIC_VERDICTS, JudgeCheckSample, JudgedItem, JudgePrompt, Judgment, Rubric, Verdict
from evaluation.services import evaluation_run_gold

StatusField = named_enum(JobStatus, "JudgmentStatus")
VerdictField = named_enum(Verdict, "JudgeVerdict")
RubricField = named_enum(Rubric, "JudgeRubric")


class PersonVerdict(models.TextChoices):
    YES = "yes", "Correct (YES / NO rubric)"
    NO = "no", "Incorrect (YES / NO rubric)"
    CORRECT = "correct", "Correct (three-way rubric)"
    INCORRECT = "incorrect", "Incorrect (three-way rubric)"
    NOT_ATTEMPTED = "not_attempted", "Not attempted (three-way rubric)"


PersonVerdictField = named_enum(PersonVerdict, "JudgeCheckVerdict")


class PromptOutput(serializers.ModelSerializer):
    rubric = RubricField(read_only=True)

    class Meta:
        model = JudgePrompt
        fields = ["version", "rubric", "text", "created_at"]
        read_only_fields = fields


class PromptInput(serializers.Serializer):
    text = serializers.CharField(max_length=judging.MAX_PROMPT_CHARS, help_text="With {question}, {gold}, {answer}.")
    rubric = RubricField(required=False, default=Rubric.YES_NO)


class PromptQuery(serializers.Serializer):
    rubric = RubricField(required=False, default=Rubric.YES_NO)


class JudgePromptApi(APIView):
    @extend_schema(
        summary="The project's current judge prompt of a rubric (yes_no unless asked)",
        parameters=[OpenApiParameter("rubric", str, required=False, enum=list(Rubric.values))],
        responses=responses({200: PromptOutput}, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        access = evaluation_access(request.user, slug)
        rubric = validated(PromptQuery, request.query_params)["rubric"]
        return Response(PromptOutput(judging.judge_prompt_current(access.project, rubric)).data)

    @extend_schema(
        summary="Save a rubric's judge prompt as a new version (the same text saves nothing)",
        request=PromptInput,
        responses=responses({200: PromptOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        access = evaluation_access(request.user, slug)
        data = validated(PromptInput, request.data)
        prompt = judging.judge_prompt_save(project=access.project, user=request.user, **data)
        return Response(PromptOutput(prompt).data)


class CoefficientOutput(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    se = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)


class LeftOutOutput(serializers.Serializer):
    unscored = serializers.IntegerField(help_text="Checked items the judge left unscored.")
    failed = serializers.IntegerField(help_text="Checked items whose judge call failed.")
    not_asked = serializers.IntegerField(help_text="Checked items without an answer (counted without a call).")


class AgreementOutput(serializers.Serializer):
    n = serializers.IntegerField(help_text="Items both the judge and a person gave one of the rubric's verdicts.")
    small = serializers.BooleanField(help_text=f"n below {judging.SMALL_N}: read with care.")
    checked = serializers.IntegerField(help_text="Items a person checked.")
    sampled = serializers.IntegerField(help_text="Items drawn into check samples.")
    sampled_checked = serializers.IntegerField(help_text="Sampled items a person checked.")
    left_out = LeftOutOutput(help_text="Checked items left out of n, by why.")
    labels = serializers.ListField(child=serializers.CharField(), help_text="The rubric's verdicts, table order.")
    table = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Rows: the judge's verdicts; columns: the person's; both in `labels` order (2×2 or 3×3).",
    )
    raw = CoefficientOutput()
    kappa = CoefficientOutput()
    ac1 = CoefficientOutput()
    convention = serializers.CharField()


class ResultOutput(serializers.Serializer):
    kind = serializers.CharField()
    model = serializers.CharField()
    scenario = serializers.CharField()
    rubric = RubricField()
    yes = serializers.IntegerField(help_text="YES / NO rubric (0 for three-way).")
    no = serializers.IntegerField(help_text="YES / NO rubric; items without an answer count here.")
    correct = serializers.IntegerField(help_text="Three-way rubric (0 for YES / NO).")
    incorrect = serializers.IntegerField(help_text="Three-way rubric.")
    not_attempted = serializers.IntegerField(help_text="Three-way rubric; items without an answer count here.")
    unscored = serializers.IntegerField(help_text="None of the rubric's words after every ask: left out of n.")
    failed = serializers.IntegerField(help_text="Judge calls that failed (asked again when the judgment resumes).")
    overridden = serializers.IntegerField()
    not_asked = serializers.IntegerField(help_text="Items without an answer, counted without a call.")
    n = serializers.IntegerField(help_text="YES + NO; three-way: all graded, C + I + NA.")
    accuracy = serializers.FloatField(
        allow_null=True, help_text="YES / (YES + NO); three-way: C / (C + I + NA). Null when n is 0."
    )
    ci_low = serializers.FloatField(allow_null=True, help_text="Wilson 95%.")
    ci_high = serializers.FloatField(allow_null=True)
    not_attempted_rate = serializers.FloatField(allow_null=True, help_text="Three-way: NA / (C + I + NA).")
    not_attempted_ci_low = serializers.FloatField(allow_null=True)
    not_attempted_ci_high = serializers.FloatField(allow_null=True)
    n_attempted = serializers.IntegerField(allow_null=True, help_text="Three-way: C + I.")
    correct_given_attempted = serializers.FloatField(allow_null=True, help_text="Three-way: C / (C + I).")
    attempted_ci_low = serializers.FloatField(allow_null=True)
    attempted_ci_high = serializers.FloatField(allow_null=True)
    agreement = AgreementOutput(help_text="The judge and people on this cell's checked items.")


class JudgeRunOutput(serializers.ModelSerializer):
    status = StatusField(read_only=True)
    rubric = RubricField(read_only=True)
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
            "rubric",
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
    convention = serializers.CharField(read_only=True, help_text="How the rates are computed.")
    results = ResultOutput(many=True, read_only=True)
    agreement = AgreementOutput(read_only=True)

    class Meta(JudgeRunOutput.Meta):
        fields = [*JudgeRunOutput.Meta.fields, "prompt_text", "convention", "results", "agreement"]
        read_only_fields = fields


class JudgmentStartInput(serializers.Serializer):
    endpoint = serializers.IntegerField(min_value=1, max_value=2**63 - 1, help_text="The judge: an endpoint's id.")
    rubric = RubricField(required=False, default=Rubric.YES_NO, help_text="Its current prompt is used.")


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
        summary="Judge a scored run's answers with a model endpoint and a rubric's current judge prompt (a job)",
        description="202 with the judgment; poll it. 409 while another judgment of the run waits or runs.",
        request=JudgmentStartInput,
        responses=responses({202: JudgeRunOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, run_id: int) -> Response:
        _, run = get_run_for_user(request.user, slug, run_id)
        data = validated(JudgmentStartInput, request.data)
        _, endpoint = get_endpoint_for_user(request.user, slug, data["endpoint"], role=ROLES)
        judgment = judging.judgment_start(run=run, endpoint=endpoint, user=request.user, rubric=data["rubric"])
        judgment.refresh_from_db()
        return Response(JudgeRunOutput(judgment).data, status=status.HTTP_202_ACCEPTED)


def _detail(judgment: Judgment) -> dict[str, Any]:
    data = dict(JudgeRunOutput(judgment).data)
    data["prompt_text"] = judgment.prompt.text
    data["convention"] = judging.RESULTS_CONVENTION[Rubric(judgment.rubric)]
    data["results"] = ResultOutput(judging.judgment_results(judgment), many=True).data
    data["agreement"] = AgreementOutput(judging.judgment_agreement(judgment)).data
    return data


class JudgmentDetailApi(APIView):
    @extend_schema(
        summary="A judgment: status, judge, prompt version and rubric, rates and agreement with people per cell",
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


class CheckItemOutput(serializers.Serializer):
    """A judged item as the person checking it sees it: the judge's verdict left out so it does not lead."""

    id = serializers.IntegerField()
    item_id = serializers.CharField(source="prediction.item_id")
    model = serializers.CharField(source="prediction.model")
    scenario = serializers.CharField(source="prediction.scenario")
    answer = serializers.CharField(source="prediction.extracted")
    sampled = serializers.BooleanField(help_text="Drawn into a check sample.")
    human = serializers.CharField(help_text="This item's person verdict so far (empty: none).")


class ProgressOutput(serializers.Serializer):
    sampled = serializers.IntegerField()
    sampled_checked = serializers.IntegerField()
    checked = serializers.IntegerField(help_text="Every checked item, sampled or not.")
    checkable = serializers.IntegerField(help_text="Items a person may check (asked, call not failed).")


class NextCheckOutput(serializers.Serializer):
    rubric = RubricField()
    verdicts = serializers.ListField(child=serializers.CharField(), help_text="What a person may answer.")
    progress = ProgressOutput()
    item = CheckItemOutput(allow_null=True, help_text="Null: every checkable item has been checked.")
    question = serializers.CharField(allow_null=True)
    gold = serializers.CharField(allow_null=True)
    problem = serializers.CharField(help_text="Why the question and gold are missing (empty: they are not).")


def _check_item(item: JudgedItem) -> dict[str, Any]:
    found = {"id": item.pk, "prediction": item.prediction, "sampled": bool(item.check_sample_id), "human": item.human}
    return dict(CheckItemOutput(found).data)


class JudgeCheckNextApi(APIView):
    @extend_schema(
        summary="The next judged item to check (sampled ones first), without the judge's verdict, and the progress",
        description="Open to the project's reviewers (native speakers) as well as researchers and coordinators.",
        responses=responses({200: NextCheckOutput}, bad_input=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int, judgment_id: int) -> Response:
        _, run, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id, role=CHECKERS)
        item = judging.judged_item_next_to_check(judgment)
        gold, problem = None, ""
        if item is not None:
            try:
                gold = evaluation_run_gold(run).items.get(item.prediction.item_id)
            except ServiceError as error:  # the release's files changed on disk: say so, never show other gold
                problem = error.message
        return Response(
            {
                "rubric": judgment.rubric,
                "verdicts": [str(value) for value in RUBRIC_VERDICTS[Rubric(judgment.rubric)]],
                "progress": judging.judgment_check_progress(judgment),
                "item": _check_item(item) if item is not None else None,
                "question": gold.question if gold is not None else None,
                "gold": gold.gold if gold is not None else None,
                "problem": problem,
            }
        )


class JudgedItemCheckApi(APIView):
    @extend_schema(
        summary="A person's own call on a judged item, one of the rubric's verdicts",
        description="yes / no for a YES / NO judgment; correct / incorrect / not_attempted for a three-way one. "
        "Open to reviewers as well; the answer leaves the judge's verdict out.",
        request=JudgeVerdictInput,
        responses=responses({200: CheckItemOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, run_id: int, judgment_id: int, judged_id: int) -> Response:
        _, _, item = get_judged_item_for_user(request.user, slug, run_id, judgment_id, judged_id, role=CHECKERS)
        data = validated(JudgeVerdictInput, request.data)
        return Response(_check_item(judging.judged_item_check(item=item, user=request.user, **data)))


class SampleCellOutput(serializers.Serializer):
    kind = serializers.CharField()
    model = serializers.CharField()
    scenario = serializers.CharField()
    eligible = serializers.IntegerField(help_text="Items the judge was asked and answered (calls not failed).")
    before = serializers.IntegerField(help_text="Of them, drawn by earlier samples.")
    added = serializers.IntegerField(help_text="Drawn now: min(k, eligible − before).")


class SampleOutput(serializers.ModelSerializer):
    cells = SampleCellOutput(many=True, read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True, allow_null=True, default=None)
    summary = serializers.SerializerMethodField()

    class Meta:
        model = JudgeCheckSample
        fields = ["id", "k", "seed", "added", "cells", "created_by", "created_at", "summary"]
        read_only_fields = fields

    def get_summary(self, sample: JudgeCheckSample) -> str:
        return judging.judgment_sample_summary(sample)


class SampleInput(serializers.Serializer):
    k = serializers.IntegerField(
        min_value=1, max_value=judging.MAX_SAMPLE_K, default=judging.DEFAULT_SAMPLE_K, help_text="Items per cell."
    )
    seed = serializers.IntegerField(
        min_value=0, max_value=2**63 - 1, required=False, allow_null=True, default=None, help_text="Empty: random."
    )


class JudgmentSampleApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="A judgment's check samples (k, seed, who, when, what each cell gave)",
        responses=responses({200: SampleOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int, judgment_id: int) -> Response:
        _, _, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id)
        samples = JudgeCheckSample.objects.filter(judgment=judgment).select_related("created_by")
        return paginated(self, request, samples, SampleOutput)

    @extend_schema(
        summary="Sample k judged items per model × scenario into the check queue (seeded, recorded, no duplicates)",
        description="A cell with fewer than k items left gives them all (see `cells`). 409 while the judgment runs.",
        request=SampleInput,
        responses=responses({201: SampleOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, run_id: int, judgment_id: int) -> Response:
        _, _, judgment = get_judgment_for_user(request.user, slug, run_id, judgment_id)
        data = validated(SampleInput, request.data)
        sample = judging.judgment_sample(judgment=judgment, user=request.user, **data)
        return Response(SampleOutput(sample).data, status=status.HTTP_201_CREATED)


class JudgedItemOverrideApi(APIView):
    @extend_schema(
        summary="Override the judge on an item with one of the rubric's verdicts; the same again restores the judge's",
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
