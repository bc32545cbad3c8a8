"""API shapes of the review app: input serializers type the request, output serializers render.

The rules live in the review services (review/<concern>.py); inputs check types only.
"""

from __future__ import annotations

from typing import Any, TypedDict

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import ItemEvent
from annotation.serializers import ItemKindField, ItemOutput, ItemStatusField
from common.api import ErrorOutput, named_enum
from review.models import ArticleLabel, FinalLabel, Judgment, LabelKind, ReviewSlot, Verification

SlotStatusField = named_enum(ReviewSlot.Status, "ReviewSlotStatusEnum")
VerdictField = named_enum(Judgment.Verdict, "VerdictEnum")
VerificationResultField = named_enum(Verification.Result, "VerificationResultEnum")
LabelKindField = named_enum(LabelKind, "LabelKindEnum")
FinalMethodField = named_enum(FinalLabel.Method, "FinalLabelMethodEnum")
EventActionField = named_enum(ItemEvent.Action, "ItemEventActionEnum")


class _TextOptions(TypedDict):
    required: bool
    allow_blank: bool
    trim_whitespace: bool


_TEXT: _TextOptions = {"required": False, "allow_blank": True, "trim_whitespace": False}


def _hidden_name(serializer: serializers.Serializer, user: User | None) -> str | None:
    """Reviewer names are left out (null) when the context says the reader may not see them (blind review)."""
    if user is None or not serializer.context.get("show_names", True):
        return None
    return user.username


# Review items, slots, judgments


class ReviewItemOutput(serializers.Serializer):
    id = serializers.IntegerField()
    pair = serializers.IntegerField(source="pair_id")
    pair_title = serializers.CharField(source="pair.local_title")
    kind = ItemKindField()
    status = ItemStatusField()
    question = serializers.CharField()
    author = serializers.CharField(source="author.username", default=None, allow_null=True)
    version = serializers.IntegerField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    rounds = serializers.IntegerField(help_text="Revisions sent to review so far.")
    open_slots = serializers.IntegerField(help_text="Review slots of the current round still waiting for a reviewer.")


class ReviewFilterInput(serializers.Serializer):
    status = ItemStatusField(required=False)
    kind = ItemKindField(required=False)
    text = serializers.CharField(
        required=False, allow_blank=True, max_length=200, help_text="In the question or either answer"
    )
    author = serializers.CharField(
        required=False, allow_blank=True, max_length=150, help_text="The item's author's username"
    )
    topic = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="The pair's final topic label (agreed or adjudicated), one of the project's topics",
    )


class CriterionOutput(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # the JSON key, not Field.label
    help = serializers.CharField(required=False, allow_blank=True)


class JudgmentOutput(serializers.Serializer):
    criterion = serializers.CharField()
    verdict = VerdictField()
    comment = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class FlagOutput(serializers.Serializer):
    criterion = serializers.CharField(help_text="The criterion key, e.g. appropriateness.")
    criterion_label = serializers.SerializerMethodField()
    reason = serializers.CharField(source="comment", allow_blank=True, help_text="What the reviewer said is wrong.")

    def get_criterion_label(self, judgment: Any) -> str:
        for criterion in self.context["project"].review_criteria:
            if criterion.get("key") == judgment.criterion:
                return str(criterion.get("label") or judgment.criterion)
        return str(judgment.criterion)


class AuthorItemOutput(serializers.Serializer):
    id = serializers.IntegerField()
    pair = serializers.IntegerField(source="pair_id")
    pair_title = serializers.CharField(source="pair.local_title")
    kind = ItemKindField()
    status = ItemStatusField()
    question = serializers.CharField()
    version = serializers.IntegerField()
    updated_at = serializers.DateTimeField()
    flags = FlagOutput(many=True, help_text="Sent back for a rewrite: each flagged criterion and its reason.")


class SlotOutput(serializers.Serializer):
    id = serializers.IntegerField()
    item = ItemOutput()
    revision = serializers.IntegerField(source="revision.number", help_text="The revision being reviewed.")
    number = serializers.IntegerField(help_text="Slot number within the round.")
    status = SlotStatusField()
    reviewer = serializers.CharField(source="reviewer.username", default=None, allow_null=True)
    claimed_at = serializers.DateTimeField(allow_null=True)
    claim_expires_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)
    version = serializers.IntegerField()
    criteria = CriterionOutput(source="item.project.review_criteria", many=True)
    judgments = JudgmentOutput(many=True)
    local_lead = serializers.CharField(source="item.pair.local_lead")
    standard_lead = serializers.CharField(source="item.pair.standard_lead")


class VerdictInput(serializers.Serializer):
    verdict = serializers.CharField(help_text="pass or flag")
    comment = serializers.CharField(**_TEXT)


class ReviewSubmitInput(serializers.Serializer):
    version = serializers.IntegerField(help_text="The slot version you loaded (409 if it changed).")
    judgments = serializers.DictField(
        child=VerdictInput(), help_text="Every criterion key of the project mapped to {verdict, comment}."
    )


class StaleSlotOutput(ErrorOutput):
    current = SlotOutput(read_only=True)


# Outcomes


class VersionInput(serializers.Serializer):
    version = serializers.IntegerField(help_text="The item version you loaded (409 if it changed).")


class RejectInput(VersionInput):
    reason = serializers.CharField(trim_whitespace=False, allow_blank=True)


class ReviewerRewriteInput(VersionInput):
    question = serializers.CharField(**_TEXT)
    answer_standard = serializers.CharField(**_TEXT)
    answer_local = serializers.CharField(**_TEXT)


# History


class DiffOpOutput(serializers.Serializer):
    op = serializers.ChoiceField(choices=["equal", "insert", "delete"])
    text = serializers.CharField()


class FieldDiffOutput(serializers.Serializer):
    field = serializers.CharField()
    changed = serializers.BooleanField()
    ops = serializers.SerializerMethodField()

    @extend_schema_field(DiffOpOutput(many=True))
    def get_ops(self, diff: Any) -> list[dict[str, str]]:
        return [{"op": op, "text": text} for op, text in diff.ops]


class ReviewOutput(serializers.Serializer):
    reviewer = serializers.SerializerMethodField(help_text="Null when the project hides reviewers from you.")
    at = serializers.DateTimeField(allow_null=True)
    flagged = serializers.BooleanField()
    judgments = JudgmentOutput(many=True)

    def get_reviewer(self, review: dict[str, Any]) -> str | None:
        return _hidden_name(self, review["reviewer"])


class RevisionOutput(serializers.Serializer):
    number = serializers.IntegerField(source="revision.number")
    reason = serializers.CharField(source="revision.reason")
    author = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField(source="revision.created_at")
    question = serializers.CharField(source="revision.question")
    answer_standard = serializers.CharField(source="revision.answer_standard")
    answer_local = serializers.CharField(source="revision.answer_local")
    spans = serializers.ListField(source="revision.spans", child=serializers.DictField())
    diffs = FieldDiffOutput(many=True, help_text="Against the revision before (the first against nothing).")
    reviews = ReviewOutput(many=True, help_text="The reviews of this revision: what led to the next one.")

    def get_author(self, entry: Any) -> str | None:
        author = entry.revision.author
        if author is not None and author.pk == self.context.get("item_author_id"):
            return author.username
        return _hidden_name(self, author)


class EventOutput(serializers.Serializer):
    action = EventActionField()
    from_status = serializers.CharField(allow_blank=True)
    to_status = serializers.CharField(allow_blank=True)
    revision_number = serializers.IntegerField(allow_null=True)
    note = serializers.CharField(allow_blank=True)
    actor = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_actor(self, event: ItemEvent) -> str | None:
        if event.actor is not None and event.actor_id == self.context.get("item_author_id"):
            return event.actor.username
        if event.action == ItemEvent.Action.REJECTED and event.actor is not None:
            return event.actor.username
        return _hidden_name(self, event.actor)


class HistoryOutput(serializers.Serializer):
    item = ItemOutput()
    revisions = RevisionOutput(many=True)
    events = EventOutput(many=True)


# Verification


class SentenceInput(serializers.Serializer):
    start = serializers.IntegerField(help_text="Code-point offset into the standard full text.")
    end = serializers.IntegerField()
    text = serializers.CharField(trim_whitespace=False, help_text="Must equal the standard full text at start:end.")


class VerificationInput(serializers.Serializer):
    result = VerificationResultField()
    sentences = SentenceInput(many=True, required=False, default=list)
    query = serializers.CharField(**_TEXT, default="")
    note = serializers.CharField(**_TEXT, default="")
    version = serializers.IntegerField(help_text="The number of the latest verification you saw; 0 for none.")
    answer = serializers.CharField(
        **_TEXT,
        help_text="The standard-language answer you checked; refused when the item's saved answer is another.",
    )


class VerificationOutput(serializers.ModelSerializer):
    result = VerificationResultField(read_only=True)
    verifier = serializers.CharField(source="verifier.username", default=None, allow_null=True, read_only=True)

    class Meta:
        model = Verification
        fields = ["number", "result", "sentences", "query", "answer", "note", "verifier", "created_at"]
        read_only_fields = fields


class SentenceMatchOutput(serializers.Serializer):
    start = serializers.IntegerField(source="sentence.start")
    end = serializers.IntegerField(source="sentence.end")
    text = serializers.CharField(source="sentence.text")
    match = serializers.CharField(allow_blank=True, help_text="exact, close, or empty")


class VerificationStateOutput(serializers.Serializer):
    possible = serializers.BooleanField(help_text="False when the pair has no standard full text.")
    reason = serializers.CharField(allow_blank=True)
    current = VerificationOutput(allow_null=True)
    history = VerificationOutput(many=True)
    query = serializers.CharField(allow_blank=True)
    sentences = SentenceMatchOutput(
        many=True, help_text="Sentences of the standard full text matching `q` (exactly or closely)."
    )


class VerificationSearchInput(serializers.Serializer):
    q = serializers.CharField(required=False, allow_blank=True, help_text="Defaults to the standard answer.")


class StaleVerificationOutput(ErrorOutput):
    current = VerificationOutput(read_only=True, allow_null=True)


# Labels


class LabelOutput(serializers.ModelSerializer):
    kind = LabelKindField(read_only=True)
    labeller = serializers.CharField(source="labeller.username", read_only=True)

    class Meta:
        model = ArticleLabel
        fields = ["kind", "value", "detail", "labeller", "version", "created_at"]
        read_only_fields = fields


class FinalLabelOutput(serializers.ModelSerializer):
    kind = LabelKindField(read_only=True)
    method = FinalMethodField(read_only=True)
    adjudicator = serializers.CharField(source="adjudicator.username", default=None, allow_null=True, read_only=True)

    class Meta:
        model = FinalLabel
        fields = ["kind", "value", "detail", "method", "adjudicator", "version", "updated_at"]
        read_only_fields = fields


class PairLabelsOutput(serializers.Serializer):
    pair = serializers.IntegerField()
    needed = serializers.IntegerField(help_text="Labellers the project asks for.")
    done = serializers.IntegerField(help_text="Labellers who gave both a topic and a region.")
    complete = serializers.BooleanField()
    labels = LabelOutput(many=True, help_text="Yours only, until the pair is complete; then everyone's.")
    finals = FinalLabelOutput(many=True)


class LabelInput(serializers.Serializer):
    kind = LabelKindField()
    value = serializers.CharField(max_length=64)
    detail = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    version = serializers.IntegerField(default=0, help_text="Version of your label of this kind you saw; 0 for none.")


class StaleLabelOutput(ErrorOutput):
    current = LabelOutput(read_only=True, allow_null=True)


class StaleFinalLabelOutput(ErrorOutput):
    current = FinalLabelOutput(read_only=True, allow_null=True)


class AdjudicationRowOutput(serializers.Serializer):
    pair = serializers.IntegerField(source="pair_id")
    title = serializers.CharField()
    kind = LabelKindField()
    labels = LabelOutput(many=True)
    final = FinalLabelOutput(allow_null=True)


# Dashboard and reviewers


class PairCountsOutput(serializers.Serializer):
    collected = serializers.IntegerField()
    local_heavy = serializers.IntegerField()
    inspected = serializers.IntegerField()
    excluded = serializers.IntegerField()
    with_qas = serializers.IntegerField()


class ItemCountsOutput(serializers.Serializer):
    lead = serializers.IntegerField()
    document = serializers.IntegerField()
    submitted = serializers.IntegerField(help_text="In review.")
    needs_rewrite = serializers.IntegerField()
    accepted = serializers.IntegerField()
    rejected = serializers.IntegerField()


class PersonOutput(serializers.Serializer):
    username = serializers.CharField()
    items = serializers.IntegerField()
    week = serializers.IntegerField(help_text="Items submitted in the last 7 days.")
    pairs = serializers.IntegerField()
    median_item_seconds = serializers.FloatField(allow_null=True)
    median_pair_seconds = serializers.FloatField(allow_null=True)


class ReviewerWorkloadOutput(serializers.Serializer):
    username = serializers.CharField()
    claimed = serializers.IntegerField()
    done = serializers.IntegerField()
    week = serializers.IntegerField()
    median_review_seconds = serializers.FloatField(allow_null=True, help_text="From claim to judgment.")
    median_active_seconds = serializers.FloatField(allow_null=True, help_text="Measured on the review screen.")


class BarOutput(serializers.Serializer):
    value = serializers.CharField()
    count = serializers.IntegerField()
    percent = serializers.IntegerField()


class DashboardOutput(serializers.Serializer):
    pairs = PairCountsOutput()
    excluded_by_reason = serializers.DictField(child=serializers.IntegerField())
    items = ItemCountsOutput()
    median_item_seconds = serializers.FloatField(allow_null=True)
    people = PersonOutput(many=True)
    reviewers = ReviewerWorkloadOutput(many=True)
    slots_waiting = serializers.IntegerField()
    topics = BarOutput(many=True)
    regions = BarOutput(many=True)


class ReviewerOutput(serializers.Serializer):
    username = serializers.CharField()
    languages = serializers.ListField(child=serializers.CharField())
    explicit = serializers.BooleanField(help_text="False: the default (the project's standard language).")
    eligible = serializers.BooleanField(help_text="Gets items: reads the project's standard language.")
    version = serializers.IntegerField()


class LanguagesInput(serializers.Serializer):
    languages = serializers.ListField(child=serializers.CharField(max_length=8), allow_empty=True)
    version = serializers.IntegerField(required=False, allow_null=True, default=None)


class StaleLanguagesOutput(ErrorOutput):
    current = serializers.DictField(read_only=True, allow_null=True)


class ReviewSettingsOutput(serializers.Serializer):
    review_criteria = CriterionOutput(many=True)
    reviewer_may_rewrite = serializers.BooleanField()
    blind_review = serializers.BooleanField()
    flag_needs_reason = serializers.BooleanField(help_text="A flag must come with a reason (the comment).")
    topics = serializers.ListField(child=serializers.CharField())
    regions = serializers.ListField(child=serializers.CharField())
    labellers_per_pair = serializers.IntegerField()
    document_qa_minutes = serializers.IntegerField()
    version = serializers.IntegerField()


class CriterionInput(serializers.Serializer):
    key = serializers.CharField(max_length=40)
    label = serializers.CharField(max_length=200)  # type: ignore[assignment]  # the JSON key, not Field.label
    help = serializers.CharField(required=False, allow_blank=True, default="")


class ReviewSettingsInput(serializers.Serializer):
    review_criteria = CriterionInput(many=True, required=False)
    reviewer_may_rewrite = serializers.BooleanField(required=False)
    blind_review = serializers.BooleanField(required=False)
    flag_needs_reason = serializers.BooleanField(required=False)
    topics = serializers.ListField(child=serializers.CharField(max_length=64), required=False)
    regions = serializers.ListField(child=serializers.CharField(max_length=64), required=False)
    labellers_per_pair = serializers.IntegerField(required=False)
    document_qa_minutes = serializers.IntegerField(required=False)
    version = serializers.IntegerField(required=False, help_text="The version you loaded (409 if it changed).")


class StaleReviewSettingsOutput(ErrorOutput):
    current = ReviewSettingsOutput(read_only=True)


class DocumentQaOutput(serializers.Serializer):
    collects = serializers.BooleanField(help_text="Whether the project collects document-level QAs.")
    possible = serializers.BooleanField(help_text="False when the pair has no local full text.")
    minutes = serializers.IntegerField(help_text="The time box.")
    deadline = serializers.DateTimeField(allow_null=True, help_text="Start of the item plus the time box.")
    overdue = serializers.BooleanField()
    item = ItemOutput(allow_null=True)


class ReviewActivityInput(serializers.Serializer):
    seconds = serializers.IntegerField(help_text="Active seconds since the last report (at most 300 count).")
