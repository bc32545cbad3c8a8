from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from annotation.languages import Language, get_language, validate_variant, validate_wiki_code
from common import kinds

DEFAULT_REVIEW_CRITERIA = [
    {
        "key": "fluency",
        "label": "Grammaticality / fluency",
        "help": "The question and the answers are grammatical and fluent.",
    },
    {
        "key": "standalone",
        "label": "Stand-alone validity",
        "help": "The question makes sense without the article.",
    },
    {
        "key": "appropriateness",
        "label": "Answer appropriateness",
        "help": "The answer directly and fully addresses the question on its own.",
    },
]

DEFAULT_TOPICS = [
    "history",
    "sport",
    "geography",
    "entertainment-art",
    "animals-plants",
    "politics-government",
    "food",
    "transportation",
    "science-math-technology",
    "linguistics",
    "culture-customs",
    "education",
    "business",
    "other",
]

DEFAULT_REGIONS = ["local", "standard", "other"]


def default_review_criteria() -> list[dict[str, str]]:
    return [dict(criterion) for criterion in DEFAULT_REVIEW_CRITERIA]


def default_topics() -> list[str]:
    return list(DEFAULT_TOPICS)


def default_regions() -> list[str]:
    return list(DEFAULT_REGIONS)


class LiveManager(models.Manager):
    """The default manager of a model with soft delete: deleted rows are out of every list, queue and release.

    `all_objects` (a plain manager) still sees them: the admin, the deleted lists, restore, imports
    (a deleted title is still taken) and whole-project archives. Foreign keys load through Django's
    base manager, so an item or audit event of a deleted pair still reaches its pair.
    """

    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().filter(deleted_at__isnull=True)


class Role(models.TextChoices):
    COORDINATOR = "coordinator", "Coordinator"
    ANNOTATOR = "annotator", "Annotator"
    REVIEWER = "reviewer", "Reviewer"
    RESEARCHER = "researcher", "Researcher"


class Project(models.Model):
    class Kind(models.TextChoices):
        WIKIPEDIA_QA = "wikipedia_qa", "Local-variety Wikipedia QA"
        VALIDATION = "validation", "Validation of collected QA pairs"
        TRIVIA = "trivia", "Multiple-choice trivia, local vs global, in two languages"
        ENTITY_QA = "entity_qa", "Entity questions with controlled context"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=60, unique=True)
    kind = models.CharField(max_length=32, choices=Kind.choices, default=Kind.WIKIPEDIA_QA)
    local_language = models.CharField(max_length=8, help_text="ISO 639-3 code of the local variety, e.g. yue or bar.")
    local_wiki = models.CharField(
        max_length=32,
        validators=[validate_wiki_code],
        help_text="Wikipedia code of the local wiki, e.g. zh-yue or bar.",
    )
    standard_language = models.CharField(
        max_length=8, help_text="ISO 639-3 code of the standard language, e.g. cmn or deu."
    )
    standard_wiki = models.CharField(
        max_length=32, validators=[validate_wiki_code], help_text="Wikipedia code of the standard wiki, e.g. zh or de."
    )
    standard_variant = models.CharField(
        max_length=16,
        blank=True,
        validators=[validate_variant],
        help_text="Script variant for the standard wiki, e.g. zh-hk (Chinese only).",
    )
    guidelines = models.TextField(blank=True, help_text="Markdown.")
    guidelines_version = models.PositiveIntegerField(default=1)
    lead_qa_min = models.PositiveSmallIntegerField(default=2)
    lead_qa_max = models.PositiveSmallIntegerField(default=3)
    collect_document_qa = models.BooleanField(default=False)
    verification_required = models.BooleanField(
        default=False,
        help_text="Every lead-section QA must be verified on the standard full text before its pair is submitted.",
    )
    reviewers_per_item = models.PositiveSmallIntegerField(default=1)
    claim_minutes = models.PositiveIntegerField(
        default=30, help_text="An unscreened pair returns to the pool after this many idle minutes."
    )
    # Review, labels and document-level QAs (workflow steps 4-7).
    review_criteria = models.JSONField(default=default_review_criteria, blank=True)
    reviewer_may_rewrite = models.BooleanField(
        default=False, help_text="A reviewer may rewrite a flagged item directly instead of sending it back."
    )
    blind_review = models.BooleanField(default=True, help_text="Authors do not see who reviewed their items.")
    flag_needs_reason = models.BooleanField(
        default=True, help_text="A reviewer who flags a criterion must say why (the author reads it)."
    )
    topics = models.JSONField(default=default_topics, blank=True)
    regions = models.JSONField(default=default_regions, blank=True)
    region_vocabulary = models.JSONField(
        default=dict,
        blank=True,
        help_text="The study's fine-grained regions (as a release writes them) → one of the regions above.",
    )
    labellers_per_pair = models.PositiveSmallIntegerField(default=2)
    document_qa_minutes = models.PositiveSmallIntegerField(
        default=15, help_text="Time box shown while authoring a document-level QA."
    )
    releases_public = models.BooleanField(
        default=False, help_text="Anyone signed in may list, open and download the published releases."
    )
    version = models.PositiveIntegerField(default=1)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    # Soft delete (annotation.services.deletion).
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = LiveManager()
    all_objects = models.Manager()  # noqa: DJ012 (a manager, declared after the default one on purpose)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(lead_qa_min__lte=models.F("lead_qa_max")), name="project_lead_qa_range"),
            models.CheckConstraint(condition=Q(reviewers_per_item__gte=1), name="project_reviewers_at_least_one"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        """The project's own page: each kind has its home (`common.kinds`; `project_detail` sends there too)."""
        return reverse(kinds.of(self).home, args=[self.slug])

    @property
    def lead_qa_range(self) -> str:
        """How many lead-section QAs a pair takes, as every screen and the dataset card quote it: "2–3", or "2"."""
        if self.lead_qa_min == self.lead_qa_max:
            return str(self.lead_qa_min)
        return f"{self.lead_qa_min}–{self.lead_qa_max}"

    @property
    def unit(self) -> kinds.ProjectKind:
        """The project's kind as registered (`common.kinds`): its pages, words and release parts."""
        return kinds.of(self)

    @property
    def local(self) -> Language:
        return get_language(self.local_language)

    @property
    def standard(self) -> Language:
        return get_language(self.standard_language)


class ActiveMembershipManager(models.Manager):
    """Memberships that count: a deactivated member is out of every access check, queue and reviewer list.

    `Membership.all_objects` still sees them, for the members page and reactivation; their items,
    reviews and audit events stay, because nothing is deleted.
    """

    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().filter(deactivated_at__isnull=True)


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    is_coordinator = models.BooleanField(default=False)
    is_annotator = models.BooleanField(default=False)
    is_reviewer = models.BooleanField(default=False)
    is_researcher = models.BooleanField(default=False, help_text="Reads releases and agreement reports; no queues.")
    created_at = models.DateTimeField(default=timezone.now)
    deactivated_at = models.DateTimeField(null=True, blank=True)

    objects = ActiveMembershipManager()
    all_objects = models.Manager()  # noqa: DJ012 (a manager, declared after the default one on purpose)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="membership_unique")]
        ordering = ["user__username"]

    def __str__(self) -> str:
        return f"{self.user} in {self.project}"

    def has_role(self, role: Role | str) -> bool:
        return bool(getattr(self, f"is_{role}"))

    @property
    def roles(self) -> list[str]:
        return [role.value for role in Role if self.has_role(role)]

    @property
    def role_labels(self) -> list[str]:
        return [role.label for role in Role if self.has_role(role)]

    @property
    def is_active(self) -> bool:
        return self.deactivated_at is None


class PairQuerySet(models.QuerySet["PagePair"]):
    def available(self, now: datetime | None = None) -> PairQuerySet:
        """Pairs the queue may hand out: never claimed, or claimed but left unscreened past the claim time."""
        now = now or timezone.now()
        return self.filter(Q(status=PagePair.Status.NEW) | Q(status=PagePair.Status.CLAIMED, claim_expires_at__lt=now))

    def waiting_for(self, user_id: int, now: datetime | None = None) -> PairQuerySet:
        """The available pairs the queue may hand this person: not those they skipped (and did not take back)."""
        return self.available(now).exclude(pk__in=PairSkip.objects.skipped_by(user_id).values("pair_id"))


class PagePair(models.Model):
    class Status(models.TextChoices):
        NEW = "new", "In the pool"
        CLAIMED = "claimed", "Claimed, not screened"
        ANNOTATING = "annotating", "Being annotated"
        EXCLUDED = "excluded", "Excluded"
        SUBMITTED = "submitted", "Submitted"

    class Source(models.TextChoices):
        DEMO = "demo", "Demo data"
        JSONL = "jsonl", "JSONL import"
        CSV = "csv", "CSV import"
        WIKIPEDIA = "wikipedia", "Wikipedia collection"
        WILOVA = "wilova", "WiLoVa release import"
        API = "api", "API"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="pairs")
    local_title = models.CharField(max_length=500)
    standard_title = models.CharField(max_length=500)
    local_url = models.URLField(max_length=1000, blank=True)
    standard_url = models.URLField(max_length=1000, blank=True)
    local_lead = models.TextField()
    standard_lead = models.TextField()
    local_text = models.TextField(blank=True, help_text="Full text of the local article, if known.")
    standard_text = models.TextField(blank=True, help_text="Full text of the standard article, if known.")
    # Lengths in code points. Kept as numbers because some imports know a full text's length but not the text.
    local_lead_length = models.PositiveIntegerField(default=0)
    standard_lead_length = models.PositiveIntegerField(default=0)
    local_text_length = models.PositiveIntegerField(null=True, blank=True)
    standard_text_length = models.PositiveIntegerField(null=True, blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.JSONL)
    metadata = models.JSONField(default=dict, blank=True)

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.NEW)
    screening_decision = models.CharField(max_length=16, blank=True)  # latest Screening.decision, for filtering
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="assigned_pairs"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_expires_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    active_seconds = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    # Soft delete (annotation.services.deletion); the pair's live items are deleted with it.
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = LiveManager.from_queryset(PairQuerySet)()
    all_objects = PairQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "local_title"], name="pair_unique_local_title"),
        ]
        indexes = [
            models.Index(fields=["project", "status", "id"], name="pair_queue_idx"),
            # The queue's first read (the lowest new pair): with only the index above, PostgreSQL walked the
            # primary key from the table's first row, filtering out every pair already taken and every other
            # project's (it takes new pairs as spread evenly over the ids); 25 ms a claim at 40,000 rows.
            models.Index(
                fields=["project", "id"],
                condition=models.Q(status="new", deleted_at__isnull=True),
                name="pair_new_idx",
            ),
            models.Index(fields=["assignee", "status"], name="pair_assignee_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.local_title} / {self.standard_title}"

    def get_absolute_url(self) -> str:
        return reverse("pair_detail", args=[self.project.slug, self.pk])

    @property
    def is_editable(self) -> bool:
        return self.status == self.Status.ANNOTATING


class PairSkipQuerySet(models.QuerySet["PairSkip"]):
    def skipped_by(self, user_id: int) -> PairSkipQuerySet:
        """The skips of this person that still keep a pair from them (not taken back)."""
        return self.filter(annotator=user_id, undone_at__isnull=True)


class PairSkip(models.Model):
    """An annotator gave a pair back to the queue unfinished, with an optional reason. Every one is kept;
    one taken back (`undone_at`) no longer keeps the pair from them."""

    pair = models.ForeignKey(PagePair, on_delete=models.CASCADE, related_name="skips")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    status_before = models.CharField(max_length=16)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    undone_at = models.DateTimeField(null=True, blank=True)

    objects = PairSkipQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["annotator", "pair"], name="pairskip_annotator_idx")]

    def __str__(self) -> str:
        return f"{self.pair_id} given back by {self.annotator_id}"


class Screening(models.Model):
    """One person's screening decision for a pair. Every decision is kept; the pair holds the latest."""

    class Decision(models.TextChoices):
        ANNOTATE = "annotate", "Annotate"
        TRANSLATED = "translated", "Translated"
        STRUCTURAL = "structural", "Structural mismatch"
        OTHER = "other", "Other"
        ERROR = "error", "Error"  # imported projects only

    # The pair's project, kept on the decision so a project's screening agreement, exports and progress counts
    # read its own decisions alone, whatever other projects hold (pair_screen sets it; migration 0026 filled it in).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    pair = models.ForeignKey(PagePair, on_delete=models.CASCADE, related_name="screenings")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    decision = models.CharField(max_length=16, choices=Decision.choices)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        # A project's decisions (the screening agreement gatherer, the WiLoVa export), and one person's by time in
        # it (the annotator's "excluded today"): not every project's decisions of a person who works in many.
        indexes = [models.Index(fields=["project", "annotator", "created_at"], name="screening_project_idx")]

    def __str__(self) -> str:
        return f"{self.pair_id}: {self.decision}"


def reviewable_by_q(user: Any, *, item: str = "", revision: str | None = None) -> Q:
    """The queryset twin of `annotation.lifecycle.may_review`: not an item `user` wrote (nor, given the path to
    a revision, a revision they wrote). `item`/`revision`: lookup prefixes from the queried model ("item__")."""
    condition = ~Q(**{f"{item}author": user})
    if revision is not None:
        condition &= ~Q(**{f"{revision}author": user})
    return condition


class ItemQuerySet(models.QuerySet["QAItem"]):
    def alive(self) -> ItemQuerySet:
        return self.filter(deleted_at__isnull=True)

    def reviewable_by(self, user: Any) -> ItemQuerySet:
        """Items `user` may review (`annotation.lifecycle.may_review`): never their own."""
        return self.filter(reviewable_by_q(user))


class QAItem(models.Model):
    class Kind(models.TextChoices):
        LEAD = "lead", "Lead-section QA"
        DOCUMENT = "document", "Document-level QA"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SUBMITTED = "submitted", "In review"
        NEEDS_REWRITE = "needs_rewrite", "Needs rewrite"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items")
    pair = models.ForeignKey(PagePair, on_delete=models.CASCADE, related_name="items")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="qa_items")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.LEAD)
    question = models.TextField(blank=True, help_text="In the standard language.")
    answer_standard = models.TextField(blank=True)
    answer_local = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    version = models.PositiveIntegerField(default=1)
    active_seconds = models.PositiveIntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # Soft delete: items keep the plain default manager and are filtered with `.alive()` (older than the
    # pair and project managers; every query of items already says which rows it wants).
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = ItemQuerySet.as_manager()

    class Meta:
        ordering = ["pair_id", "created_at", "id"]
        indexes = [
            models.Index(fields=["project", "status"], name="item_project_status_idx"),
            models.Index(fields=["pair", "deleted_at"], name="item_pair_idx"),
            # The review list: a project's items in submission order, one page at a time.
            models.Index(fields=["project", "submitted_at", "id"], name="item_project_submitted_idx"),
        ]

    def __str__(self) -> str:
        return self.question[:80] or f"Item {self.pk}"

    @property
    def is_complete(self) -> bool:
        return bool(self.question.strip() and self.answer_standard.strip() and self.answer_local.strip())


class EvidenceSpan(models.Model):
    """A piece of evidence: code-point offsets into one of the pair's stored texts.

    `text == document_text[start:end]` is checked on every write. Imported evidence
    that could not be located keeps its text with start/end empty and `match`
    saying so, for a coordinator to fix.
    """

    class Document(models.TextChoices):
        LOCAL_LEAD = "local_lead", "Local lead section"
        LOCAL_TEXT = "local_text", "Local full text"

    class Match(models.TextChoices):
        EXACT = "exact", "Located exactly"
        WHITESPACE = "whitespace", "Located ignoring whitespace"
        UNLOCATED = "unlocated", "Not located"

    item = models.ForeignKey(QAItem, on_delete=models.CASCADE, related_name="spans")
    document = models.CharField(max_length=16, choices=Document.choices, default=Document.LOCAL_LEAD)
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    text = models.TextField()
    match = models.CharField(max_length=16, choices=Match.choices, default=Match.EXACT)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["item_id", "position", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(start__isnull=True, end__isnull=True) | Q(start__lte=models.F("end")),
                name="span_start_before_end",
            ),
        ]

    def __str__(self) -> str:
        return f"[{self.start}:{self.end}] {self.text[:40]}"


def deleted_items(project: Project) -> set[int]:
    """The ids of the project's deleted items: rows that carry their project (review slots, judgments) are read
    alone, through their own project index, and those of deleted items are left out here. No join, so no plan reads
    another project's rows, nor the project's own once per row on stale statistics (tests/test_coordinator_plans.py).
    """
    return set(QAItem.objects.filter(project=project, deleted_at__isnull=False).order_by().values_list("pk", flat=True))


def deleted_pairs(project: Project) -> set[int]:
    """The ids of the project's deleted pairs, for rows that carry their project and name a pair (`deleted_items`)."""
    return set(
        PagePair.all_objects.filter(project=project, deleted_at__isnull=False).order_by().values_list("pk", flat=True)
    )


class QAItemRevision(models.Model):
    """The content of an item as it was sent to review. A rewrite adds a revision; none is ever changed."""

    class Reason(models.TextChoices):
        SUBMITTED = "submitted", "Submitted by the author"
        REWRITE = "rewrite", "Rewritten by the author after review"
        REVIEWER_REWRITE = "reviewer_rewrite", "Rewritten by a reviewer"
        COORDINATOR_FIX = "coordinator_fix", "Corrected by a coordinator"
        IMPORTED = "imported", "Imported"
        GENERATED = "generated", "Generated (entity questions)"
        GOLD_FLAGGED = "gold_flagged", "Sent back to review: its gold answer looked wrong in an evaluation"

    item = models.ForeignKey(QAItem, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    question = models.TextField(blank=True)
    answer_standard = models.TextField(blank=True)
    answer_local = models.TextField(blank=True)
    spans = models.JSONField(default=list, blank=True)  # [{document, start, end, text, match}]
    # What other project kinds add to question and answer, e.g. the candidates and the correct index of a
    # multiple-choice item; empty for Wikipedia QA.
    content = models.JSONField(default=dict, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.CharField(max_length=24, choices=Reason.choices, default=Reason.SUBMITTED)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["item_id", "number"]
        constraints = [models.UniqueConstraint(fields=["item", "number"], name="revision_unique_number")]

    def __str__(self) -> str:
        return f"Item {self.item_id} revision {self.number}"


class ItemEvent(models.Model):
    """A change of an item's status (or a review step), with who and when: written by `annotation.lifecycle` only."""

    class Action(models.TextChoices):
        SUBMITTED = "submitted", "Submitted for review"
        CLAIMED = "claimed", "Claimed for review"
        REVIEWED = "reviewed", "Reviewed"
        ACCEPTED = "accepted", "Accepted"
        NEEDS_REWRITE = "needs_rewrite", "Sent back for a rewrite"
        REWRITTEN = "rewritten", "Rewritten and resubmitted"
        REVIEWER_REWRITE = "reviewer_rewrite", "Rewritten by a reviewer"
        REJECTED = "rejected", "Rejected"
        VERIFIED = "verified", "Full-document verification recorded"
        GOLD_FLAGGED = "gold_flagged", "Gold answer looked wrong in an evaluation"

    item = models.ForeignKey(QAItem, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    action = models.CharField(max_length=24, choices=Action.choices)
    from_status = models.CharField(max_length=16, blank=True)
    to_status = models.CharField(max_length=16, blank=True)
    revision_number = models.PositiveIntegerField(null=True, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "review_itemevent"  # its table since it lived in review; the rows stay where they are
        ordering = ["item_id", "created_at", "id"]
        indexes = [models.Index(fields=["action", "created_at"], name="event_action_idx")]

    def __str__(self) -> str:
        return f"Item {self.item_id}: {self.action}"


# Import jobs and the original rows of imported releases live in their own module.
from annotation.models_checks import LocalCheck  # noqa: E402, F401
from annotation.models_ingest import ImportJob, SourceFile, SourceRow  # noqa: E402, F401
