"""The evaluation REST API: runs of a project (list, upload), one run with its results, its results as CSV."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.models import Project
from common.api import named_enum, paginated, responses, validated
from common.jobs import JobStatus
from common.requests import SignedInApiRequest
from endpoints.access import get_endpoint_for_user
from evaluation import services
from evaluation.access import ROLES, evaluation_access, get_run_for_user
from evaluation.leaderboard import Board, leaderboard, leaderboard_download
from evaluation.models import EvaluationRun, Prediction
from evaluation.nativqa import nativqa_results
from evaluation.views import download_response
from exports.access import get_release_of_project

SourceField = named_enum(EvaluationRun.Source, "EvaluationSource")
StatusField = named_enum(JobStatus, "EvaluationRunStatus")


class ProblemOutput(serializers.Serializer):
    line = serializers.IntegerField(help_text="Line of the uploaded file (0: the file as a whole).")
    field = serializers.CharField()
    reason = serializers.CharField()


class ResultRowOutput(serializers.Serializer):
    kind = serializers.CharField(help_text="lead, document or trivia: never mixed in one table.")
    model = serializers.CharField()
    scenario = serializers.CharField()
    metric = serializers.CharField()
    mode = serializers.CharField(help_text="parity (the study's conventions) or recommended (language-aware).")
    stratum = serializers.CharField(help_text="all, or what the items are grouped by (topic, region, subset, …).")
    value = serializers.CharField(help_text="The stratum's value (all for the overall row).")
    n = serializers.IntegerField(help_text="Items scored in the cell.")
    mean = serializers.FloatField(
        allow_null=True,
        help_text="In [0, 1]; null when no item was scored. For `odds_ratio` (entity questions, stratum "
        "`direction`) the odds ratio itself, null when one direction has no item.",
    )
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    interval = serializers.CharField(
        help_text="wilson (proportions), bootstrap (means, resampled by page pair for Wikipedia QA, entity for "
        "entity questions, item otherwise), woolf (odds ratios: log odds ratio with "
        "a normal interval) or woolf_haldane_anscombe (the same with 0.5 added to every cell, a cell being 0)."
    )
    left_out = serializers.IntegerField(help_text="Items of the cell without gold, left out of the score.")
    cells = serializers.DictField(
        child=serializers.IntegerField(),
        required=False,
        help_text="Odds ratio rows only: the 2×2 table (inductive / deductive × right / wrong) and the unparseable "
        "answers counted wrong in it.",
    )


class RunOutput(serializers.ModelSerializer):
    status = StatusField(read_only=True)
    source = SourceField(read_only=True)  # type: ignore[assignment]  # the JSON key, not Field.source
    percent = serializers.IntegerField(read_only=True)
    problems = ProblemOutput(many=True, read_only=True)
    counts = serializers.DictField(read_only=True)
    release_files = serializers.ListField(child=serializers.DictField(child=serializers.CharField()), read_only=True)
    scenarios = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "status",
            "release_version",
            "manifest_sha256",
            "release_files",
            "source",
            "endpoint_name",
            "endpoint_model",
            "scenarios",
            "prompt_template",
            "item_limit",
            "file_name",
            "file_sha256",
            "file_size",
            "bootstrap_draws",
            "seed",
            "progress_done",
            "progress_total",
            "percent",
            "counts",
            "problems",
            "error",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields


class ComparisonOutput(serializers.Serializer):
    kind = serializers.CharField()
    model = serializers.CharField()
    scenario = serializers.CharField()
    baseline = serializers.CharField()
    metric = serializers.CharField()
    mode = serializers.CharField()
    n = serializers.IntegerField(help_text="Items scored under both scenarios.")
    delta = serializers.FloatField(allow_null=True, help_text="Mean of scenario minus baseline, in [-1, 1].")
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    test = serializers.CharField()
    p = serializers.FloatField()
    p_holm = serializers.FloatField(help_text="Holm-adjusted over the scenarios of one kind, model and metric.")


class RunDetailOutput(RunOutput):
    results = ResultRowOutput(many=True, read_only=True)
    comparisons = ComparisonOutput(many=True, read_only=True)
    provenance = serializers.SerializerMethodField(
        help_text="What was scored and how (as in results.json): release files, intervals, modes, where the "
        "platform's own strata come from, the prompt template of a generated validation run."
    )

    class Meta(RunOutput.Meta):
        fields = [*RunOutput.Meta.fields, "results", "comparisons", "provenance"]
        read_only_fields = fields

    @extend_schema_field(serializers.DictField())
    def get_provenance(self, run: EvaluationRun) -> dict[str, Any]:
        return services.evaluation_run_provenance(run)


class RunCreateInput(serializers.Serializer):
    release = serializers.IntegerField(min_value=1, max_value=2**31 - 1, help_text="The release version scored.")
    file = serializers.FileField(help_text="Predictions JSONL, or an lm-evaluation-harness samples_*.jsonl log.")
    source = SourceField(required=False, default=EvaluationRun.Source.PREDICTIONS)  # type: ignore[assignment]
    model = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    scenario = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    bootstrap_draws = serializers.IntegerField(min_value=0, max_value=services.MAX_DRAWS, required=False, default=1000)


class RunGenerateInput(serializers.Serializer):
    release = serializers.IntegerField(min_value=1, max_value=2**31 - 1, help_text="The release version.")
    endpoint = serializers.IntegerField(min_value=1, max_value=2**63 - 1, help_text="The model endpoint's id.")
    scenarios = serializers.ListField(
        child=serializers.ChoiceField(choices=["question_only", "standard_lead", "local_lead", "both_leads"]),
        min_length=1,
        max_length=4,
    )
    item_limit = serializers.IntegerField(min_value=1, max_value=1_000_000, required=False, allow_null=True)
    bootstrap_draws = serializers.IntegerField(min_value=0, max_value=services.MAX_DRAWS, required=False, default=1000)


class RunGenerateApi(APIView):
    @extend_schema(
        summary="Ask a model endpoint the release's prompts, then score the answers (researchers and coordinators)",
        description=(
            "A background job: 202 with the run; poll it. Wikipedia QA releases (their prompt templates, any of the "
            "four scenarios) and validation releases (question_only: each item's question asked in its own "
            "language through a named template the run records as `prompt_template`)."
        ),
        request=RunGenerateInput,
        responses=responses({202: RunOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        access = evaluation_access(request.user, slug)
        data = validated(RunGenerateInput, request.data)
        _, endpoint = get_endpoint_for_user(request.user, slug, data["endpoint"], role=ROLES)
        run = services.evaluation_run_generate(
            project=access.project,
            release=get_release_of_project(access.project, data["release"]),
            endpoint=endpoint,
            user=request.user,
            scenarios=data["scenarios"],
            item_limit=data.get("item_limit"),
            bootstrap_draws=data["bootstrap_draws"],
        )
        run.refresh_from_db()
        return Response(RunOutput(run).data, status=status.HTTP_202_ACCEPTED)


class RunListApi(APIView):
    parser_classes = [MultiPartParser, FormParser]
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Evaluation runs of a project, newest first (researchers and coordinators)",
        responses=responses({200: RunOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = evaluation_access(request.user, slug).project
        return paginated(self, request, services.evaluation_runs(project), RunOutput)

    @extend_schema(
        summary="Upload predictions to score against a release (researchers and coordinators)",
        description=(
            "Multipart form. Every line is checked against the release first: a file with a refused line answers "
            "400 with each refused line (number, field, reason) and nothing is stored. An accepted file answers "
            "202 with the run; poll it until `status` is done, then read `results`."
        ),
        request={"multipart/form-data": RunCreateInput},
        responses=responses({202: RunOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        access = evaluation_access(request.user, slug)
        form = request.data if isinstance(request.data, Mapping) else {}
        upload = request.FILES.get("file")
        if upload is not None and upload.size > services.upload_limit():
            raise services.too_large(upload.size)
        data = validated(RunCreateInput, {**{key: form.get(key) for key in form}, "file": upload})
        run = services.evaluation_run_create(
            project=access.project,
            release=get_release_of_project(access.project, data["release"]),
            user=request.user,
            data=data["file"].read(),
            file_name=data["file"].name or "",
            source=data["source"],
            model=data["model"],
            scenario=data["scenario"],
            bootstrap_draws=data["bootstrap_draws"],
        )
        run.refresh_from_db()
        if run.status == JobStatus.REFUSED:
            refused: dict[str, Any] = {
                "detail": run.error,
                "field": "file",
                "problems": ProblemOutput(run.problems, many=True).data,
                "counts": run.counts,
                "run": run.pk,
            }
            return Response(refused, status=status.HTTP_400_BAD_REQUEST)
        return Response(RunOutput(run).data, status=status.HTTP_202_ACCEPTED)


class RunDetailApi(APIView):
    @extend_schema(
        summary="An evaluation run: status, provenance, counts and, once scored, the tidy results rows",
        responses=responses({200: RunDetailOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int) -> Response:
        _, run = get_run_for_user(request.user, slug, run_id)
        return Response(RunDetailOutput(run).data)


ExtractionField = named_enum(Prediction.Extraction, "PredictionExtraction")


class PredictionOutput(serializers.ModelSerializer):
    extraction = ExtractionField(read_only=True)
    extraction_tolerant = serializers.CharField(read_only=True, help_text="Multiple choice: the tolerant outcome.")
    scores = serializers.DictField(child=serializers.FloatField(), read_only=True, help_text="mode:metric → [0, 1].")

    class Meta:
        model = Prediction
        fields = [
            "item_id",
            "item_kind",
            "scenario",
            "model",
            "line",
            "prediction",
            "extraction",
            "extracted",
            "extraction_tolerant",
            "extracted_tolerant",
            "scores",
            "call_id",
            "error",
        ]
        read_only_fields = fields


class RunPredictionsApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Every item of a run: the answer, what was extracted from it and its scores",
        parameters=[
            OpenApiParameter("model", str, required=False),
            OpenApiParameter("scenario", str, required=False),
            OpenApiParameter("extraction", str, required=False, enum=list(Prediction.Extraction.values)),
        ],
        responses=responses({200: PredictionOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int) -> Response:
        _, run = get_run_for_user(request.user, slug, run_id)
        extraction = request.query_params.get("extraction", "")
        rows = services.evaluation_run_predictions(
            run,
            model=request.query_params.get("model", "")[:200],
            scenario=request.query_params.get("scenario", "")[:200],
            extraction=extraction if extraction in Prediction.Extraction.values else "",
        )
        return paginated(self, request, rows, PredictionOutput)


class RunResultsCsvApi(APIView):
    @extend_schema(
        summary="An evaluation run's results as CSV (one tidy row per cell, with the run's provenance)",
        responses=responses(
            {200: OpenApiResponse(OpenApiTypes.BINARY, description="text/csv")}, bad_input=False, conflict=False
        ),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int) -> HttpResponse:
        _, run = get_run_for_user(request.user, slug, run_id)
        response = HttpResponse(services.evaluation_run_results_csv(run), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{slug}-run{run.pk}-results.csv"'
        return response


FORMAT_PARAMETER = OpenApiParameter(
    "fmt",
    str,
    OpenApiParameter.PATH,
    enum=sorted(services.DOWNLOAD_TYPES),
    description="csv (tidy rows, numbers in [0, 1]), json, md (Markdown) or tex (LaTeX, booktabs).",
)


class RunResultsDownloadApi(APIView):
    @extend_schema(
        summary="An evaluation run's results as CSV, results.json, or its tables as Markdown or LaTeX",
        parameters=[FORMAT_PARAMETER],
        responses=responses({200: OpenApiResponse(OpenApiTypes.BINARY)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int, fmt: str) -> HttpResponse:
        _, run = get_run_for_user(request.user, slug, run_id)
        if fmt not in services.DOWNLOAD_TYPES:
            raise Http404("No such download: csv, json, md or tex.")
        text = services.evaluation_run_results_download(run, fmt)
        return download_response(text, fmt, f"{slug}-v{run.release_version}-run{run.pk}-results")


class BoardCellOutput(serializers.Serializer):
    scenario = serializers.CharField()
    n = serializers.IntegerField(help_text="Items scored in the cell.")
    mean = serializers.FloatField(
        allow_null=True,
        help_text="In [0, 1]; null when no item was scored. For `odds_ratio` (entity questions, stratum "
        "`direction`) the odds ratio itself, null when one direction has no item.",
    )
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    interval = serializers.CharField(
        help_text="wilson (proportions), bootstrap (means, resampled by page pair for Wikipedia QA, entity for "
        "entity questions, item otherwise), woolf (odds ratios: log odds ratio with "
        "a normal interval) or woolf_haldane_anscombe (the same with 0.5 added to every cell, a cell being 0)."
    )
    left_out = serializers.IntegerField(help_text="Items of the cell without gold, left out of the score.")
    cells = serializers.DictField(
        child=serializers.IntegerField(),
        required=False,
        help_text="Odds ratio rows only: the 2×2 table (inductive / deductive × right / wrong) and the unparseable "
        "answers counted wrong in it.",
    )


class BoardRowOutput(serializers.Serializer):
    model = serializers.CharField()
    run = serializers.IntegerField(help_text="The model's newest scored run on this release, whose rows these are.")
    cells = BoardCellOutput(many=True, allow_null=True, help_text="One per scenario, in `scenarios` order.")


class BoardOutput(serializers.Serializer):
    release_version = serializers.IntegerField(allow_null=True)
    versions = serializers.ListField(child=serializers.IntegerField(), help_text="Releases with a scored run.")
    kind = serializers.CharField(help_text="lead, document or trivia.")
    kinds = serializers.ListField(child=serializers.CharField())
    mode = serializers.CharField()
    metric = serializers.CharField()
    metrics = serializers.ListField(child=serializers.CharField(), help_text="mode:metric pairs on offer.")
    convention = serializers.CharField(help_text="The metric, its mode and the interval, in words.")
    scenarios = serializers.ListField(child=serializers.CharField())
    rows = BoardRowOutput(many=True, help_text="Ordered by the unweighted mean of their cells (a ranking only).")


BOARD_FIELDS = ("release_version", "versions", "kind", "kinds", "mode", "metric", "convention", "scenarios", "rows")


BOARD_PARAMETERS = [
    OpenApiParameter("release", int, required=False, description="Default: the newest with a scored run."),
    OpenApiParameter("kind", str, required=False, description="lead, document, trivia or entity."),
    OpenApiParameter("metric", str, required=False, description="mode:metric, e.g. recommended:rouge_l."),
]


class LeaderboardApi(APIView):
    @extend_schema(
        summary="The project's leaderboard: models × scenarios on one release under one metric, n and interval",
        parameters=BOARD_PARAMETERS,
        responses=responses({200: BoardOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        access = evaluation_access(request.user, slug)
        board = _board(request, access.project)
        data = {
            **{name: getattr(board, name) for name in BOARD_FIELDS},
            "metrics": [f"{mode}:{metric}" for mode, metric in board.metrics],
        }
        return Response(BoardOutput(data).data)


def _board(request: SignedInApiRequest, project: Project) -> Board:
    version = request.query_params.get("release", "")
    return leaderboard(
        project,
        version=int(version) if version.isdigit() else None,
        kind=request.query_params.get("kind", "")[:16],
        metric=request.query_params.get("metric", "")[:64],
    )


class LeaderboardDownloadApi(APIView):
    @extend_schema(
        summary="The leaderboard (same choices as the leaderboard) as CSV, JSON, Markdown or LaTeX",
        parameters=[FORMAT_PARAMETER, *BOARD_PARAMETERS],
        responses=responses({200: OpenApiResponse(OpenApiTypes.BINARY)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, fmt: str) -> HttpResponse:
        access = evaluation_access(request.user, slug)
        if fmt not in services.DOWNLOAD_TYPES:
            raise Http404("No such download: csv, json, md or tex.")
        board = _board(request, access.project)
        text = leaderboard_download(board, access.project, fmt)
        return download_response(text, fmt, f"{slug}-v{board.release_version}-leaderboard")


class LikertOutput(serializers.Serializer):
    criterion = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # the JSON key, not Field.label
    n = serializers.IntegerField(help_text="Scores given.")
    items = serializers.IntegerField()
    mean = serializers.FloatField(allow_null=True, help_text="On the 1–5 scale.")
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    sd = serializers.FloatField(allow_null=True)
    rwg_j = serializers.FloatField(allow_null=True)
    krippendorff_alpha = serializers.FloatField(allow_null=True)


class CategoricalOutput(serializers.Serializer):
    task = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # the JSON key, not Field.label
    judgments = serializers.IntegerField()
    units = serializers.IntegerField(help_text="Items judged by two or more validators.")
    observed = serializers.FloatField(allow_null=True)
    gwet_ac1 = serializers.FloatField(allow_null=True)
    cohen_kappa = serializers.FloatField(allow_null=True)


class NativqaOutput(serializers.Serializer):
    validation = serializers.BooleanField(help_text="False: not a validation project; NativQA results are theirs.")
    judgments = serializers.IntegerField()
    likert = LikertOutput(many=True)
    categorical = CategoricalOutput(many=True)
    convention = serializers.CharField()


class NativqaApi(APIView):
    @extend_schema(
        summary="A validation project's NativQA results: Likert means with intervals and agreement",
        responses=responses({200: NativqaOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        access = evaluation_access(request.user, slug)
        return Response(NativqaOutput(nativqa_results(access.project)).data)
