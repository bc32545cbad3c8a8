"""Request and response shapes of the trivia API (checking beyond shape is the services' job)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from multichoice.models import ProblemTag, TriviaItem, TriviaReview, TriviaRevision, TriviaSettings


class TriviaProjectCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=60, required=False)
    source_language = serializers.CharField(max_length=8)
    target_language = serializers.CharField(max_length=8)
    categories = serializers.ListField(child=serializers.CharField(max_length=100), required=False, default=list)


class CriterionSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    help = serializers.CharField(required=False, allow_blank=True)


class TriviaSettingsOutput(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    review_criteria = serializers.SerializerMethodField()

    class Meta:
        model = TriviaSettings
        fields = ["project", "source_language", "target_language", "categories", "review_criteria", "version"]

    @extend_schema_field(CriterionSerializer(many=True))
    def get_review_criteria(self, settings: TriviaSettings) -> list[dict[str, str]]:
        return settings.project.review_criteria


class TriviaSettingsUpdateInput(serializers.Serializer):
    version = serializers.IntegerField(required=False)
    categories = serializers.ListField(child=serializers.CharField(max_length=100), required=False)
    review_criteria = CriterionSerializer(many=True, required=False)


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
    class Meta:
        model = TriviaRevision
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


class TriviaReviewOutput(serializers.ModelSerializer):
    class Meta:
        model = TriviaReview
        fields = ["id", "revision", "criteria", "accepted", "comment", "created_at"]


class TriviaItemOutput(serializers.ModelSerializer):
    status = serializers.CharField(read_only=True, help_text=", ".join(TriviaItem.Status.values))
    translation_status = serializers.CharField(read_only=True, help_text=", ".join(TriviaItem.Translation.values))

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
            "revision",
            "translation_status",
            "target_question",
            "target_candidates",
            "problem_tags",
            "problem_note",
            "resolution",
            "version",
        ]


class TriviaItemDetailOutput(TriviaItemOutput):
    revisions = TriviaRevisionOutput(many=True, read_only=True)
    reviews = TriviaReviewOutput(many=True, read_only=True)

    class Meta(TriviaItemOutput.Meta):
        fields = [*TriviaItemOutput.Meta.fields, "revisions", "reviews"]


class TriviaReviewInput(serializers.Serializer):
    criteria = serializers.DictField(child=serializers.BooleanField())
    comment = serializers.CharField(required=False, allow_blank=True, default="")


class TriviaTranslationInput(serializers.Serializer):
    target_question = serializers.CharField(allow_blank=True)
    target_candidates = serializers.ListField(child=serializers.CharField(allow_blank=True))
    problem_tags = serializers.ListField(child=serializers.ChoiceField(choices=ProblemTag.choices), default=list)
    problem_note = serializers.CharField(required=False, allow_blank=True, default="")


class TriviaSourceFix(serializers.Serializer):
    question = serializers.CharField(required=False)
    candidates = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)
    answer = serializers.IntegerField(required=False)
    subset = serializers.CharField(required=False)
    category = serializers.CharField(required=False)
    difficulty = serializers.CharField(required=False)


class TriviaResolutionInput(serializers.Serializer):
    resolution = serializers.ChoiceField(choices=["fix", "accept", "drop"])
    source = TriviaSourceFix(required=False)
    target_question = serializers.CharField(required=False)
    target_candidates = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)


class TriviaImportInput(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=["auto", "csv", "jsonl"], default="auto")
    subset = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="local or global: the subset of every CSV row."
    )
    add_categories = serializers.BooleanField(default=True)


class TriviaImportOutput(serializers.Serializer):
    created = serializers.IntegerField()
    categories_added = serializers.ListField(child=serializers.CharField())


class BalanceRowOutput(serializers.Serializer):
    category = serializers.CharField()
    cells = serializers.DictField(child=serializers.DictField(child=serializers.IntegerField()))
    total = serializers.IntegerField()


class TriviaBalanceOutput(serializers.Serializer):
    subsets = serializers.ListField(child=serializers.CharField())
    difficulties = serializers.ListField(child=serializers.CharField())
    rows = BalanceRowOutput(many=True)
    total = serializers.IntegerField()
    minimum = serializers.IntegerField()
