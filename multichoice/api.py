"""The trivia REST API: the same services as the pages, through `multichoice.access`."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.access import require_project_creator
from annotation.models import Role
from common.api import paginated, responses, validated
from common.parsers import JSONParser
from common.requests import SignedInApiRequest
from multichoice import jobs
from multichoice.access import get_translation_item, get_trivia_item, get_trivia_project
from multichoice.models import TranslationSuggestionJob, TriviaImport, TriviaItem
from multichoice.serializers import (
    KindJobOutput,
    TriviaBalanceOutput,
    TriviaImportBatchOutput,
    TriviaImportInput,
    TriviaImportUndoOutput,
    TriviaItemDetailOutput,
    TriviaItemInput,
    TriviaItemOutput,
    TriviaProjectCreateInput,
    TriviaResolutionInput,
    TriviaReviewInput,
    TriviaReviewOutput,
    TriviaRewriteInput,
    TriviaSendBackInput,
    TriviaSettingsOutput,
    TriviaSettingsUpdateInput,
    TriviaTargetsInput,
    TriviaTranslationInput,
    job_accepted,
)
from multichoice.services.balance import trivia_balance, trivia_targets_set
from multichoice.services.files import trivia_export_csv, trivia_export_jsonl, trivia_import_undo, trivia_imports
from multichoice.services.items import trivia_item_rewrite, trivia_item_submit, trivia_items
from multichoice.services.projects import trivia_project_create, trivia_settings, trivia_settings_update
from multichoice.services.reviews import trivia_review, trivia_review_next
from multichoice.services.suggestions import translation_suggestions_start
from multichoice.services.translation import (
    translation_claim_next,
    translation_resolve,
    translation_send_back,
    translation_submit,
)

TAG = ["trivia"]
NOTHING = OpenApiResponse(description="Nothing waiting.")


def _detail(item: TriviaItem) -> dict:
    fresh = TriviaItem.objects.select_related("item").prefetch_related("item__revisions").get(pk=item.pk)
    return TriviaItemDetailOutput(fresh).data


class ProjectCreateApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Create a trivia project (needs the permission to add projects)",
        request=TriviaProjectCreateInput,
        responses=responses({201: TriviaSettingsOutput}, not_found=False),
    )
    def post(self, request: SignedInApiRequest) -> Response:
        require_project_creator(request.user)
        data = validated(TriviaProjectCreateInput, request.data)
        project = trivia_project_create(created_by=request.user, **data)
        return Response(TriviaSettingsOutput(trivia_settings(project)).data, status=status.HTTP_201_CREATED)


class SettingsApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Trivia settings: languages, categories, review criteria (any member)",
        responses=responses({200: TriviaSettingsOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug)
        return Response(TriviaSettingsOutput(trivia_settings(project)).data)

    @extend_schema(
        tags=TAG,
        summary="Change categories or review criteria (coordinator); `version` guards against a concurrent change",
        request=TriviaSettingsUpdateInput,
        responses=responses({200: TriviaSettingsOutput}),
    )
    def patch(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(TriviaSettingsUpdateInput, request.data)
        settings = trivia_settings_update(project=project, actor=request.user, **data)
        settings.project.refresh_from_db()
        return Response(TriviaSettingsOutput(settings).data)


class ItemListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="All items (coordinator)",
        responses=responses({200: TriviaItemOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        return paginated(self, request, trivia_items(project), TriviaItemOutput)

    @extend_schema(
        tags=TAG,
        summary="Write an item (annotator role); it goes to review",
        description=(
            "201 with the new item; 200 with the existing one when the author sent the same item (question, "
            "candidates, correct one, category, subset, difficulty) already: a retry creates nothing twice."
        ),
        request=TriviaItemInput,
        responses=responses({201: TriviaItemDetailOutput, 200: TriviaItemDetailOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.ANNOTATOR)
        data = validated(TriviaItemInput, request.data)
        item, created = trivia_item_submit(project=project, user=request.user, **data)
        return Response(_detail(item), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class ItemDetailApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="An item with its revisions and reviews (its author, translator, reviewers, coordinators)",
        responses=responses({200: TriviaItemDetailOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        return Response(_detail(get_trivia_item(request.user, slug, item_id)))

    @extend_schema(
        tags=TAG,
        summary="The author's rewrite of an item in review or sent back: a new revision, in review again",
        request=TriviaRewriteInput,
        responses=responses({200: TriviaItemDetailOutput}),
    )
    def patch(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = get_trivia_item(request.user, slug, item_id, role=Role.ANNOTATOR, author=True)
        data = validated(TriviaRewriteInput, request.data)
        item = trivia_item_rewrite(item=item, user=request.user, **data)
        return Response(_detail(item))


class ReviewApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="Review an item against the project's criteria (reviewer role); all met accepts it",
        request=TriviaReviewInput,
        responses=responses({201: TriviaReviewOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = get_trivia_item(request.user, slug, item_id, role=Role.REVIEWER)
        data = validated(TriviaReviewInput, request.data)
        review = trivia_review(item=item, user=request.user, **data)
        return Response(TriviaReviewOutput(review).data, status=status.HTTP_201_CREATED)


class ReviewNextApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Claim the next review slot of an item you did not write (reviewer role; the review app's queue); "
        "204 when none",
        request=None,
        responses=responses({200: TriviaItemDetailOutput, 204: NOTHING}, bad_input=False, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.REVIEWER)
        item = trivia_review_next(project=project, user=request.user)
        if item is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(_detail(item))


class TranslateNextApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Claim the next item to translate (annotator role); 204 when none is waiting",
        request=None,
        responses=responses({200: TriviaItemDetailOutput, 204: NOTHING}, bad_input=False, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.ANNOTATOR)
        item = translation_claim_next(project=project, user=request.user)
        if item is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(_detail(item))


class TranslationApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="Submit the translation of an item you hold; any problem tag sends it to the coordinator",
        request=TriviaTranslationInput,
        responses=responses({200: TriviaItemDetailOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = get_translation_item(request.user, slug, item_id)
        data = validated(TriviaTranslationInput, request.data)
        return Response(_detail(translation_submit(item=item, user=request.user, **data)))


class ResolutionApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="Resolve a tagged item (coordinator): fix (a source correction is a new revision), accept or drop",
        request=TriviaResolutionInput,
        responses=responses({200: TriviaItemDetailOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = get_trivia_item(request.user, slug, item_id, role=Role.COORDINATOR)
        data = validated(TriviaResolutionInput, request.data)
        return Response(_detail(translation_resolve(item=item, user=request.user, **data)))


class ProblemListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="Items with a problem tag waiting for a coordinator",
        responses=responses({200: TriviaItemOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        items = trivia_items(project).filter(translation_status=TriviaItem.Translation.FLAGGED)
        return paginated(self, request, items, TriviaItemOutput)


class BalanceApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Item counts by category × subset × difficulty (coordinator)",
        responses=responses({200: TriviaBalanceOutput}, bad_input=False, conflict=False),
    )
    @extend_schema(parameters=[OpenApiParameter("view", str, enum=["all", "translated"], required=False)])
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        translated = request.query_params.get("view") == "translated"
        return Response(TriviaBalanceOutput(trivia_balance(project, translated_only=translated)).data)

    @extend_schema(
        tags=TAG,
        summary="Set the targets per category × subset × difficulty (coordinator); answers the balance",
        request=TriviaTargetsInput,
        responses=responses({200: TriviaBalanceOutput}),
    )
    def put(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(TriviaTargetsInput, request.data)
        trivia_targets_set(project=project, actor=request.user, **data)
        return Response(TriviaBalanceOutput(trivia_balance(project)).data)


class ImportListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="The project's imports, newest first (coordinator)",
        responses=responses({200: TriviaImportBatchOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        return paginated(self, request, trivia_imports(project), TriviaImportBatchOutput)


class ImportUndoApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Undo an import (coordinator): its items are deleted softly, restorable one by one",
        request=None,
        responses=responses({200: TriviaImportUndoOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, import_id: int) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        batch = TriviaImport.objects.filter(project=project, pk=import_id).first()
        if batch is None:
            raise Http404("No such import in this project.")
        return Response(TriviaImportUndoOutput(trivia_import_undo(batch=batch, user=request.user)).data)


class SendBackApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="Send a translation (done or tagged) back to its translator with a note (coordinator)",
        request=TriviaSendBackInput,
        responses=responses({200: TriviaItemDetailOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        item = get_trivia_item(request.user, slug, item_id, role=Role.COORDINATOR)
        data = validated(TriviaSendBackInput, request.data)
        return Response(_detail(translation_send_back(item=item, user=request.user, **data)))


class ImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=TAG,
        summary="Queue an import of items from the CSV layout or JSONL (coordinator); all or nothing",
        description=(
            "202 with the import job; a worker imports the file. Poll `url` for `percent` and, once `status` is "
            "done or refused, the `report` (`result`: created, skipped, categories added, an earlier import of "
            "the same file; a refused import names file, line and field and wrote nothing). 400 when the upload "
            "itself is unusable (no file, unknown format, over IMPORT_MAX_BYTES)."
        ),
        request={"multipart/form-data": TriviaImportInput},
        responses=responses({202: KindJobOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(TriviaImportInput, request.data)
        with transaction.atomic():  # the worker hears of the job once this commits
            job = jobs.trivia_import_start(
                project=project,
                user=request.user,
                upload=data["file"],
                fmt=data["format"],
                subset=data["subset"],
                add=data["add_categories"],
            )
            return job_accepted(job)


def _download(data: bytes, name: str, content_type: str) -> HttpResponse:
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


class ExportCsvApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="All items (not dropped) in the CSV layout `id, category, difficulty, question, candidate0..n, answer`",
        responses=responses(
            {200: OpenApiResponse(OpenApiTypes.STR, description="text/csv")}, bad_input=False, conflict=False
        ),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> HttpResponse:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        return _download(trivia_export_csv(project), f"{project.slug}-trivia.csv", "text/csv; charset=utf-8")


class ExportJsonlApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="All items (not dropped) as JSONL, with their translations",
        responses=responses(
            {200: OpenApiResponse(OpenApiTypes.STR, description="application/x-ndjson")},
            bad_input=False,
            conflict=False,
        ),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> HttpResponse:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        return _download(trivia_export_jsonl(project), f"{project.slug}-trivia.jsonl", "application/x-ndjson")


class TranslationSuggestionJobOutput(serializers.ModelSerializer):
    status_words = serializers.CharField()
    percent = serializers.IntegerField()
    total = serializers.IntegerField(source="progress_total", read_only=True)
    done = serializers.IntegerField(source="progress_done", read_only=True)
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    failed_items = serializers.SerializerMethodField()

    class Meta:
        model = TranslationSuggestionJob
        fields = [
            "id",
            "status",
            "status_words",
            "endpoint_name",
            "model",
            "total",
            "done",
            "percent",
            "answered",
            "failed",
            "failed_items",
            "stage",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]

    @extend_schema_field(
        {"type": "array", "items": {"type": "object", "properties": {"item": {"type": "integer"}, "error": {}}}}
    )
    def get_failed_items(self, job: TranslationSuggestionJob) -> list[dict[str, Any]]:
        rows = job.suggestions.filter(ok=False).order_by("trivia_id").values("trivia__item_id", "error")[:1000]
        return [{"item": row["trivia__item_id"], "error": row["error"]} for row in rows]


class TranslationSuggestionsInput(serializers.Serializer):
    endpoint = serializers.IntegerField(help_text="One of the project's model endpoints.")


class TranslationSuggestionListApi(APIView):
    parser_classes = [JSONParser]
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="Suggested-translation jobs of the project, newest first (coordinator)",
        responses=responses({200: TranslationSuggestionJobOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        rows = TranslationSuggestionJob.objects.filter(project=project).select_related("created_by").order_by("-id")
        return paginated(self, request, rows, TranslationSuggestionJobOutput)

    @extend_schema(
        tags=TAG,
        summary="Ask a model endpoint for a suggested translation of every item open for translation (coordinator)",
        description="Answers 202 with the job; a worker asks the model. Translators see the suggestion beside their "
        "fields; only what they save is a translation.",
        request=TranslationSuggestionsInput,
        responses=responses({202: TranslationSuggestionJobOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(TranslationSuggestionsInput, request.data)
        with transaction.atomic():
            job = translation_suggestions_start(project=project, endpoint_id=data["endpoint"], user=request.user)
            body = TranslationSuggestionJobOutput(job).data
        return Response(body, status=status.HTTP_202_ACCEPTED)


class TranslationSuggestionJobApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="A suggested-translation job: status, counts, failed items with why (coordinator)",
        responses=responses({200: TranslationSuggestionJobOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, model_job_id: int) -> Response:
        project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
        job = TranslationSuggestionJob.objects.filter(project=project, pk=model_job_id).first()
        if job is None:
            raise Http404("No such suggested-translation job in this project.")
        return Response(TranslationSuggestionJobOutput(job).data)
