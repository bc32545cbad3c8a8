"""Multiple-choice projects: local-vs-global trivia written in one language and translated into another.

A trivia project is an `annotation.Project` of kind `trivia` (members, roles and
the access rule are annotation's; the review criteria are the project's
`review_criteria`). Every item keeps its source-language content in numbered
`TriviaRevision`s (authoring, rewrite and a coordinator's correction each add
one), and one target-language version written by a translator taken from a
queue claimed the same way as the annotator's pair queue.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models import Project

KIND_TRIVIA = "trivia"

DEFAULT_TRIVIA_CRITERIA = [
    {"key": "one_correct", "label": "One correct answer only", "help": "Exactly one candidate is right."},
    {"key": "plausible", "label": "Distractors plausible", "help": "Every wrong candidate could fool someone."},
    {
        "key": "not_from_wording",
        "label": "Not answerable from the wording",
        "help": "The question's wording alone does not give the answer away.",
    },
    {"key": "not_outdated", "label": "Not outdated", "help": "The answer is still true today."},
]


def default_trivia_criteria() -> list[dict[str, str]]:
    return [dict(criterion) for criterion in DEFAULT_TRIVIA_CRITERIA]


class Subset(models.TextChoices):
    LOCAL = "local", "Local"
    GLOBAL = "global", "Global"


class Difficulty(models.TextChoices):
    EASY = "easy", "Easy"
    MEDIUM = "medium", "Medium"
    HARD = "hard", "Hard"


DIFFICULTY_NUMBERS = {Difficulty.EASY: 1, Difficulty.MEDIUM: 2, Difficulty.HARD: 3}


class ProblemTag(models.TextChoices):
    DIFFICULT = "difficult_translation", "Difficult translation"
    OUTDATED = "outdated", "Outdated information"
    MANY_CORRECT = "more_than_one_correct", "More than one correct answer"
    SOURCE_LANGUAGE = "needs_source_language", "Needs knowledge of the source language"


class TriviaSettings(models.Model):
    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="trivia_settings")
    categories = models.JSONField(default=list, blank=True)
    source_language = models.CharField(max_length=8)
    target_language = models.CharField(max_length=8)
    version = models.PositiveIntegerField(default=1)

    def __str__(self) -> str:
        return f"Trivia settings of {self.project}"


class TriviaItem(models.Model):
    class Status(models.TextChoices):
        SUBMITTED = "submitted", "In review"
        NEEDS_REWRITE = "needs_rewrite", "Needs rewrite"
        ACCEPTED = "accepted", "Accepted"
        DROPPED = "dropped", "Dropped"

    class Translation(models.TextChoices):
        WAITING = "waiting", "Not yet accepted"
        OPEN = "open", "Waiting for a translator"
        CLAIMED = "claimed", "Being translated"
        FLAGGED = "flagged", "Problem tagged, waiting for a coordinator"
        DONE = "done", "Translated"
        DROPPED = "dropped", "Dropped"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="trivia_items")
    external_id = models.CharField(max_length=100, blank=True)
    category = models.CharField(max_length=100)
    subset = models.CharField(max_length=8, choices=Subset.choices)
    difficulty = models.CharField(max_length=8, choices=Difficulty.choices)
    question = models.TextField()
    candidates = models.JSONField(default=list)
    answer = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SUBMITTED)
    revision = models.PositiveIntegerField(default=1)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")

    translation_status = models.CharField(max_length=16, choices=Translation.choices, default=Translation.WAITING)
    translator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_expires_at = models.DateTimeField(null=True, blank=True)
    target_question = models.TextField(blank=True)
    target_candidates = models.JSONField(default=list, blank=True)
    problem_tags = models.JSONField(default=list, blank=True)
    problem_note = models.TextField(blank=True)
    resolution = models.CharField(max_length=8, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["project", "translation_status", "id"], name="trivia_queue_idx")]
        constraints = [
            models.CheckConstraint(condition=Q(answer__gte=0), name="trivia_answer_not_negative"),
        ]

    def __str__(self) -> str:
        return self.question[:80]

    @property
    def difficulty_number(self) -> int:
        return DIFFICULTY_NUMBERS[Difficulty(self.difficulty)]

    @property
    def choices(self) -> list[tuple[int, str, bool]]:
        return [(index, text, index == self.answer) for index, text in enumerate(self.candidates)]

    @property
    def target_choices(self) -> list[tuple[int, str, bool]]:
        return [(index, text, index == self.answer) for index, text in enumerate(self.target_candidates)]


class TriviaRevision(models.Model):
    """The source-language content as it was at one point; none is ever changed."""

    class Reason(models.TextChoices):
        AUTHORED = "authored", "Written by the author"
        IMPORTED = "imported", "Imported"
        REWRITE = "rewrite", "Rewritten by the author after review"
        COORDINATOR_FIX = "coordinator_fix", "Corrected by a coordinator"

    item = models.ForeignKey(TriviaItem, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    question = models.TextField()
    candidates = models.JSONField(default=list)
    answer = models.PositiveSmallIntegerField()
    category = models.CharField(max_length=100)
    subset = models.CharField(max_length=8)
    difficulty = models.CharField(max_length=8)
    reason = models.CharField(max_length=16, choices=Reason.choices)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["item_id", "number"]
        constraints = [models.UniqueConstraint(fields=["item", "number"], name="trivia_revision_unique_number")]

    def __str__(self) -> str:
        return f"Trivia item {self.item_id} revision {self.number}"


class TriviaReview(models.Model):
    """A reviewer's verdict on one revision, with the project's criteria checked one by one."""

    item = models.ForeignKey(TriviaItem, on_delete=models.CASCADE, related_name="reviews")
    revision = models.PositiveIntegerField()
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    criteria = models.JSONField(default=dict)
    accepted = models.BooleanField()
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["item_id", "id"]

    def __str__(self) -> str:
        return f"Review of trivia item {self.item_id}"


# Entity questions with controlled context

KIND_ENTITY = "entity_qa"


class AttributeKind(models.TextChoices):
    YEAR = "year", "Year (four digits)"
    CITY = "city", "City (City, Country)"
    LIST = "list", "List (sorted, joined by '; ')"
    TEXT = "text", "Text"


class EntitySettings(models.Model):
    """The attributes asked about, each with its kind and two templates (`{entity}`, `{value}`), and the
    grouping fields kept for stratified results."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="entity_settings")
    entity_label = models.CharField(max_length=60, default="company")
    attributes = models.JSONField(default=list, blank=True)  # [{key, label, kind, inductive, deductive}]
    grouping_fields = models.JSONField(default=list, blank=True)
    seed = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(default=1)

    def __str__(self) -> str:
        return f"Entity settings of {self.project}"


class Entity(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="entities")
    name = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    raw = models.JSONField(default=dict, blank=True, help_text="Attribute values as imported.")
    values = models.JSONField(default=dict, blank=True, help_text="Normalised attribute values.")
    corrected = models.JSONField(default=list, blank=True, help_text="Attributes a coordinator corrected by hand.")
    groupings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="entity_unique_name")]

    def __str__(self) -> str:
        return self.name


class EntityQuestion(models.Model):
    class Direction(models.TextChoices):
        INDUCTIVE = "inductive", "Entity → attribute"
        DEDUCTIVE = "deductive", "Attribute → entity"

    class Status(models.TextChoices):
        GENERATED = "generated", "Waiting for verification"
        ACCEPTED = "accepted", "Verified"
        REJECTED = "rejected", "Rejected"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="entity_questions")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="questions")
    attribute = models.CharField(max_length=60)
    direction = models.CharField(max_length=10, choices=Direction.choices)
    question = models.TextField()
    options = models.JSONField(default=list)
    answer = models.PositiveSmallIntegerField()
    correct_value = models.TextField()
    distractors = models.JSONField(default=list, help_text="Entity ids of the distractors, most similar first.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.GENERATED)
    verifier = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    edited = models.BooleanField(default=False)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["entity", "attribute", "direction"], name="entity_question_unique")
        ]

    def __str__(self) -> str:
        return self.question[:80]
