"""The entity-question REST API: the same services as the pages, through `multichoice.access`."""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.access import require_project_creator
from annotation.models import Project, Role
from common.api import paginated, responses, validated
from common.errors import InvalidInput
from common.parsers import JSONParser
from common.requests import SignedInApiRequest
from multichoice import entities as services
from multichoice import jobs
from multichoice.access import get_entity, get_entity_project, get_entity_question
from multichoice.models import Entity, EntityQuestion, EntitySettings
from multichoice.serializers import KindJobOutput, job_accepted

TAG = ["entity questions"]


class AttributeSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField(required=False)  # type: ignore[assignment]  # the JSON key, not Field.label
    kind = serializers.CharField(help_text="year, city, list or text")
    inductive = serializers.CharField(help_text="Template with {entity}")
    deductive = serializers.CharField(help_text="Template with {value}")
    statement = serializers.CharField(
        required=False, help_text="The fact as a sentence, with {entity} and {value}: what contexts are made of"
    )


class EntityProjectCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=60, required=False)
    language = serializers.CharField(max_length=8)
    attributes = AttributeSerializer(many=True)
    grouping_fields = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    entity_label = serializers.CharField(required=False, default="company")
    seed = serializers.IntegerField(required=False, default=0, min_value=0)


class EntitySettingsOutput(serializers.ModelSerializer):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    attributes = AttributeSerializer(many=True)

    class Meta:
        model = EntitySettings
        fields = ["project", "entity_label", "attributes", "grouping_fields", "seed", "version"]


class EntityOutput(serializers.ModelSerializer):
    class Meta:
        model = Entity
        fields = ["id", "name", "description", "raw", "values", "corrected", "groupings"]


class EntityCorrectInput(serializers.Serializer):
    entity = serializers.IntegerField()
    attribute = serializers.CharField()
    value = serializers.CharField()


class EntityImportInput(serializers.Serializer):
    file = serializers.FileField()


class GenerateInput(serializers.Serializer):
    seed = serializers.IntegerField(required=False, min_value=0)


class EntityQuestionOutput(serializers.ModelSerializer):
    id = serializers.IntegerField(source="item_id", read_only=True, help_text="The shared QA item's id.")
    entity = serializers.CharField(source="entity.name", read_only=True)
    question = serializers.CharField(source="item.question", read_only=True)
    status = serializers.CharField(read_only=True, help_text=", ".join(EntityQuestion.Status.values))
    version = serializers.IntegerField(source="item.version", read_only=True, help_text="The QA item's version.")
    value_corrected = serializers.SerializerMethodField(
        help_text="The value this question was generated from has been corrected since."
    )

    def get_value_corrected(self, question: EntityQuestion) -> bool:
        return question.value_corrected_at is not None

    class Meta:
        model = EntityQuestion
        fields = [
            "id",
            "entity",
            "attribute",
            "direction",
            "question",
            "options",
            "answer",
            "correct_value",
            "distractors",
            "status",
            "edited",
            "version",
            "value_corrected",
        ]


class ContextsOutput(serializers.Serializer):
    none = serializers.CharField(allow_blank=True)
    perfect = serializers.CharField(allow_blank=True)
    misleading = serializers.CharField(allow_blank=True)
    distraction = serializers.CharField(allow_blank=True)


class EntityQuestionDetailOutput(EntityQuestionOutput):
    contexts = serializers.SerializerMethodField()
    misleading_option = serializers.SerializerMethodField()

    class Meta(EntityQuestionOutput.Meta):
        fields = [*EntityQuestionOutput.Meta.fields, "contexts", "misleading_option"]

    @extend_schema_field(ContextsOutput)
    def get_contexts(self, question: EntityQuestion) -> dict[str, str]:
        return self.context["record"]["contexts"]

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_misleading_option(self, question: EntityQuestion) -> int | None:
        return self.context["record"]["misleading_option"]


class VerifyInput(serializers.Serializer):
    version = serializers.IntegerField()
    decision = serializers.ChoiceField(choices=["accept", "reject", "swap"])
    question = serializers.CharField(required=False)
    swap = serializers.IntegerField(required=False, help_text="Option index of the distractor to replace.")
    reason = serializers.CharField(required=False, allow_blank=True, help_text="Why it is rejected (needed to reject).")


class ProjectCreateApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Create an entity-question project (needs the permission to add projects)",
        request=EntityProjectCreateInput,
        responses=responses({201: EntitySettingsOutput}, not_found=False),
    )
    def post(self, request: SignedInApiRequest) -> Response:
        require_project_creator(request.user)
        data = validated(EntityProjectCreateInput, request.data)
        data["attributes"] = [dict(a) for a in data["attributes"]]
        project = services.entity_project_create(created_by=request.user, **data)
        return Response(EntitySettingsOutput(services.entity_settings(project)).data, status=status.HTTP_201_CREATED)


class EntityListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="Entities with raw and normalised values (coordinator)",
        responses=responses({200: EntityOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
        return paginated(self, request, Entity.objects.filter(project=project).order_by("name", "id"), EntityOutput)


class EntityImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=TAG,
        summary="Queue an import of entities from CSV or JSONL (coordinator); all or nothing",
        description=(
            "202 with the import job; a worker imports the file. Poll `url`; once it has ended its `report` holds "
            "`result` (created, updated, kept corrections, questions flagged, values normalised) or the problems "
            "(nothing written). 400 when the upload itself is unusable (no file, unknown format, over "
            "IMPORT_MAX_BYTES)."
        ),
        request={"multipart/form-data": EntityImportInput},
        responses=responses({202: KindJobOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
        upload = validated(EntityImportInput, request.data)["file"]
        with transaction.atomic():  # the worker hears of the job once this commits
            return job_accepted(jobs.entities_import_start(project=project, user=request.user, upload=upload))


class EntityCorrectApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="Correct a normalised value (coordinator)",
        request=EntityCorrectInput,
        responses=responses({200: EntityOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        get_entity_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(EntityCorrectInput, request.data)
        entity = get_entity(request.user, slug, data.pop("entity"))
        return Response(EntityOutput(services.entity_correct(entity=entity, user=request.user, **data)).data)


class GenerateApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="Queue the generation of the question pairs not generated yet (coordinator); seeded",
        description=(
            "202 with the job; a worker generates. Poll `url`: `bytes_done` of `bytes_total` count facts worked "
            "through, `records_done` the questions so far; once done the `report`'s `result` holds `created` and "
            "`skipped_without_distractors`."
        ),
        request=GenerateInput,
        responses=responses({202: KindJobOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
        data = validated(GenerateInput, request.data or {})
        with transaction.atomic():
            job = jobs.questions_generate_start(project=project, user=request.user, seed=data.get("seed"))
            return job_accepted(job)


class QuestionListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        tags=TAG,
        summary="Generated questions (coordinator)",
        responses=responses({200: EntityQuestionOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
        return paginated(self, request, services.entity_questions(project), EntityQuestionOutput)


class VerifyNextApi(APIView):
    @extend_schema(
        tags=TAG,
        summary="Claim the next question waiting for verification (reviewer role; the review app's queue with "
        "expiring claims, never one another verifier holds); 204 when none",
        request=None,
        responses=responses(
            {200: EntityQuestionOutput, 204: OpenApiResponse(description="Nothing waiting.")},
            bad_input=False,
            conflict=False,
        ),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = get_entity_project(request.user, slug, role=Role.REVIEWER)
        question = services.verification_next(project=project, user=request.user)
        if question is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(EntityQuestionOutput(question).data)


class VerifyApi(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        tags=TAG,
        summary="A question with its release contexts (coordinators and verifiers)",
        responses=responses({200: EntityQuestionDetailOutput}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        question = get_entity_question(request.user, slug, item_id)
        record = services.question_preview(question)
        return Response(EntityQuestionDetailOutput(question, context={"record": record}).data)

    @extend_schema(
        tags=TAG,
        summary="Verify a question (reviewer role): accept (with fixed wording), reject, or swap a distractor",
        request=VerifyInput,
        responses=responses({200: EntityQuestionOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, item_id: int) -> Response:
        question = get_entity_question(request.user, slug, item_id, role=Role.REVIEWER)
        data = validated(VerifyInput, request.data)
        if data["decision"] == "swap" and "swap" not in data:
            raise InvalidInput("swap: the index of a distractor option.", field="swap")
        question = services.question_verify(
            question=question,
            user=request.user,
            version=data["version"],
            decision=data["decision"],
            text=data.get("question"),
            swap=data.get("swap"),
            reason=data.get("reason", ""),
        )
        return Response(EntityQuestionOutput(question).data)
