"""API shapes of the annotation app: input serializers only type the request, output serializers only render.

The rules (which values are allowed, what a span must match) live in
`annotation.services`; an input serializer checks types and nothing more, so
that every client meets the same rule with the same message.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from annotation.languages import validate_wiki_code
from annotation.models import EvidenceSpan, Membership, PagePair, Project, QAItem, Role
from common.api import ErrorOutput, named_enum

# Text is kept exactly as typed: leading spaces can be part of a span, and drafts may be blank.
_TEXT: dict[str, Any] = {"required": False, "allow_blank": True, "trim_whitespace": False}


ProjectKindField = named_enum(Project.Kind, "ProjectKindEnum")
PairStatusField = named_enum(PagePair.Status, "PairStatusEnum")
ItemKindField = named_enum(QAItem.Kind, "ItemKindEnum")
ItemStatusField = named_enum(QAItem.Status, "ItemStatusEnum")


# Errors


# Projects and members


class ProjectOutput(serializers.ModelSerializer):
    kind = ProjectKindField(read_only=True)

    class Meta:
        model = Project
        fields = [
            "slug",
            "name",
            "kind",
            "local_language",
            "local_wiki",
            "standard_language",
            "standard_wiki",
            "standard_variant",
            "guidelines",
            "guidelines_version",
            "lead_qa_min",
            "lead_qa_max",
            "collect_document_qa",
            "verification_required",
            "reviewers_per_item",
            "claim_minutes",
            "region_vocabulary",
            "releases_public",
            "version",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class ProjectDetailOutput(ProjectOutput):
    roles = serializers.SerializerMethodField(help_text="Your roles in this project.")

    class Meta(ProjectOutput.Meta):
        fields = [*ProjectOutput.Meta.fields, "roles"]
        read_only_fields = fields

    def get_roles(self, project: Project) -> list[str]:
        membership: Membership | None = self.context.get("membership")
        return membership.roles if membership is not None else []


class ProjectSettingsInput(serializers.Serializer):
    name = serializers.CharField(required=False, max_length=200)
    guidelines = serializers.CharField(**_TEXT)
    lead_qa_min = serializers.IntegerField(required=False, min_value=1, max_value=20)
    lead_qa_max = serializers.IntegerField(required=False, min_value=1, max_value=20)
    collect_document_qa = serializers.BooleanField(required=False)
    verification_required = serializers.BooleanField(required=False)
    reviewers_per_item = serializers.IntegerField(required=False, min_value=1, max_value=10)
    claim_minutes = serializers.IntegerField(required=False, min_value=1, max_value=24 * 60)
    standard_variant = serializers.CharField(required=False, allow_blank=True, max_length=16)
    local_wiki = serializers.CharField(required=False, max_length=32, validators=[validate_wiki_code])
    standard_wiki = serializers.CharField(required=False, max_length=32, validators=[validate_wiki_code])
    region_vocabulary = serializers.DictField(
        child=serializers.CharField(),
        required=False,
        help_text="Fine-grained region as a release writes it → one of the project's regions (local, standard, "
        'other), e.g. {"Hong Kong": "local"}. Replaces the whole table.',
    )
    releases_public = serializers.BooleanField(
        required=False, help_text="Anyone signed in may list, open and download the published releases."
    )


class ProjectCreateInput(ProjectSettingsInput):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(required=False, max_length=60, help_text="Derived from the name when left out.")
    local_language = serializers.CharField(max_length=8, help_text="ISO 639-3 code of the local variety, e.g. yue.")
    standard_language = serializers.CharField(max_length=8, help_text="ISO 639-3 code of the standard language.")


class ProjectUpdateInput(ProjectSettingsInput):
    version = serializers.IntegerField(
        required=False, help_text="The version you loaded; the save is refused (409) if the project changed since."
    )


class MembershipOutput(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    roles = serializers.ListField(child=serializers.ChoiceField(choices=Role.choices), read_only=True)
    name = serializers.CharField(source="user.get_full_name", read_only=True)
    active = serializers.BooleanField(source="is_active", read_only=True, help_text="False once deactivated.")
    account_active = serializers.BooleanField(source="user.is_active", read_only=True)

    class Meta:
        model = Membership
        fields = ["username", "name", "roles", "active", "account_active", "deactivated_at", "created_at"]
        read_only_fields = fields


class MembershipRolesInput(serializers.Serializer):
    roles = serializers.ListField(child=serializers.ChoiceField(choices=Role.choices), allow_empty=True)


class MembershipCreateInput(MembershipRolesInput):
    username = serializers.CharField(max_length=150)


# Page pairs and screening


class PairFilterInput(serializers.Serializer):
    status = PairStatusField(required=False)


class PairListOutput(serializers.ModelSerializer):
    """A pair without its texts, for lists."""

    assignee = serializers.CharField(source="assignee.username", default=None, read_only=True, allow_null=True)
    status = PairStatusField(read_only=True)
    item_count = serializers.IntegerField(read_only=True, help_text="Live QA items on the pair.")

    class Meta:
        model = PagePair
        fields = [
            "id",
            "local_title",
            "standard_title",
            "local_url",
            "standard_url",
            "local_lead_length",
            "standard_lead_length",
            "local_text_length",
            "standard_text_length",
            "source",
            "status",
            "screening_decision",
            "assignee",
            "claimed_at",
            "claim_expires_at",
            "submitted_at",
            "active_seconds",
            "version",
            "item_count",
        ]
        read_only_fields = fields


class SpanOutput(serializers.ModelSerializer):
    class Meta:
        model = EvidenceSpan
        fields = ["document", "start", "end", "text", "match"]
        read_only_fields = fields


class ItemOutput(serializers.ModelSerializer):
    pair = serializers.IntegerField(source="pair_id", read_only=True)
    kind = ItemKindField(read_only=True)
    status = ItemStatusField(read_only=True)
    author = serializers.CharField(source="author.username", default=None, read_only=True, allow_null=True)
    spans = SpanOutput(many=True, read_only=True)

    class Meta:
        model = QAItem
        fields = [
            "id",
            "pair",
            "kind",
            "status",
            "question",
            "answer_standard",
            "answer_local",
            "spans",
            "author",
            "version",
            "active_seconds",
            "created_at",
            "updated_at",
            "submitted_at",
        ]
        read_only_fields = fields


class PairDetailOutput(PairListOutput):
    """A pair with its texts and its live items."""

    items = ItemOutput(source="live_items", many=True, read_only=True)
    item_count = None  # type: ignore[assignment]

    class Meta(PairListOutput.Meta):
        fields = [
            *(name for name in PairListOutput.Meta.fields if name != "item_count"),
            "local_lead",
            "standard_lead",
            "local_text",
            "standard_text",
            "items",
        ]
        read_only_fields = fields


class ScreeningInput(serializers.Serializer):
    decision = serializers.CharField(
        max_length=16, help_text="annotate, translated, structural, or other (with a note saying why)."
    )
    note = serializers.CharField(required=False, allow_blank=True, default="")


class GiveBackInput(serializers.Serializer):
    reason = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="Why the pair is skipped (optional, recorded)."
    )


class GiveBackOutput(serializers.Serializer):
    pair = serializers.IntegerField(source="pair_id")
    status_before = serializers.CharField(help_text="The pair's status when it was given back: claimed or annotating.")
    reason = serializers.CharField()
    created_at = serializers.DateTimeField()


class SkipUndoOutput(serializers.Serializer):
    pair = serializers.IntegerField()
    yours = serializers.BooleanField(help_text="True: the pair is yours again now; false: someone else holds it.")


class ActivityInput(serializers.Serializer):
    seconds = serializers.IntegerField(help_text="Active seconds since the last report (at most 300 count).")
    item = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="The item being edited, if any."
    )


# QA items


class SpanInput(serializers.Serializer):
    start = serializers.IntegerField(help_text="Code-point offset (Python str index) where the span begins.")
    end = serializers.IntegerField(help_text="Code-point offset just past the span.")
    text = serializers.CharField(trim_whitespace=False, help_text="Must equal the document text at start:end.")


class ItemContentInput(serializers.Serializer):
    question = serializers.CharField(**_TEXT, help_text="In the standard language.")
    answer_standard = serializers.CharField(**_TEXT)
    answer_local = serializers.CharField(**_TEXT)
    spans = SpanInput(
        many=True, required=False, help_text="Replaces all evidence spans; offsets into the local lead (or text)."
    )


class ItemCreateInput(ItemContentInput):
    kind = ItemKindField(default=QAItem.Kind.LEAD)


class ItemUpdateInput(ItemContentInput):
    version = serializers.IntegerField(
        help_text="Required: the version you loaded; if the item changed since, nothing is saved (409, with `current`)."
    )


class WarningOutput(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()


class TokenOutput(serializers.Serializer):
    token = serializers.CharField()


class StaleItemOutput(ErrorOutput):
    current = ItemOutput(
        required=False, help_text="The newer item, when the 409 is a stale edit (not a state refusal)."
    )


class StaleProjectOutput(ErrorOutput):
    current = ProjectDetailOutput(read_only=True, help_text="The project settings as currently saved.")


class NextStepFactOutput(serializers.Serializer):
    count = serializers.IntegerField()
    # DRF's metaclass takes declared fields off the class; the stubs see this as Field.label, a str.
    label = serializers.CharField()  # type: ignore[assignment]


class NextStepRewriteOutput(serializers.Serializer):
    url = serializers.CharField(help_text="The page where the author rewrites the item.")
    question = serializers.CharField(allow_blank=True)
    lang = serializers.CharField(help_text="ISO 639-3 code of the question's language.")
    reasons = serializers.ListField(child=serializers.CharField(), help_text="Criterion: the reviewer's comment.")


class NextStepOutput(serializers.Serializer):
    key = serializers.CharField(help_text="Stable name of the step, e.g. next-pair, review-next, validation-next.")
    role = serializers.CharField()
    title = serializers.CharField()
    url = serializers.CharField(help_text="The page to open, or the queue to POST to when `post` is true.")
    post = serializers.BooleanField()
    facts = NextStepFactOutput(many=True)
    rewrites = NextStepRewriteOutput(many=True)
