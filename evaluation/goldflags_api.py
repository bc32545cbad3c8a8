"""One release item as a run saw it, and *gold looks wrong* (evaluation.goldflags) through the API."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import responses, validated
from common.errors import ServiceError
from common.requests import SignedInApiRequest
from evaluation import goldflags
from evaluation.access import get_run_for_user
from evaluation.api import PredictionOutput
from evaluation.models import EvaluationRun, GoldFlag
from review.decisions import GOLD_NOTE_MAX


class GoldFlagOutput(serializers.ModelSerializer):
    run = serializers.IntegerField(source="run_id", read_only=True)
    release_version = serializers.IntegerField(source="run.release_version", read_only=True)
    flagged_by = serializers.CharField(source="flagged_by.username", default=None, read_only=True)
    event = serializers.IntegerField(source="event_id", read_only=True, help_text="The item's history event.")
    item_status = serializers.CharField(source="qa_item.status", read_only=True, help_text="The item's status now.")

    class Meta:
        model = GoldFlag
        fields = ["id", "run", "release_version", "item_id", "note", "flagged_by", "created_at", "event", "item_status"]
        read_only_fields = fields


class GoldFlagInput(serializers.Serializer):
    note = serializers.CharField(max_length=GOLD_NOTE_MAX, help_text="What looks wrong with the gold answer.")


class RunItemOutput(serializers.Serializer):
    item_id = serializers.CharField()
    record = serializers.DictField(allow_null=True, help_text="The release's line for the item (null: not in it).")
    gold = serializers.CharField(help_text="The gold answer the run scored against (empty: none, left out).")
    predictions = PredictionOutput(many=True)
    item_status = serializers.CharField(
        source="qa_item.status", default=None, help_text="The live item's status (null: no longer in the project)."
    )
    can_flag = serializers.BooleanField()
    flags = GoldFlagOutput(many=True, help_text="Every gold flag of the item, from any run, newest first.")


def _run_item(run: EvaluationRun, release_item: str) -> goldflags.RunItem:
    try:
        return goldflags.run_item(run, release_item)
    except ServiceError as error:
        raise Http404(error.message) from None


class RunItemApi(APIView):
    @extend_schema(
        summary="One item of a run: the release's line and gold, every answer to it, its status and gold flags",
        responses=responses({200: RunItemOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, run_id: int, release_item: str) -> Response:
        _, run = get_run_for_user(request.user, slug, run_id)
        return Response(RunItemOutput(_run_item(run, release_item)).data)


class GoldFlagApi(APIView):
    @extend_schema(
        summary="Gold looks wrong: send the item back to review for the next release, with a note and this run",
        request=GoldFlagInput,
        responses=responses({201: GoldFlagOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, run_id: int, release_item: str) -> Response:
        _, run = get_run_for_user(request.user, slug, run_id)
        item = _run_item(run, release_item)
        data = validated(GoldFlagInput, request.data)
        flag = goldflags.gold_flag_create(run=run, item_id=item.item_id, user=request.user, note=data["note"])
        return Response(GoldFlagOutput(flag).data, status=status.HTTP_201_CREATED)
