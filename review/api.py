"""The review REST API: thin views over review.access and the review services (same conventions as annotation.api)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.access import get_pair_for_user, get_project_for_user
from annotation.models import Membership, PagePair, Project, QAItem, Role
from annotation.serializers import ItemOutput, StaleItemOutput
from common.api import NO_CONTENT, paginated, responses, validated
from common.requests import SignedInApiRequest
from review import access
from review import decisions as review_decisions
from review import history as review_history
from review import judging as review_judging
from review import labels as review_labels
from review import project_settings as review_project_settings
from review import queue as review_queue
from review import reviewers as review_reviewers
from review import statistics as review_statistics
from review import verification as review_verification
from review.models import ReviewSlot
from review.serializers import (
    AdjudicationRowOutput,
    AuthorItemOutput,
    DashboardOutput,
    DocumentQaOutput,
    FinalLabelOutput,
    HistoryOutput,
    LabelInput,
    LabelOutput,
    LanguagesInput,
    PairLabelsOutput,
    RejectInput,
    ReviewActivityInput,
    ReviewerOutput,
    ReviewerRewriteInput,
    ReviewFilterInput,
    ReviewItemOutput,
    ReviewSettingsInput,
    ReviewSettingsOutput,
    ReviewSubmitInput,
    SlotOutput,
    StaleFinalLabelOutput,
    StaleLabelOutput,
    StaleLanguagesOutput,
    StaleReviewSettingsOutput,
    StaleSlotOutput,
    StaleVerificationOutput,
    VerificationInput,
    VerificationOutput,
    VerificationSearchInput,
    VerificationStateOutput,
    VersionInput,
)
from review.views.queue import ReviewFilter, review_items

EMPTY = OpenApiResponse(description="Nothing is waiting for you.")


def _slot_data(slot: ReviewSlot, project: Project, *, loaded: bool = False) -> dict[str, Any]:
    """The slot as SlotOutput shows it. `loaded`: it comes with its item, pair, author, revision and reviewer as
    they are now (else they are read again)."""
    if not loaded:
        slot = ReviewSlot.objects.select_related("item", "item__pair", "item__author", "revision", "reviewer").get(
            pk=slot.pk
        )
    slot.item.project = project
    slot.item.pair.project = project
    return SlotOutput(slot).data


# The queue and the filtered list


class ReviewItemListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Submitted items of the project with their review progress (reviewer, coordinator)",
        parameters=[ReviewFilterInput],
        responses=responses({200: ReviewItemOutput(many=True)}, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_project_for_user(request.user, slug, role=access.REVIEWING)
        query = validated(ReviewFilterInput, request.query_params)
        items = review_items(project, ReviewFilter.from_query(query))
        return paginated(self, request, items, ReviewItemOutput)


class MyItemsApi(APIView):
    @extend_schema(
        summary="Your submitted items (annotator): sent back first, each flag with its criterion and reason",
        responses=responses({200: AuthorItemOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_project_for_user(request.user, slug, role=Role.ANNOTATOR)
        items = review_history.author_items(project=project, user=request.user)
        return Response(AuthorItemOutput(items, many=True, context={"project": project}).data)


class ReviewNextApi(APIView):
    @extend_schema(
        summary="Claim the next item to review (reviewer)",
        description="Returns the slot you already hold, else the oldest you may fill (never your own items); 204 when "
        "nothing is waiting.",
        request=None,
        responses=responses({200: SlotOutput, 204: EMPTY}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        reviewing, held = access.reviewer_queue_access(request.user, slug)
        slot = review_queue.review_claim_next(
            project=reviewing.project, user=request.user, membership=reviewing.membership, held=held
        )
        if slot is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(_slot_data(slot, reviewing.project, loaded=True))


class ReviewClaimApi(APIView):
    @extend_schema(
        summary="Claim a review slot of a chosen item (reviewer)",
        request=None,
        responses=responses({200: SlotOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_reviewer(request.user, slug, item_id, role=Role.REVIEWER)
        slot = review_queue.review_claim(item=item, user=request.user)
        return Response(_slot_data(slot, item.project))


class ReviewSlotApi(APIView):
    stale_serializer = SlotOutput

    @extend_schema(
        summary="A review you hold (or any review, for a coordinator), with the item, criteria and judgments",
        responses=responses({200: SlotOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, slot_id: int) -> Response:
        slot = access.get_slot_for_reviewer(request.user, slug, slot_id)
        return Response(_slot_data(slot, slot.item.project, loaded=True))

    @extend_schema(
        summary="Record your judgments: every criterion pass or flag, with an optional comment",
        description="When every slot of the round is done the item is decided: all pass → accepted, any flag → "
        "needs rewrite. 409 if the item is no longer in review, the slot is not yours any more, or `version` is stale.",
        request=ReviewSubmitInput,
        responses=responses({200: SlotOutput, 409: StaleSlotOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, slot_id: int) -> Response:
        with transaction.atomic():  # the slot read with its item locked, and judged, in one transaction
            slot = access.get_slot_for_judging(request.user, slug, slot_id)
            data = validated(ReviewSubmitInput, request.data)
            project = slot.item.project
            slot = review_judging.review_submit(
                slot=slot, user=request.user, version=data["version"], judgments=data["judgments"], locked=True
            )
        return Response(_slot_data(slot, project, loaded=True))


class ReviewReleaseApi(APIView):
    @extend_schema(
        summary="Give a review you hold back to the queue",
        request=None,
        responses=responses({204: NO_CONTENT}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, slot_id: int) -> Response:
        slot = access.get_slot_for_reviewer(request.user, slug, slot_id, held=True)
        review_queue.review_release(slot=slot, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReviewActivityApi(APIView):
    @extend_schema(
        summary="Report active seconds spent on a review you hold",
        request=ReviewActivityInput,
        responses=responses({204: NO_CONTENT}),
    )
    def post(self, request: SignedInApiRequest, slug: str, slot_id: int) -> Response:
        slot = access.get_slot_for_reviewer(request.user, slug, slot_id, held=True)
        data = validated(ReviewActivityInput, request.data)
        review_queue.review_record_activity(slot=slot, user=request.user, seconds=data["seconds"])
        return Response(status=status.HTTP_204_NO_CONTENT)


# Outcomes


def _item_data(item: QAItem) -> dict[str, Any]:
    item = QAItem.objects.select_related("author").prefetch_related("spans").get(pk=item.pk)
    return ItemOutput(item).data


class ItemRejectApi(APIView):
    stale_serializer = ItemOutput

    @extend_schema(
        summary="Reject an item, with a reason (coordinator)",
        request=RejectInput,
        responses=responses({200: ItemOutput, 409: StaleItemOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_coordinator(request.user, slug, item_id)
        data = validated(RejectInput, request.data)
        item = review_decisions.qa_item_reject(item=item, user=request.user, **data)
        return Response(_item_data(item))


class ItemResubmitApi(APIView):
    stale_serializer = ItemOutput

    @extend_schema(
        summary="Send your rewritten item back to review (author)",
        description="Edit the item first (PATCH /items/{id}/ works while it needs a rewrite). Creates revision n+1.",
        request=VersionInput,
        responses=responses({200: ItemOutput, 409: StaleItemOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_author(request.user, slug, item_id)
        data = validated(VersionInput, request.data)
        item = review_decisions.qa_item_resubmit(item=item, user=request.user, version=data["version"])
        return Response(_item_data(item))


class ItemReviewerRewriteApi(APIView):
    stale_serializer = ItemOutput

    @extend_schema(
        summary="Rewrite a flagged item yourself, where the project allows it (reviewer)",
        request=ReviewerRewriteInput,
        responses=responses({200: ItemOutput, 409: StaleItemOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_reviewer(request.user, slug, item_id, role=Role.REVIEWER)
        data = validated(ReviewerRewriteInput, request.data)
        item = review_decisions.qa_item_reviewer_rewrite(item=item, user=request.user, **data)
        return Response(_item_data(item))


class ItemHistoryApi(APIView):
    @extend_schema(
        summary="Every revision of an item with its diff and reviews, and every event",
        description="Reviewer names are null for the author when the project uses blind review.",
        responses=responses({200: HistoryOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        reader = access.reader_access(request.user, slug, item_id)
        item = reader.item
        entries, events = review_history.item_history(item)
        context = {
            "show_names": review_history.show_reviewer_names(reader.project, reader.membership, item, request.user),
            "item_author_id": item.author_id,
        }
        payload = {"item": QAItem.objects.prefetch_related("spans").get(pk=item.pk), "revisions": entries}
        payload["events"] = events
        return Response(HistoryOutput(payload, context=context).data)


# Verification


class ItemVerificationApi(APIView):
    stale_serializer = VerificationOutput

    def _state(self, item: QAItem, query: str) -> dict[str, Any]:
        text = item.pair.standard_text
        history = list(item.verifications.select_related("verifier").order_by("number"))
        results = [r for r in review_verification.verification_search(text, query) if r.match] if query else []
        return {
            "possible": bool(text),
            "reason": "" if text else "The pair was imported without the standard page's full text.",
            "current": history[-1] if history else None,
            "history": history,
            "query": query,
            "sentences": results,
        }

    @extend_schema(
        summary="Full-document verification of a lead item, and a search of the standard full text",
        parameters=[VerificationSearchInput],
        responses=responses({200: VerificationStateOutput}, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_reader(request.user, slug, item_id)
        query = validated(VerificationSearchInput, request.query_params).get("q", item.answer_standard)
        return Response(VerificationStateOutput(self._state(item, query)).data)

    @extend_schema(
        summary="Record found (with supporting sentences as code-point offsets), not found, or not possible",
        request=VerificationInput,
        responses=responses({201: VerificationOutput, 409: StaleVerificationOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = access.get_item_for_reader(request.user, slug, item_id)
        data = validated(VerificationInput, request.data)
        verification = review_verification.verification_record(item=item, user=request.user, **data)
        return Response(VerificationOutput(verification).data, status=status.HTTP_201_CREATED)


# Labels and adjudication


class PairLabelsApi(APIView):
    stale_serializer = LabelOutput

    def _data(self, pair: PagePair, user: User) -> dict[str, Any]:
        state = review_labels.pair_label_state(pair)
        return PairLabelsOutput(
            {
                "pair": pair.pk,
                "needed": state["needed"],
                "done": len(state["done"]),
                "complete": state["complete"],
                "labels": review_labels.labels_visible_to(state, user),
                "finals": list(state["finals"].values()),
            }
        ).data

    @extend_schema(
        summary="Article labels of a pair (coordinator): yours, and everyone's once all labellers are done",
        responses=responses({200: PairLabelsOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_labeller(request.user, slug, pair_id)
        return Response(self._data(pair, request.user))

    @extend_schema(
        summary="Set your topic or region label of a pair (coordinator); a change keeps the earlier label",
        request=LabelInput,
        responses=responses({200: PairLabelsOutput, 409: StaleLabelOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_labeller(request.user, slug, pair_id)
        data = validated(LabelInput, request.data)
        review_labels.label_set(pair=pair, user=request.user, **data)
        return Response(self._data(pair, request.user))


class AdjudicationListApi(APIView):
    @extend_schema(
        summary="Pairs whose labellers disagree, kind by kind (coordinator)",
        responses=responses({200: AdjudicationRowOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        return Response(AdjudicationRowOutput(review_labels.adjudication_list(project), many=True).data)


class FinalLabelApi(APIView):
    stale_serializer = FinalLabelOutput

    @extend_schema(
        summary="Record the final label of a kind for a pair (coordinator adjudicating)",
        request=LabelInput,
        responses=responses({200: FinalLabelOutput, 409: StaleFinalLabelOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = access.get_pair_for_labeller(request.user, slug, pair_id)
        data = validated(LabelInput, request.data)
        final = review_labels.label_adjudicate(pair=pair, user=request.user, **data)
        return Response(FinalLabelOutput(final).data)


# Dashboard and reviewers


class DashboardApi(APIView):
    @extend_schema(
        summary="The study's statistics table, throughput, reviewer workload, topics and regions (coordinator)",
        responses=responses({200: DashboardOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        return Response(DashboardOutput(review_statistics.project_statistics(project)).data)


def _reviewer_row(membership: Membership) -> dict[str, Any]:
    row = getattr(membership, "reader_languages", None)
    languages = review_reviewers.reader_languages(membership)
    return {
        "username": membership.user.username,
        "languages": languages,
        "explicit": row is not None,
        "eligible": membership.project.standard_language in languages,
        "version": row.version if row else 0,
    }


class ReviewerListApi(APIView):
    @extend_schema(
        summary="Reviewers and the languages they read (coordinator)",
        responses=responses({200: ReviewerOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        members = Membership.objects.filter(project=project, is_reviewer=True).select_related(
            "user", "reader_languages"
        )
        rows = []
        for membership in members:
            membership.project = project
            rows.append(_reviewer_row(membership))
        return Response(ReviewerOutput(rows, many=True).data)


class ReviewerLanguagesApi(APIView):
    stale_serializer = None

    @extend_schema(
        summary="Set the languages a member reads (coordinator); items go only to reviewers reading the standard one",
        request=LanguagesInput,
        responses=responses({200: ReviewerOutput, 409: StaleLanguagesOutput}),
    )
    def put(self, request: SignedInApiRequest, slug: str, username: str) -> Response:
        project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        user = get_user_model().objects.filter(username=username, memberships__project=project).first()
        if user is None:
            raise Http404("No such member of this project.")
        data = validated(LanguagesInput, request.data)
        review_reviewers.reviewer_languages_set(project=project, user=user, actor=request.user, **data)
        membership = Membership.objects.select_related("user", "reader_languages").get(project=project, user=user)
        membership.project = project
        return Response(ReviewerOutput(_reviewer_row(membership)).data)


class ReviewSettingsApi(APIView):
    stale_serializer = ReviewSettingsOutput

    @extend_schema(
        summary="Review criteria, rewrite and blind-review options, label sets, labellers, time box",
        responses=responses({200: ReviewSettingsOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_project_for_user(request.user, slug)
        return Response(ReviewSettingsOutput(project).data)

    @extend_schema(
        summary="Change the review and label settings (coordinator)",
        request=ReviewSettingsInput,
        responses=responses({200: ReviewSettingsOutput, 409: StaleReviewSettingsOutput}),
    )
    def patch(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        data = validated(ReviewSettingsInput, request.data)
        if "review_criteria" in data:
            data["review_criteria"] = [dict(criterion) for criterion in data["review_criteria"]]
        project = review_project_settings.project_review_settings_update(project=project, actor=request.user, **data)
        return Response(ReviewSettingsOutput(project).data)


class DocumentQaApi(APIView):
    def _data(self, pair: PagePair) -> dict[str, Any]:
        project = pair.project
        item = (
            QAItem.objects.alive()
            .filter(pair=pair, kind=QAItem.Kind.DOCUMENT)
            .select_related("author")
            .prefetch_related("spans")
            .first()
        )
        box = review_history.time_box(item) if item is not None else None
        return DocumentQaOutput(
            {
                "collects": project.collect_document_qa,
                "possible": bool(pair.local_text),
                "minutes": project.document_qa_minutes,
                "deadline": box["deadline"] if box else None,
                "overdue": bool(box and box["overdue"]),
                "item": item,
            }
        ).data

    @extend_schema(
        summary="The pair's document-level QA and its time box (annotator holding the pair, coordinator)",
        description="Edit the item with PATCH /items/{id}/; its spans are offsets into the local full text.",
        responses=responses({200: DocumentQaOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = get_pair_for_user(request.user, slug, pair_id)
        return Response(self._data(pair))

    @extend_schema(
        summary="Start the pair's document-level QA (at most one per pair); the time box starts now",
        request=None,
        responses=responses({201: DocumentQaOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, pair_id: int) -> Response:
        pair = get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
        from annotation.services.items import qa_item_create

        qa_item_create(pair=pair, user=request.user, kind=QAItem.Kind.DOCUMENT)
        return Response(self._data(pair), status=status.HTTP_201_CREATED)
