"""Review rounds, judgments, item history, full-document verification, article labels.

Nothing here is overwritten: a rewrite adds a revision (annotation.QAItemRevision)
and a new review round, a relabel supersedes the earlier label row, every
verification is a new numbered row; every status change of an item is an
annotation.ItemEvent (recorded through annotation.lifecycle).
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models import Membership, PagePair, Project, QAItem, QAItemRevision


class ReviewerLanguages(models.Model):
    """The languages a reviewer reads. Without a row, a reviewer reads the project's standard language."""

    membership = models.OneToOneField(Membership, on_delete=models.CASCADE, related_name="reader_languages")
    languages = models.JSONField(default=list, blank=True, help_text="ISO 639-3 codes, e.g. ['cmn', 'yue'].")
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.membership}: {', '.join(self.languages) or 'none'}"


class SlotQuerySet(models.QuerySet["ReviewSlot"]):
    def available(self, now: datetime | None = None) -> SlotQuerySet:
        """Slots a reviewer may claim: open, or claimed but left unfinished past the claim time."""
        now = now or timezone.now()
        return self.filter(
            Q(status=ReviewSlot.Status.OPEN) | Q(status=ReviewSlot.Status.CLAIMED, claim_expires_at__lt=now)
        )


class ReviewSlot(models.Model):
    """One review wanted for one revision of an item. A project asks for `reviewers_per_item` slots a round."""

    class Status(models.TextChoices):
        OPEN = "open", "Waiting for a reviewer"
        CLAIMED = "claimed", "Being reviewed"
        DONE = "done", "Reviewed"
        CANCELLED = "cancelled", "Cancelled"

    # The item's project, kept on the slot so a project's queue is read from its own slots alone, whatever
    # other projects hold (review_route_items sets it; migration 0006 filled it in).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    item = models.ForeignKey(QAItem, on_delete=models.CASCADE, related_name="review_slots")
    revision = models.ForeignKey(QAItemRevision, on_delete=models.CASCADE, related_name="review_slots")
    number = models.PositiveSmallIntegerField(help_text="1 .. reviewers_per_item within the round.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="review_slots"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_expires_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    active_seconds = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)

    objects = SlotQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["revision", "number"], name="slot_unique_number"),
            # A reviewer fills at most one slot of a round: nobody reviews the same revision twice.
            models.UniqueConstraint(
                fields=["revision", "reviewer"], condition=Q(reviewer__isnull=False), name="slot_unique_reviewer"
            ),
        ]
        indexes = [
            models.Index(fields=["status", "id"], name="slot_queue_idx"),
            # A project's waiting slots in id order: the review queue's first read (`_claimable`), each waiting
            # condition on its own. Another project's open slots are not in the way, however many it has.
            models.Index(
                fields=["project", "status", "id"],
                condition=Q(status__in=["open", "claimed"]),
                name="slot_waiting_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"Item {self.item_id} r{self.revision_id} slot {self.number}: {self.status}"


class Judgment(models.Model):
    """One reviewer's verdict on one criterion for one revision (a row per criterion, for agreement figures)."""

    class Verdict(models.TextChoices):
        PASS = "pass", "Pass"
        FLAG = "flag", "Flag"

    # The item's project, kept on the judgment so a project's agreement figures and counts read its own judgments
    # alone, whatever other projects hold (review_judge sets it; migration 0008 filled it in).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    slot = models.ForeignKey(ReviewSlot, on_delete=models.CASCADE, related_name="judgments")
    item = models.ForeignKey(QAItem, on_delete=models.CASCADE, related_name="judgments")
    revision = models.ForeignKey(QAItemRevision, on_delete=models.CASCADE, related_name="judgments")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    criterion = models.CharField(max_length=40)
    verdict = models.CharField(max_length=8, choices=Verdict.choices)
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["revision_id", "slot_id", "id"]
        constraints = [models.UniqueConstraint(fields=["slot", "criterion"], name="judgment_unique_criterion")]
        # A project's judgments in id order: the agreement gatherer, its watermark and "judgments since".
        indexes = [models.Index(fields=["project", "id"], name="judgment_project_idx")]

    def __str__(self) -> str:
        return f"{self.criterion}: {self.verdict}"


class Verification(models.Model):
    """Whether a lead item's answer is on the standard page's full text. Numbered; the latest counts."""

    class Result(models.TextChoices):
        FOUND = "found", "Found on the standard page"
        NOT_FOUND = "not_found", "Not found on the standard page"
        NOT_POSSIBLE = "not_possible", "Not possible: no standard full text"

    item = models.ForeignKey(QAItem, on_delete=models.CASCADE, related_name="verifications")
    number = models.PositiveIntegerField()
    result = models.CharField(max_length=16, choices=Result.choices)
    sentences = models.JSONField(default=list, blank=True)  # [{start, end, text}] into pair.standard_text
    query = models.TextField(blank=True)  # the search the verifier ran
    # The item's standard-language answer this verification checked; null for one recorded before it was kept.
    answer = models.TextField(null=True, blank=True)
    note = models.TextField(blank=True)
    verifier = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["item_id", "number"]
        constraints = [models.UniqueConstraint(fields=["item", "number"], name="verification_unique_number")]

    def __str__(self) -> str:
        return f"Item {self.item_id} verification {self.number}: {self.result}"

    def is_current_for(self, item: QAItem) -> bool:
        """Whether this verification still speaks for the item's answer: it checked that very text.

        "Not possible" is about the pair (no standard full text), whatever the answer; a verification recorded
        before the checked text was kept (`answer` null) cannot be told apart and counts as current.
        """
        return self.result == self.Result.NOT_POSSIBLE or self.answer is None or self.answer == item.answer_standard


class LabelKind(models.TextChoices):
    TOPIC = "topic", "Topic"
    REGION = "region", "Region relevance"


class LabelQuerySet(models.QuerySet["ArticleLabel"]):
    def current(self) -> LabelQuerySet:
        return self.filter(superseded_at__isnull=True)


class ArticleLabel(models.Model):
    """One labeller's label of one kind for one pair: the raw labels agreement is computed from.

    A relabel marks the earlier row superseded and adds a new one; `current()` rows
    are one per (pair, labeller, kind).
    """

    # The pair's project, kept on the label as on a judgment (label_set sets it; migration 0008 filled it in).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    pair = models.ForeignKey(PagePair, on_delete=models.CASCADE, related_name="labels")
    labeller = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="article_labels")
    kind = models.CharField(max_length=8, choices=LabelKind.choices)
    value = models.CharField(max_length=64)
    detail = models.CharField(max_length=200, blank=True, help_text="A finer region, e.g. Bavaria or Hong Kong.")
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    superseded_at = models.DateTimeField(null=True, blank=True)

    objects = LabelQuerySet.as_manager()

    class Meta:
        ordering = ["pair_id", "kind", "labeller_id", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["pair", "labeller", "kind"],
                condition=Q(superseded_at__isnull=True),
                name="label_one_current_per_labeller",
            ),
        ]
        # A project's labels by time: the agreement gatherer and "labels made since the latest report".
        indexes = [models.Index(fields=["project", "created_at"], name="label_project_idx")]

    def __str__(self) -> str:
        return f"{self.pair_id} {self.kind}={self.value} by {self.labeller_id}"


class FinalLabel(models.Model):
    """The label a pair is published with: agreed by all labellers, or set by an adjudicator."""

    class Method(models.TextChoices):
        AGREEMENT = "agreement", "All labellers agreed"
        ADJUDICATED = "adjudicated", "Adjudicated"

    # The pair's project, kept on the final label as on a label (set where final labels are made; migration 0008).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    pair = models.ForeignKey(PagePair, on_delete=models.CASCADE, related_name="final_labels")
    kind = models.CharField(max_length=8, choices=LabelKind.choices)
    value = models.CharField(max_length=64)
    detail = models.CharField(max_length=200, blank=True)
    method = models.CharField(max_length=16, choices=Method.choices)
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["pair_id", "kind"]
        constraints = [models.UniqueConstraint(fields=["pair", "kind"], name="final_label_unique_kind")]

    def __str__(self) -> str:
        return f"{self.pair_id} {self.kind}={self.value}"


# Agreement reports (issue 5) live in their own module.
from review.models_reports import AgreementReport  # noqa: E402, F401
