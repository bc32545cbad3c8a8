"""The agreement calculator over the API: POST a ratings CSV, get every statistic as JSON.

Same computation as the page and `manage.py agreement_compute --ratings`
(`review.calculator.calculator_compute`), limited to small files because it
runs within the request.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import ErrorOutput
from common.errors import InvalidInput
from common.requests import SignedInApiRequest
from review.agreement import DEFAULT_BOOTSTRAP, DEFAULT_SEED, LEVELS
from review.calculator import MAX_PAGE_ROWS, calculator_compute

MAX_API_BOOTSTRAP = 5000


class CalculateInput(serializers.Serializer):
    file = serializers.FileField(help_text=f"CSV with a header unit,rater,value; up to {MAX_PAGE_ROWS:,} ratings.")
    level = serializers.ChoiceField(choices=LEVELS)
    categories = serializers.CharField(
        required=False, allow_blank=True, max_length=2000, help_text="The scale in order, comma-separated."
    )
    strata_column = serializers.CharField(required=False, allow_blank=True, max_length=100)
    options = serializers.IntegerField(required=False, min_value=2, help_text="Response options A for r*wg(j).")
    bootstrap = serializers.IntegerField(
        required=False, min_value=0, max_value=MAX_API_BOOTSTRAP, default=DEFAULT_BOOTSTRAP
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**32 - 1, default=DEFAULT_SEED)


class StatisticOutput(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # the JSON key, not Field.label
    value = serializers.FloatField(allow_null=True, help_text="None when undefined; `note` says why.")
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    n_units = serializers.IntegerField()
    n_raters = serializers.IntegerField()
    n_judgments = serializers.IntegerField()
    excluded_units = serializers.IntegerField(help_text="Units judged only once, left out.")
    note = serializers.CharField()


class PairOutput(serializers.Serializer):
    rater_a = serializers.CharField()
    rater_b = serializers.CharField()
    statistics = serializers.DictField(child=StatisticOutput())


class StratumOutput(serializers.Serializer):
    label = serializers.CharField()  # type: ignore[assignment]  # the JSON key, not Field.label
    statistics = serializers.DictField(child=StatisticOutput())


class BootstrapOutput(serializers.Serializer):
    replicates = serializers.IntegerField()
    seed = serializers.IntegerField()
    confidence = serializers.FloatField()
    method = serializers.CharField()


class ContestedUnitOutput(serializers.Serializer):
    unit = serializers.CharField()
    n_judgments = serializers.IntegerField()
    agreement = serializers.FloatField(help_text="Share of the unit's rater pairs that agree.")
    spread = serializers.FloatField(allow_null=True, help_text="Variance of numeric ratings; null for nominal.")
    values = serializers.DictField(child=serializers.IntegerField(), help_text="How many raters gave each value.")


class SummaryOutput(serializers.Serializer):
    level = serializers.ChoiceField(choices=LEVELS)
    categories = serializers.ListField(child=serializers.JSONField())
    n_units = serializers.IntegerField()
    n_raters = serializers.IntegerField()
    n_judgments = serializers.IntegerField()
    excluded_units = serializers.IntegerField()
    statistics = serializers.DictField(child=StatisticOutput())
    raters = serializers.ListField(child=serializers.CharField())
    pairs = PairOutput(many=True)
    matrices = serializers.DictField(
        child=serializers.ListField(child=serializers.ListField(child=serializers.FloatField(allow_null=True))),
        help_text="Raters × raters matrix of each pair statistic, in the order of `raters`.",
    )
    strata = StratumOutput(many=True)
    bootstrap = BootstrapOutput()
    notes = serializers.ListField(child=serializers.CharField())
    fingerprint = serializers.CharField(help_text="sha256 of the level and the judgments, whatever their order.")
    contested_units = ContestedUnitOutput(many=True, help_text="Up to 50 units raters disagree on, most first.")


class AgreementCalculateApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        summary="Agreement statistics for an uploaded ratings CSV",
        description=(
            "Computed within the request, so files are limited to "
            f"{MAX_PAGE_ROWS:,} ratings. A bad row answers 400 naming its line and column."
        ),
        request={"multipart/form-data": CalculateInput},
        responses={
            200: SummaryOutput,
            400: OpenApiResponse(ErrorOutput, description="Bad file or parameters; the message names line and column."),
            403: OpenApiResponse(ErrorOutput, description="Not logged in."),
        },
    )
    def post(self, request: SignedInApiRequest) -> Response:
        serializer = CalculateInput(data=request.data)
        if not serializer.is_valid():
            errors = {field: [str(message) for message in messages] for field, messages in serializer.errors.items()}
            first = next(iter(errors))
            raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)
        data = serializer.validated_data
        summary = calculator_compute(
            file=data["file"],
            level=data["level"],
            categories=data.get("categories"),
            strata_column=data.get("strata_column"),
            options=data.get("options"),
            bootstrap=data["bootstrap"],
            seed=data["seed"],
            max_rows=MAX_PAGE_ROWS,
        )
        return Response(summary.to_dict())
