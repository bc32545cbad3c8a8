"""Request and response shapes of the trivia API (checking beyond shape is the services' job)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response

from annotation.api_imports import ImportJobOutput
from annotation.models import ImportJob, Project, QAItem, QAItemRevision
from multichoice.models import ProblemTag, TriviaImport, TriviaItem, TriviaSettings


class TriviaProjectCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=60, required=False)
    source_language = serializers.CharField(max_length=8)
    target_language = serializers.CharField(max_length=8)
    categories = serializers.ListField(child=serializers.CharField(max_length=100), required=False, default=list)


class CriterionSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # the JSON key, not Field.label
    help = serializers.CharField(required=False, allow_blank=True)


class TriviaSettingsOutput(serializers.ModelSerializer):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    review_criteria = serializers.SerializerMethodField()
    reviewers_per_item = serializers.IntegerField(source="project.reviewers_per_item", read_only=True)

    class Meta:
        model = TriviaSettings
        fields = [
            "project",
            "source_language",
            "target_language",
            "categories",
            "review_criteria",
            "reviewers_per_item",
            "targets",
            "version",
        ]

    @extend_schema_field(CriterionSerializer(many=True))
    def get_review_criteria(self, settings: TriviaSettings) -> list[dict[str, str]]:
        return settings.project.review_criteria


class TriviaSettingsUpdateInput(serializers.Serializer):
    version = serializers.IntegerField(required=False)
    categories = serializers.ListField(child=serializers.CharField(max_length=100), required=False)
    review_criteria = CriterionSerializer(many=True, required=False)
    reviewers_per_item = serializers.IntegerField(min_value=1, max_value=10, required=False)


class TriviaItemInput(serializers.Serializer):
    question = serializers.CharField()
    candidates = serializers.ListField(child=serializers.CharField(allow_blank=True))
    answer = serializers.IntegerField()
    subset = serializers.CharField()
    category = serializers.CharField()
    difficulty = serializers.CharField()


class TriviaRewriteInput(TriviaItemInput):
    version = serializers.IntegerField()


class TriviaRevisionOutput(serializers.ModelSerializer):
    """A revision of the shared QA item; the multiple-choice part is in its `content`."""

    candidates = serializers.SerializerMethodField()
    answer = serializers.SerializerMethodField()
    category = serializers.SerializerMethodField()
    subset = serializers.SerializerMethodField()
    difficulty = serializers.SerializerMethodField()

    class Meta:
        model = QAItemRevision
        fields = [
            "number",
            "question",
            "candidates",
            "answer",
            "category",
            "subset",
            "difficulty",
            "reason",
            "created_at",
        ]

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_candidates(self, revision: QAItemRevision) -> list[str]:
        return list(revision.content.get("candidates", []))

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_answer(self, revision: QAItemRevision) -> int | None:
        return revision.content.get("answer")

    @extend_schema_field(serializers.CharField())
    def get_category(self, revision: QAItemRevision) -> str:
        return str(revision.content.get("category", ""))

    @extend_schema_field(serializers.CharField())
    def get_subset(self, revision: QAItemRevision) -> str:
        return str(revision.content.get("subset", ""))

    @extend_schema_field(serializers.CharField())
    def get_difficulty(self, revision: QAItemRevision) -> str:
        return str(revision.content.get("difficulty", ""))


class TriviaReviewOutput(serializers.Serializer):
    """One reviewer's review: a filled review slot, its judgments read as criteria met or not."""

    slot = serializers.IntegerField()
    revision = serializers.IntegerField(help_text="The number of the revision reviewed.")
    criteria = serializers.DictField(child=serializers.BooleanField())
    accepted = serializers.BooleanField(help_text="Every criterion met.")
    comment = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class TriviaItemOutput(serializers.ModelSerializer):
    id = serializers.IntegerField(source="item_id", read_only=True, help_text="The shared QA item's id.")
    question = serializers.CharField(source="item.question", read_only=True)
    status = serializers.CharField(source="item.status", read_only=True, help_text=", ".join(QAItem.Status.values))
    translation_status = serializers.CharField(read_only=True, help_text=", ".join(TriviaItem.Translation.values))
    version = serializers.IntegerField(source="item.version", read_only=True, help_text="The QA item's version.")

    class Meta:
        model = TriviaItem
        fields = [
            "id",
            "external_id",
            "category",
            "subset",
            "difficulty",
            "question",
            "candidates",
            "answer",
            "status",
            "translation_status",
            "target_question",
            "target_candidates",
            "problem_tags",
            "problem_note",
            "resolution",
            "version",
        ]


class TranslationSuggestionOutput(serializers.Serializer):
    """A model's suggested translation: the translator may take it (`suggestion`, `suggestion_taken` when saving)."""

    id = serializers.IntegerField()
    target_question = serializers.CharField()
    target_candidates = serializers.ListField(child=serializers.CharField())
    model = serializers.CharField(source="job.model")


class TriviaItemDetailOutput(TriviaItemOutput):
    revision = serializers.SerializerMethodField()
    revisions = serializers.SerializerMethodField()
    reviews = serializers.SerializerMethodField()
    suggestion = serializers.SerializerMethodField()

    class Meta(TriviaItemOutput.Meta):
        fields = [*TriviaItemOutput.Meta.fields, "revision", "revisions", "reviews", "suggestion"]

    @extend_schema_field(TranslationSuggestionOutput(allow_null=True))
    def get_suggestion(self, item: TriviaItem) -> dict | None:
        from multichoice.services.suggestions import translation_suggestion_latest

        latest = translation_suggestion_latest(item)
        return TranslationSuggestionOutput(latest).data if latest is not None else None

    @extend_schema_field(serializers.IntegerField())
    def get_revision(self, item: TriviaItem) -> int:
        return max((revision.number for revision in item.item.revisions.all()), default=0)

    @extend_schema_field(TriviaRevisionOutput(many=True))
    def get_revisions(self, item: TriviaItem) -> list[dict]:
        revisions = sorted(item.item.revisions.all(), key=lambda r: r.number)
        return serializers.ListSerializer(revisions, child=TriviaRevisionOutput()).data

    @extend_schema_field(TriviaReviewOutput(many=True))
    def get_reviews(self, item: TriviaItem) -> list[dict]:
        from multichoice.services.reviews import trivia_reviews

        return serializers.ListSerializer(trivia_reviews(item), child=TriviaReviewOutput()).data


class TriviaReviewInput(serializers.Serializer):
    criteria = serializers.DictField(child=serializers.BooleanField())
    comment = serializers.CharField(required=False, allow_blank=True, default="")


class TriviaTranslationInput(serializers.Serializer):
    target_question = serializers.CharField(allow_blank=True)
    target_candidates = serializers.ListField(child=serializers.CharField(allow_blank=True))
    problem_tags = serializers.ListField(child=serializers.ChoiceField(choices=ProblemTag.choices), default=list)
    problem_note = serializers.CharField(required=False, allow_blank=True, default="")
    suggestion = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="The id of the model's suggested translation shown."
    )
    suggestion_taken = serializers.BooleanField(
        default=False, help_text="Whether you took the suggestion (then kept it: accepted, or changed it)."
    )


class TriviaSourceFix(serializers.Serializer):
    question = serializers.CharField(required=False)
    candidates = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)
    answer = serializers.IntegerField(required=False)
    subset = serializers.CharField(required=False)
    category = serializers.CharField(required=False)
    difficulty = serializers.CharField(required=False)


class TriviaResolutionInput(serializers.Serializer):
    resolution = serializers.ChoiceField(choices=["fix", "accept", "drop"])
    source = TriviaSourceFix(required=False)  # type: ignore[assignment]  # the JSON key, not Field.source
    target_question = serializers.CharField(required=False)
    target_candidates = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)


class TriviaImportInput(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=["auto", "csv", "jsonl"], default="auto")
    subset = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="local or global: the subset of every CSV row."
    )
    add_categories = serializers.BooleanField(default=True)


class TriviaImportBatchOutput(serializers.ModelSerializer):
    created_by: serializers.StringRelatedField[User] = serializers.StringRelatedField()
    live = serializers.IntegerField(help_text="How many of its items are still there.")
    skipped = serializers.SerializerMethodField()

    class Meta:
        model = TriviaImport
        fields = ["id", "name", "sha256", "created_by", "created_at", "created", "skipped", "live", "undone_at"]

    def get_skipped(self, batch: TriviaImport) -> int:
        return len(batch.skipped)


class TriviaImportUndoOutput(serializers.Serializer):
    import_id = serializers.IntegerField()
    deleted = serializers.IntegerField(help_text="Items deleted (softly: restorable from the Deleted list).")
    worked_on = serializers.IntegerField(help_text="Of those, items reviewed or translated since the import.")


class TriviaSendBackInput(serializers.Serializer):
    note = serializers.CharField(help_text="What the translator should change.")


class BalanceCellOutput(serializers.Serializer):
    count = serializers.IntegerField()
    target = serializers.IntegerField(allow_null=True)
    missing = serializers.IntegerField(help_text="Items still needed to reach the target.")
    low = serializers.BooleanField(help_text="Among the emptiest cells.")


class BalanceRowOutput(serializers.Serializer):
    category = serializers.CharField()
    cells = serializers.DictField(child=serializers.DictField(child=BalanceCellOutput()))
    total = serializers.IntegerField()


class TriviaBalanceOutput(serializers.Serializer):
    subsets = serializers.ListField(child=serializers.CharField())
    difficulties = serializers.ListField(child=serializers.CharField())
    rows = BalanceRowOutput(many=True)
    total = serializers.IntegerField()
    minimum = serializers.IntegerField()
    missing = serializers.IntegerField()
    translated_only = serializers.BooleanField()
    version = serializers.IntegerField(help_text="The trivia settings' version (send it back with targets).")


class TriviaTargetsInput(serializers.Serializer):
    version = serializers.IntegerField(required=False)
    targets = serializers.DictField(
        child=serializers.DictField(child=serializers.DictField(child=serializers.IntegerField(allow_null=True))),
        help_text='{category: {subset: {difficulty: n}}}, e.g. {"Geografia eta Historia": {"local": {"easy": 20}}}',
    )


class KindJobOutput(ImportJobOutput):
    """An import or generation job (annotation.ImportJob) with the address to poll for its progress and report;
    the report's `result` is the service's own answer (what the file brought, or the questions generated)."""

    url = serializers.SerializerMethodField()

    class Meta(ImportJobOutput.Meta):
        fields = [*ImportJobOutput.Meta.fields, "url"]

    def get_url(self, job: ImportJob) -> str:
        return reverse("api_import", args=[job.project.slug, job.pk])


def job_accepted(job: ImportJob) -> Response:
    """202 with the queued job and where to poll it (the `Location` header too)."""
    body = KindJobOutput(job).data
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})
