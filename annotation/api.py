"""The annotation REST API: thin views over `annotation.access` and `annotation.services`.

Each view loads its objects through an access function (which decides 404 vs
403), types the request with an input serializer, calls one service and
renders an output serializer. Service errors become 400/409 responses in
`common.api_errors`; bad input types are reported the same way, as
`{detail, field, details}` with fields named like `spans[0].end`.
"""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation import access
from annotation.local_checks import local_check_again
from annotation.models import LocalCheck, PagePair, PairSkip, QAItem, Role
from annotation.next_steps import next_steps
from annotation.queries import count_of, items_with_spans
from annotation.serializers import (
    ActivityInput,
    GiveBackInput,
    GiveBackOutput,
    ItemCreateInput,
    ItemOutput,
    ItemUpdateInput,
    NextStepOutput,
    PairDetailOutput,
    PairFilterInput,
    PairListOutput,
    ProjectCreateInput,
    ProjectDetailOutput,
    ProjectOutput,
    ProjectUpdateInput,
    ScreeningInput,
    SkipUndoOutput,
    StaleItemOutput,
    StaleProjectOutput,
    WarningOutput,
)
from annotation.services.deletion import pair_delete, project_delete
from annotation.services.items import qa_item_create, qa_item_delete, qa_item_update
from annotation.services.pairs import pair_claim_next, pair_give_back, pair_record_activity, pair_screen, pair_skip_undo
from annotation.services.projects import project_create, project_update
from annotation.services.submission import pair_submit
from annotation.warnings import qa_item_warnings
from common.api import NO_CONTENT, paginated, responses, validated
from common.requests import SignedInApiRequest


def _pair_detail(pair: PagePair, *, unscreened: bool = False) -> dict[str, Any]:
    """The full pair with its live items and their spans, in one query, or none: when a service left the items
    it has just written on the pair (`live_items`), or when the pair was `unscreened` (claimed, not screened yet, so
    without items: they are written only while a pair is being annotated)."""
    if unscreened:
        pair.live_items = []  # type: ignore[attr-defined]
    elif not hasattr(pair, "live_items"):
        items = QAItem.objects.alive().filter(pair=pair).select_related("author")
        pair.live_items = items_with_spans(items)  # type: ignore[attr-defined]
    return PairDetailOutput(pair).data


# Projects


class ProjectListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Projects you are a member of",
        responses=responses({200: ProjectOutput(many=True)}, bad_input=False, conflict=False, not_found=False),
    )
    def get(self, request: SignedInApiRequest) -> Response:
        projects = access.user_projects(request.user).order_by("name", "slug")
        return paginated(self, request, projects, ProjectOutput)

    @extend_schema(
        summary="Create a project; you become its coordinator",
        description="Needs the `annotation.add_project` permission. Wiki codes are derived from the languages.",
        request=ProjectCreateInput,
        responses=responses({201: ProjectOutput}, conflict=False, not_found=False),
    )
    def post(self, request: SignedInApiRequest) -> Response:
        access.require_project_creator(request.user)
        data = validated(ProjectCreateInput, request.data)
        project = project_create(created_by=request.user, **data)
        return Response(ProjectOutput(project).data, status=status.HTTP_201_CREATED)


class NextStepsApi(APIView):
    @extend_schema(
        summary="What you do next in a project: one step per role you hold, with its counts",
        responses=responses({200: NextStepOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        member = access.project_access(request.user, slug)
        steps = next_steps(project=member.project, membership=member.membership, user=request.user)
        return Response(NextStepOutput(steps, many=True).data)


class ProjectDetailApi(APIView):
    stale_serializer = ProjectDetailOutput

    @extend_schema(
        summary="A project and your roles in it",
        responses=responses({200: ProjectDetailOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        member = access.project_access(request.user, slug)
        return Response(ProjectDetailOutput(member.project, context={"membership": member.membership}).data)

    @extend_schema(
        summary="Change project settings (coordinator)",
        request=ProjectUpdateInput,
        responses=responses({200: ProjectDetailOutput, 409: StaleProjectOutput}),
    )
    def patch(self, request: SignedInApiRequest, slug: str) -> Response:
        member = access.project_access(request.user, slug, role=Role.COORDINATOR)
        data = validated(ProjectUpdateInput, request.data)
        project = project_update(project=member.project, actor=request.user, **data)
        return Response(ProjectDetailOutput(project, context={"membership": member.membership}).data)

    @extend_schema(
        summary="Delete a project (coordinator); soft: restore it through /api/deleted-projects/",
        responses=responses({204: NO_CONTENT}, bad_input=False),
    )
    def delete(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        project_delete(project=project, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# Members


class PairListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Page pairs: all of them for a coordinator, your own for an annotator",
        parameters=[PairFilterInput],
        responses=responses({200: PairListOutput(many=True)}, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        pairs = access.pairs_for_user(access.project_access(request.user, slug))
        query = validated(PairFilterInput, request.query_params)
        if "status" in query:
            pairs = pairs.filter(status=query["status"])
        pairs = (
            pairs.select_related("assignee")
            .defer("local_lead", "standard_lead", "local_text", "standard_text", "metadata")
            .annotate(item_count=count_of(QAItem.objects.alive().filter(pair=OuterRef("pk"))))
            .order_by("id")
        )
        return paginated(self, request, pairs, PairListOutput)


class PairDetailApi(APIView):
    @extend_schema(
        summary="A page pair with its texts and its live QA items",
        responses=responses({200: PairDetailOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_user(request.user, slug, pair_id)
        return Response(_pair_detail(pair))

    @extend_schema(
        summary="Delete a pair with its items (coordinator); soft: restore it from the project's deleted list",
        responses=responses({204: NO_CONTENT}, bad_input=False),
    )
    def delete(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_user(request.user, slug, pair_id, role=Role.COORDINATOR)
        pair_delete(pair=pair, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class QueueNextApi(APIView):
    @extend_schema(
        summary="Claim the next pair to screen (annotator)",
        description="Returns the unscreened pair you already hold, else a pair from the pool; 204 when it is empty.",
        request=None,
        responses=responses(
            {200: PairDetailOutput, 204: OpenApiResponse(description="The pool is empty.")},
            bad_input=False,
            conflict=False,
        ),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        member = access.project_access(request.user, slug, role=Role.ANNOTATOR, held_pair=True)
        pair = pair_claim_next(project=member.project, user=request.user, membership=member.membership)
        if pair is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(_pair_detail(pair, unscreened=pair.status == PagePair.Status.CLAIMED))


class PairScreeningApi(APIView):
    @extend_schema(
        summary="Screen a pair you hold: annotate it, or exclude it with a reason",
        request=ScreeningInput,
        responses=responses({200: PairDetailOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
        data = validated(ScreeningInput, request.data)
        unscreened = pair.status == PagePair.Status.CLAIMED
        pair = pair_screen(pair=pair, user=request.user, **data)
        return Response(_pair_detail(pair, unscreened=unscreened))


class PairSubmitApi(APIView):
    @extend_schema(
        summary="Send a pair's items on to review",
        description="400 with `details` naming each incomplete field, e.g. `items[2].question`.",
        request=None,
        responses=responses({200: PairDetailOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
        pair = pair_submit(pair=pair, user=request.user)
        return Response(_pair_detail(pair))


class PairGiveBackApi(APIView):
    @extend_schema(
        summary="Skip a pair you hold: it goes back to the queue (not to you again), with an optional reason",
        description="409 when the pair has QA items or is no longer open (screened out, submitted).",
        request=GiveBackInput,
        responses=responses({201: GiveBackOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
        data = validated(GiveBackInput, request.data)
        skip = pair_give_back(pair=pair, user=request.user, reason=data["reason"])
        return Response(GiveBackOutput(skip).data, status=status.HTTP_201_CREATED)


class PairSkipUndoApi(APIView):
    @extend_schema(
        summary="Take back your skip of a pair: it is yours again if nobody took it, else it waits for you",
        description="404 when you have no skip of this pair to take back.",
        request=None,
        responses=responses({200: SkipUndoOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.ANNOTATOR)
        skip = PairSkip.objects.skipped_by(request.user.pk).filter(pair_id=pair_id, pair__project=project).last()
        if skip is None:
            raise Http404("No skip of yours to take back for this pair.")
        pair = pair_skip_undo(skip=skip, user=request.user)
        return Response(SkipUndoOutput({"pair": pair_id, "yours": pair is not None}).data)


class PairActivityApi(APIView):
    @extend_schema(
        summary="Report active seconds spent on a pair (and an item)",
        request=ActivityInput,
        responses=responses({204: NO_CONTENT}),
    )
    def post(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
        data = validated(ActivityInput, request.data)
        item = None
        if data["item"] is not None:
            item = access.get_item_for_user(request.user, slug, data["item"], role=Role.ANNOTATOR)
        pair_record_activity(pair=pair, user=request.user, seconds=data["seconds"], item=item)
        return Response(status=status.HTTP_204_NO_CONTENT)


# QA items


class PairItemListApi(APIView):
    @extend_schema(
        summary="The live QA items of a pair",
        responses=responses({200: ItemOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_user(request.user, slug, pair_id)
        items = QAItem.objects.alive().filter(pair=pair).select_related("author").prefetch_related("spans")
        return Response(ItemOutput(items, many=True).data)

    @extend_schema(
        summary="Start a QA item on a pair you are annotating, optionally with its content",
        request=ItemCreateInput,
        responses=responses({201: ItemOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR, item_counts=True)
        data = validated(ItemCreateInput, request.data)
        item = qa_item_create(pair=pair, user=request.user, **data)
        return Response(ItemOutput(item).data, status=status.HTTP_201_CREATED)


class ItemDetailApi(APIView):
    stale_serializer = ItemOutput

    @extend_schema(
        summary="A QA item with its evidence spans",
        responses=responses({200: ItemOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_user(request.user, slug, item_id)
        return Response(ItemOutput(item).data)

    @extend_schema(
        summary="Save a draft item (author)",
        description=(
            "`version` is required. Fields left out keep their value; `spans` replaces every span. "
            "If the item changed since `version`, nothing is saved and the 409 carries the newer item as `current`."
        ),
        request=ItemUpdateInput,
        responses=responses({200: ItemOutput, 409: StaleItemOutput}),
    )
    def patch(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_user(request.user, slug, item_id, role=Role.ANNOTATOR)
        data = validated(ItemUpdateInput, request.data)
        item = qa_item_update(item=item, user=request.user, **data)
        return Response(ItemOutput(item).data)

    @extend_schema(
        summary="Delete an item: a draft of yours, or any item as a coordinator (soft: it can be restored)",
        responses=responses({204: NO_CONTENT}, bad_input=False),
    )
    def delete(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_user(request.user, slug, item_id)
        qa_item_delete(item=item, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ItemWarningsApi(APIView):
    @extend_schema(
        summary="Advice on a QA item (never blocking)",
        responses=responses({200: WarningOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_user(request.user, slug, item_id)
        return Response(WarningOutput(qa_item_warnings(item), many=True).data)


class LocalCheckOutput(serializers.Serializer):
    status = serializers.CharField(
        help_text="none (never asked: the project's check is off, or the item has no text yet), pending, running, "
        "done or failed."
    )
    status_words = serializers.CharField()
    result = serializers.CharField(
        help_text="Once done: not_answered (local knowledge), closed_book or standard_lead (a model answers it)."
    )
    current = serializers.BooleanField(help_text="The check is of the item's question and answer as they now read.")
    question = serializers.CharField()
    answer = serializers.CharField(help_text="The standard-language answer the model's answers were compared with.")
    model = serializers.CharField()
    method = serializers.CharField(help_text="How a model answer counted as right.")
    closed_book_answer = serializers.CharField()
    closed_book_score = serializers.FloatField(allow_null=True, help_text="chrF++ (0 to 1).")
    lead_answer = serializers.CharField()
    lead_score = serializers.FloatField(allow_null=True, help_text="chrF++ (0 to 1).")
    error = serializers.CharField(help_text="Why the check failed.")
    failures = serializers.IntegerField()
    retry_at = serializers.DateTimeField(allow_null=True, help_text="When a failed check is tried again.")
    requested_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


def _local_check_data(check: LocalCheck, item: QAItem) -> dict[str, Any]:
    fields = [str(name) for name in LocalCheckOutput().fields if name not in ("status_words", "current")]
    return {
        **{name: getattr(check, name) for name in fields},
        "status_words": check.status_words,
        "current": check.is_current_for(item.question, item.answer_standard),
    }


class ItemLocalCheckApi(APIView):
    @extend_schema(
        summary="Whether a model answers this item: its local-knowledge check",
        responses=responses({200: LocalCheckOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_user(request.user, slug, item_id)
        check = LocalCheck.objects.filter(item=item).first()
        if check is None:
            never = {name: "" for name in LocalCheckOutput().fields} | {
                "status": "none",
                "status_words": "Not checked",
                "current": False,
                "closed_book_score": None,
                "lead_score": None,
                "failures": 0,
                "retry_at": None,
                "requested_at": None,
                "finished_at": None,
            }
            return Response(LocalCheckOutput(never).data)
        return Response(LocalCheckOutput(_local_check_data(check, item)).data)

    @extend_schema(
        summary="Ask for the item's local-knowledge check again (its author)",
        request=None,
        responses=responses({202: LocalCheckOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_user(request.user, slug, item_id)
        check = local_check_again(item=item, user=request.user)
        return Response(LocalCheckOutput(_local_check_data(check, item)).data, status=status.HTTP_202_ACCEPTED)
