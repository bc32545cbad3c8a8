"""Input and output shapes of the validation API."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.api_imports import ImportJobOutput
from annotation.languages import language_choices
from annotation.models import ImportJob
from validation.importers import ITEM_FORMATS
from validation.models import (
    QUESTION_BAD_REASONS,
    DomainLabel,
    LeaveOut,
    SeedQuery,
    SourceDomain,
    Suggestion,
    SuggestionUse,
    Task,
    ValidationItem,
)
from validation.services.domains import source_domain_history

LABEL_HELP = "The source domain's reliability: " + ", ".join(DomainLabel.values) + "."


class ValidationProjectCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=60, required=False)
    language = serializers.ChoiceField(choices=language_choices())
    location = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    validators_per_item = serializers.IntegerField(min_value=1, max_value=10, default=1)


class ValidationCriterionSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=40)
    label = serializers.CharField(max_length=100)  # type: ignore[assignment]  # the JSON key, not Field.label
    rubric = serializers.CharField(max_length=2000, allow_blank=True, required=False, default="")


class ValidationSettingsOutput(serializers.Serializer):
    project = serializers.CharField(source="project.slug")
    kind = serializers.CharField(source="project.kind")
    language = serializers.CharField(source="project.standard_language")
    validators_per_item = serializers.IntegerField(source="project.reviewers_per_item")
    location = serializers.CharField()
    tasks = serializers.ListField(child=serializers.ChoiceField(choices=Task.choices))
    likert_criteria = ValidationCriterionSerializer(many=True)
    duplicate_threshold = serializers.IntegerField()
    release_leave_out = serializers.ListField(
        child=serializers.ChoiceField(choices=LeaveOut.choices),
        help_text="Which validated items releases leave out (the dataset card counts them by reason).",
    )
    version = serializers.IntegerField()


class ValidationSettingsUpdateInput(serializers.Serializer):
    version = serializers.IntegerField(required=False)
    tasks = serializers.ListField(child=serializers.CharField(), required=False)
    location = serializers.CharField(max_length=200, required=False, allow_blank=True)
    likert_criteria = serializers.ListField(child=serializers.DictField(), required=False)
    duplicate_threshold = serializers.IntegerField(required=False)
    release_leave_out = serializers.ListField(child=serializers.CharField(), required=False)
    validators_per_item = serializers.IntegerField(min_value=1, max_value=10, required=False)


class ValidationItemImportInput(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=ITEM_FORMATS, default="auto")
    dry_run = serializers.BooleanField(default=False)


class ValidationImportJobOutput(ImportJobOutput):
    """An import job (annotation.ImportJob) with the address to poll for its progress and report."""

    url = serializers.SerializerMethodField()

    class Meta(ImportJobOutput.Meta):
        fields = [*ImportJobOutput.Meta.fields, "url"]

    def get_url(self, job: ImportJob) -> str:
        return reverse("api_import", args=[job.project.slug, job.pk])


class ValidationReportOutput(serializers.Serializer):
    """annotation.importers.report.ImportReport.as_dict(): problems name file, line and field."""

    ok = serializers.BooleanField()
    dry_run = serializers.BooleanField()
    lines = serializers.IntegerField()
    created = serializers.IntegerField()
    already_present = serializers.IntegerField()
    counts = serializers.DictField(child=serializers.DictField(child=serializers.IntegerField()))
    problems = serializers.ListField(child=serializers.DictField())
    problems_total = serializers.IntegerField()


class ValidationSeedQueryOutput(serializers.ModelSerializer):
    class Meta:
        model = SeedQuery
        fields = ["id", "topic", "query", "location", "template"]


class ValidationSeedCreateInput(serializers.Serializer):
    topic = serializers.CharField(max_length=100)
    query = serializers.CharField(max_length=5000)
    location = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)


class ValidationSeedImportInput(serializers.Serializer):
    file = serializers.FileField(help_text="`topic,query` CSV; queries may hold [LOCATION].")
    locations = serializers.ListField(child=serializers.CharField(max_length=200), allow_empty=False)


class ValidationSeedReportOutput(serializers.Serializer):
    added = serializers.IntegerField()
    exact_duplicates = serializers.IntegerField()
    near_duplicates = serializers.IntegerField()
    removed = serializers.ListField(child=serializers.DictField())


class ValidationSeedImportOutput(serializers.Serializer):
    report = ValidationReportOutput()
    seeds = ValidationSeedReportOutput(allow_null=True)


class ValidationDomainOutput(serializers.ModelSerializer):
    labelled_by = serializers.CharField(source="labelled_by.username", default=None, allow_null=True)

    class Meta:
        model = SourceDomain
        fields = ["domain", "label", "origin", "labelled_by", "labelled_at"]


class ValidationDomainLabelInput(serializers.Serializer):
    domain = serializers.CharField(max_length=1000)
    label = serializers.ChoiceField(choices=DomainLabel.choices)  # type: ignore[assignment]  # the JSON key, not Field.label


class ValidationDomainRelabelInput(serializers.Serializer):
    label = serializers.ChoiceField(choices=DomainLabel.choices)  # type: ignore[assignment]  # the JSON key, not Field.label
    note = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)


class ValidationDomainChangeOutput(serializers.Serializer):
    label = serializers.CharField()  # type: ignore[assignment]  # the JSON key, not Field.label
    before = serializers.CharField(allow_null=True, help_text="The label before (none: the first labelling).")
    by = serializers.CharField(allow_null=True)
    at = serializers.DateTimeField()
    note = serializers.CharField(allow_blank=True)


class ValidationDomainDetailOutput(ValidationDomainOutput):
    history = serializers.SerializerMethodField()

    class Meta(ValidationDomainOutput.Meta):
        fields = [*ValidationDomainOutput.Meta.fields, "history"]

    @extend_schema_field(ValidationDomainChangeOutput(many=True))
    def get_history(self, domain: SourceDomain) -> list[dict[str, Any]]:
        return source_domain_history([domain])[domain.pk]


class ValidationDomainImportInput(serializers.Serializer):
    file = serializers.FileField(help_text="`base_url,label` CSV such as annotated_domains.csv.")


class ValidationItemOutput(serializers.ModelSerializer):
    item = serializers.IntegerField(source="item_id")
    question = serializers.CharField(source="item.question")
    answer = serializers.CharField(source="item.answer_standard")
    status = serializers.CharField(source="item.status")
    domain_label = serializers.SerializerMethodField()

    class Meta:
        model = ValidationItem
        fields = [
            "item",
            "data_id",
            "question",
            "answer",
            "original_answer",
            "alternative_answer",
            "source_urls",
            "domain",
            "domain_label",
            "topic",
            "input_query",
            "question_type",
            "location",
            "language",
            "duplicate_of",
            "metadata",
            "status",
        ]

    @extend_schema_field(serializers.CharField(allow_null=True, help_text=LABEL_HELP))
    def get_domain_label(self, vitem: ValidationItem) -> str | None:
        return getattr(vitem, "domain_label", None)


class ValidationFinalAnswerOutput(serializers.Serializer):
    revision = serializers.IntegerField(allow_null=True, help_text="The revision whose answer is final.")
    answer = serializers.CharField(allow_null=True)
    chosen = serializers.BooleanField(help_text="False: no coordinator chose; the latest revision is final.")
    chosen_by = serializers.CharField(allow_null=True)
    chosen_at = serializers.DateTimeField(allow_null=True)
    note = serializers.CharField(allow_blank=True)


class ValidationFinalAnswerInput(serializers.Serializer):
    revision = serializers.IntegerField(min_value=1, help_text="1 is the imported answer; later ones are edits.")
    note = serializers.CharField(max_length=2000, required=False, default="", allow_blank=True)


class ValidationItemDetailOutput(ValidationItemOutput):
    final_answer = serializers.SerializerMethodField()
    revisions = serializers.SerializerMethodField()
    judgments = serializers.SerializerMethodField()
    aggregate = serializers.SerializerMethodField()

    class Meta(ValidationItemOutput.Meta):
        fields = [*ValidationItemOutput.Meta.fields, "final_answer", "revisions", "judgments", "aggregate"]

    @extend_schema_field(ValidationFinalAnswerOutput)
    def get_final_answer(self, vitem: ValidationItem) -> dict[str, Any]:
        return self.context["final_answer"]

    @extend_schema_field(serializers.ListField(child=serializers.DictField()))
    def get_revisions(self, vitem: ValidationItem) -> list[dict[str, Any]]:
        return self.context["revisions"]

    @extend_schema_field(serializers.ListField(child=serializers.DictField()))
    def get_judgments(self, vitem: ValidationItem) -> list[dict[str, Any]]:
        return self.context["judgments"]

    @extend_schema_field(serializers.DictField())
    def get_aggregate(self, vitem: ValidationItem) -> dict[str, Any]:
        return self.context["aggregate"]


class ValidationMergeInput(serializers.Serializer):
    keep = serializers.IntegerField(help_text="Item id of the QA pair kept.")
    duplicate = serializers.IntegerField(help_text="Item id of the duplicate merged into it.")


class ValidationLocationSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    forms = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=200),
        required=False,
        default=dict,
        help_text="Forms templates need: adjective, demonym; for Arabic bare (without the article) and nisba (the "
        "stem -ي/-ية/-يين attach to). Arabic ones left out are derived from the name.",
    )
    language = serializers.CharField(
        max_length=16,
        required=False,
        allow_blank=True,
        help_text="The language its seed queries are drafted in (a code such as arb; empty: the project's). "
        "Left out: unchanged.",
    )


class ValidationNextInput(serializers.Serializer):
    skip = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="Item ids you skipped: not handed to you now."
    )


class ValidationMergeAllInput(serializers.Serializer):
    which = serializers.ChoiceField(
        choices=["all", "exact"], default="all", help_text="`exact`: only duplicates with the same normalised question."
    )
    keep = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="Only the sets kept by these item ids."
    )


class ValidationMergeAllOutput(serializers.Serializer):
    merged = serializers.IntegerField(help_text="Duplicates merged.")
    sets = serializers.IntegerField(help_text="Sets they were merged in.")
    left = serializers.IntegerField(help_text="Duplicates still listed.")


class ValidationDuplicateGroupOutput(serializers.Serializer):
    keep = ValidationItemOutput()
    duplicates = ValidationItemOutput(many=True)


class SuggestionOutput(serializers.Serializer):
    """A model's suggestion: never a verdict, only what a validator may take."""

    id = serializers.IntegerField()
    question = serializers.SerializerMethodField(help_text='"good", "bad" or null (not suggested).')
    question_reason = serializers.CharField()
    answer = serializers.CharField(help_text="The model-edited answer; empty when it suggests no edit.")
    location_relevant = serializers.BooleanField(allow_null=True)
    model = serializers.CharField(source="job.model")

    def get_question(self, suggestion: Suggestion) -> str | None:
        return None if suggestion.question_good is None else ("good" if suggestion.question_good else "bad")


class ValidationTaskOutput(serializers.Serializer):
    """One validation task: what the validator sees (blind: the imported question and answer)."""

    slot = serializers.IntegerField()
    version = serializers.IntegerField()
    status = serializers.CharField()
    item = serializers.IntegerField()
    question = serializers.CharField()
    answer = serializers.CharField()
    source_urls = serializers.ListField(child=serializers.CharField())
    domain = serializers.CharField()
    domain_label = serializers.CharField(allow_null=True)
    language = serializers.CharField()
    direction = serializers.CharField()
    location = serializers.CharField()
    tasks = serializers.ListField(child=serializers.CharField())
    question_bad_reasons = serializers.ListField(child=serializers.CharField())
    better_answers = serializers.ListField(
        child=serializers.CharField(), allow_null=True, help_text="Answer 1 and answer 2, in this validator's order."
    )
    likert_criteria = ValidationCriterionSerializer(many=True)
    suggestion = SuggestionOutput(
        allow_null=True, help_text="The model's latest suggestion for this item: take it, change it or ignore it."
    )


class ValidationJudgmentInput(serializers.Serializer):
    version = serializers.IntegerField()
    question = serializers.ChoiceField(choices=["good", "bad"], required=False)
    question_reason = serializers.ChoiceField(choices=[r for r, _ in QUESTION_BAD_REASONS], required=False)
    answer = serializers.CharField(required=False, max_length=5000, help_text="The edited answer; leave out to keep.")
    location_relevant = serializers.ChoiceField(choices=["yes", "no"], required=False)
    domain_label = serializers.CharField(required=False, help_text=LABEL_HELP)
    better = serializers.ChoiceField(choices=["1", "2", "neither"], required=False)
    better_comment = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    likert = serializers.DictField(child=serializers.IntegerField(min_value=1, max_value=5), required=False)
    suggestion = serializers.IntegerField(
        required=False, help_text="The id of the model's suggestion you were shown (the task's `suggestion.id`)."
    )
    suggestion_taken = serializers.ListField(
        child=serializers.ChoiceField(choices=SuggestionUse.Field.values),
        required=False,
        help_text="The suggested fields you took (then kept: accepted, or changed before saving); the others of "
        "the suggestion are recorded as answered without it.",
    )


class ValidationJudgmentOutput(serializers.Serializer):
    slot = serializers.IntegerField(source="slot_id")
    item = serializers.IntegerField(source="item_id")
    question_good = serializers.BooleanField(allow_null=True)
    question_reason = serializers.CharField()
    location_relevant = serializers.BooleanField(allow_null=True)
    edit_revision = serializers.IntegerField(source="edit_revision.number", default=None, allow_null=True)
    better_order = serializers.ListField(child=serializers.CharField())
    better_choice = serializers.CharField()
    better_position = serializers.IntegerField(allow_null=True)
    better_comment = serializers.CharField()
    likert = serializers.DictField(child=serializers.IntegerField())
    next_slot = serializers.IntegerField(allow_null=True, required=False)


class ValidationAgreementOutput(serializers.Serializer):
    judgments = serializers.IntegerField()
    categorical = serializers.ListField(child=serializers.DictField())
    likert = serializers.ListField(child=serializers.DictField())
    position_bias = serializers.DictField(allow_null=True)
    model = serializers.DictField(
        help_text="Model vs validators: `rows` (per suggested task, Cohen's kappa, Gwet's AC1 and the items they "
        "count, on every item and on those answered without the suggestion) and `uses` (accepted, changed, "
        "ignored per suggested field)."
    )
