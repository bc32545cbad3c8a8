"""Multiple-choice projects: local-vs-global trivia translated into a second language, and entity questions.

Both are project kinds on the shared machinery, as validation projects are: an
item is an `annotation.QAItem` (question, author, status, revisions, events),
reviewed through `review.ReviewSlot`s (queue, claims, judgments per criterion,
agreement), released through `exports`; the tables here are one-to-one side
tables for what only multiple-choice items have. Projects are `annotation.Project`s
of kind `Project.Kind.TRIVIA` or `Project.Kind.ENTITY_QA`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models import Project, QAItem
from common.jobs import Job

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
    # How many items the coordinator wants per cell: {category: {subset: {difficulty: n}}}; a missing cell has none.
    targets = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=1)

    def __str__(self) -> str:
        return f"Trivia settings of {self.project}"


class TriviaImport(models.Model):
    """One imported file: what it brought, what it skipped as already there, and whether it was undone.

    Re-importing a file recognises it by its sha256 (the whole file) and each record by its source id — or, for a
    record without one, by its question and candidates — so the same items are never imported twice.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="trivia_imports")
    name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    created = models.PositiveIntegerField(default=0)
    skipped = models.JSONField(default=list, blank=True, help_text="Records already in the project: [{where, id}].")
    undone_at = models.DateTimeField(null=True, blank=True)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "sha256"], name="trivia_import_sha_idx")]

    def __str__(self) -> str:
        return f"Import of {self.name} into {self.project_id}"


class TriviaItem(models.Model):
    """What a multiple-choice item adds to its `annotation.QAItem`; one-to-one with it.

    The shared item holds the question (source language), the author, the review
    status and the revisions (each revision's `content` keeps the candidates, the
    correct index, category, subset and difficulty as they were). This row holds the
    current multiple-choice specifics and the translation: a queue claimed the same
    way as the annotator's pair queue, the target-language version, the problem tags
    and the coordinator's resolution.
    """

    class Translation(models.TextChoices):
        OPEN = "open", "Waiting for a translator"
        CLAIMED = "claimed", "Being translated"
        FLAGGED = "flagged", "Problem tagged, waiting for a coordinator"
        DONE = "done", "Translated"
        DROPPED = "dropped", "Dropped"

    item = models.OneToOneField(QAItem, on_delete=models.CASCADE, related_name="trivia")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="trivia_items")
    external_id = models.CharField(max_length=100, blank=True)
    import_batch = models.ForeignKey(
        TriviaImport, null=True, blank=True, on_delete=models.SET_NULL, related_name="items"
    )
    category = models.CharField(max_length=100)
    subset = models.CharField(max_length=8, choices=Subset.choices)
    difficulty = models.CharField(max_length=8, choices=Difficulty.choices)
    candidates = models.JSONField(default=list)
    answer = models.PositiveSmallIntegerField()

    # Translators take items only once the item is accepted in review (`QAItem.status`).
    translation_status = models.CharField(max_length=16, choices=Translation.choices, default=Translation.OPEN)
    translator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_expires_at = models.DateTimeField(null=True, blank=True)
    target_question = models.TextField(blank=True)
    target_candidates = models.JSONField(default=list, blank=True)
    problem_tags = models.JSONField(default=list, blank=True)
    problem_note = models.TextField(blank=True)
    # A coordinator's note when sending a translation back to its translator.
    sent_back_note = models.TextField(blank=True)
    resolution = models.CharField(max_length=8, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["project", "translation_status", "id"], name="trivia_queue_idx"),
            # The translation queue's first reads (the lowest open item, the lowest claim left to expire), as the
            # review queue's `slot_waiting_idx`: not a walk of the primary key past every item translated already
            # and every other project's. With the status in the key, the planner sees how few rows of the project
            # wait (with `(project, id) WHERE open` it walked the primary key past another project's 7,500 rows).
            models.Index(
                fields=["project", "translation_status", "id"],
                condition=Q(translation_status__in=["open", "claimed"]),
                name="trivia_waiting_idx",
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(answer__gte=0), name="trivia_answer_not_negative"),
        ]

    def __str__(self) -> str:
        return f"Trivia item {self.item_id}"

    # The shared item's fields, for templates and serializers (load with select_related("item")).
    @property
    def question(self) -> str:
        return self.item.question

    @property
    def status(self) -> str:
        return self.item.status

    def get_status_display(self) -> str:
        return self.item.get_status_display()

    @property
    def translation_label(self) -> str:
        """The translation status, or that the item is not yet accepted (translators only see accepted ones)."""
        if self.item.status != QAItem.Status.ACCEPTED and self.translation_status == self.Translation.OPEN:
            return "Not yet accepted"
        return self.get_translation_status_display()

    @property
    def difficulty_number(self) -> int:
        return DIFFICULTY_NUMBERS[Difficulty(self.difficulty)]

    @property
    def choices(self) -> list[tuple[int, str, bool]]:
        return [(index, text, index == self.answer) for index, text in enumerate(self.candidates)]

    @property
    def target_choices(self) -> list[tuple[int, str, bool]]:
        return [(index, text, index == self.answer) for index, text in enumerate(self.target_candidates)]

    def content(self) -> dict[str, object]:
        """The multiple-choice part of a revision (`QAItemRevision.content`)."""
        return {
            "candidates": list(self.candidates),
            "answer": self.answer,
            "category": self.category,
            "subset": self.subset,
            "difficulty": self.difficulty,
        }


# Entity questions with controlled context


class AttributeKind(models.TextChoices):
    YEAR = "year", "Year (four digits)"
    CITY = "city", "City (City, Country)"
    LIST = "list", "List (one question per element, source order kept)"
    TEXT = "text", "Text"


class EntitySettings(models.Model):
    """The attributes asked about, each with its kind and two templates (`{entity}`, `{value}`), and the
    grouping fields kept for stratified results."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="entity_settings")
    entity_label = models.CharField(max_length=60, default="company")
    # [{key, label, kind, inductive, deductive, statement}]: `statement` ("{entity} is headquartered in {value}.")
    # is the sentence the perfect and misleading contexts are made of.
    attributes = models.JSONField(default=list, blank=True)
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
    values = models.JSONField(
        default=dict, blank=True, help_text="Normalised attribute values (a list attribute's: a list, in source order)."
    )
    corrected = models.JSONField(default=list, blank=True, help_text="Attributes a coordinator corrected by hand.")
    groupings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="entity_unique_name")]

    def __str__(self) -> str:
        return self.name


# The shared item's status as verification reads it (`EntityQuestion.status`); any other status is a rejection.
_VERIFICATION_STATUS: dict[str, str] = {QAItem.Status.ACCEPTED: "accepted", QAItem.Status.SUBMITTED: "generated"}


class EntityQuestion(models.Model):
    """What a generated question adds to its `annotation.QAItem`; one-to-one with it.

    The shared item holds the question text, the status (in review = waiting for
    verification, accepted, rejected) and the revisions (a fixed wording or a swapped
    distractor is a new revision; its `content` keeps the options). Verifiers take
    questions through the review app's slots and claims.
    """

    class Direction(models.TextChoices):
        INDUCTIVE = "inductive", "Entity → attribute"
        DEDUCTIVE = "deductive", "Attribute → entity"

    item = models.OneToOneField(QAItem, on_delete=models.CASCADE, related_name="entity_question")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="entity_questions")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="questions")
    attribute = models.CharField(max_length=60)
    direction = models.CharField(max_length=10, choices=Direction.choices)
    options = models.JSONField(default=list)
    answer = models.PositiveSmallIntegerField()
    correct_value = models.TextField()
    distractors = models.JSONField(default=list, help_text="Entity ids of the distractors, most similar first.")
    edited = models.BooleanField(default=False)
    # Set when a coordinator corrects the value this question was generated from (released or not).
    value_corrected_at = models.DateTimeField(null=True, blank=True)
    value_corrected_to = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            # One question per fact and direction; a list attribute has one fact per element.
            models.UniqueConstraint(
                fields=["entity", "attribute", "direction", "correct_value"], name="entity_question_unique_fact"
            )
        ]

    def __str__(self) -> str:
        return f"{self.direction} question on {self.attribute} of entity {self.entity_id}"

    class Status(models.TextChoices):
        """How verification reads the shared item's status."""

        GENERATED = "generated", "Waiting for verification"
        ACCEPTED = "accepted", "Verified"
        REJECTED = "rejected", "Rejected"

    # The shared item's fields, for templates and serializers (load with select_related("item")).
    @property
    def question(self) -> str:
        return self.item.question

    @property
    def status(self) -> str:
        return _VERIFICATION_STATUS.get(self.item.status, "rejected")

    def get_status_display(self) -> str:
        return self.Status(self.status).label

    @property
    def version(self) -> int:
        return self.item.version

    def content(self) -> dict[str, object]:
        """The multiple-choice part of a revision (`QAItemRevision.content`)."""
        return {"options": list(self.options), "answer": self.answer, "distractors": list(self.distractors)}


class TranslationSuggestionJob(Job):
    """One run of a model endpoint drafting translations of the items open for translation (a suggestion each)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="translation_suggestion_jobs")
    endpoint = models.ForeignKey(
        "endpoints.Endpoint", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    endpoint_name = models.CharField(max_length=100)
    model = models.CharField(max_length=200)
    answered = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0, help_text="Items whose request failed or was not understood.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"Translation suggestions {self.pk} of {self.project}"


class TranslationSuggestion(models.Model):
    """A model's suggested translation of one item, shown to its translator; never a translation by itself.

    `ok` False: the request failed or the reply was not understood (`error`). `outcome` is what the translator
    did with it when they saved: accepted, accepted then changed, or translated without it."""

    class Outcome(models.TextChoices):
        ACCEPTED = "accepted", "Accepted"
        CHANGED = "changed", "Accepted, then changed"
        IGNORED = "ignored", "Translated without it"

    trivia = models.ForeignKey(TriviaItem, on_delete=models.CASCADE, related_name="suggestions")
    job = models.ForeignKey(TranslationSuggestionJob, on_delete=models.CASCADE, related_name="suggestions")
    ok = models.BooleanField(default=False)
    target_question = models.TextField(blank=True)
    target_candidates = models.JSONField(default=list, blank=True)
    reply = models.TextField(blank=True)
    error = models.TextField(blank=True)
    call = models.ForeignKey("endpoints.ModelCall", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["trivia_id", "-id"]
        constraints = [models.UniqueConstraint(fields=["job", "trivia"], name="translation_suggestion_one_per_job")]

    def __str__(self) -> str:
        return f"Suggested translation of {self.trivia_id}"
