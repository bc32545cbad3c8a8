"""Validation projects: QA pairs collected elsewhere, judged and fixed by native speakers.

A collected QA pair is a `annotation.QAItem` of a project of kind `validation`
(question in `question`, the current answer in `answer_standard`; the imported
answer is revision 1, every validator's edit a later revision), with one
`ValidationItem` beside it for what only collected pairs have (source URLs,
domain, the query that found it, extra columns). Validators fill
`review.ReviewSlot`s of the item's imported revision — the review app's queue,
N per item, blind — and each filled slot has one `ValidationJudgment`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotation.models import Project, QAItem, QAItemRevision
from common.jobs import Job, JobStatus
from review.models import ReviewSlot


class Task(models.TextChoices):
    QUESTION = "question", "Question validation"
    ANSWER_EDIT = "answer_edit", "Answer editing"
    LOCATION = "location", "Location relevance"
    DOMAIN = "domain", "Domain reliability"
    BETTER_ANSWER = "better_answer", "Better answer"
    LIKERT = "likert", "Likert scoring"


class DomainLabel(models.TextChoices):
    VERY_RELIABLE = "very_reliable", "Very reliable"
    PARTIALLY_RELIABLE = "partially_reliable", "Partially reliable"
    NOT_SURE = "not_sure", "Not sure"
    COMPLETELY_UNRELIABLE = "completely_unreliable", "Completely unreliable"


class LeaveOut(models.TextChoices):
    """What keeps a validated item out of releases (`ValidationSettings.release_leave_out` says which apply)."""

    BAD_QUESTION = "bad_question", "Question judged bad by the validators"
    UNRELIABLE_DOMAIN = "unreliable_domain", "Source domain labelled completely unreliable"


QUESTION_BAD_REASONS = [
    ("ambiguous", "Ambiguous"),
    ("incomprehensible", "Incomprehensible"),
    ("false_presupposition", "False presupposition"),
    ("opinion_seeking", "Opinion-seeking"),
    ("not_fact_seeking", "Not fact-seeking"),
]

DEFAULT_LIKERT_CRITERIA = [
    {
        "key": "clarity",
        "label": "Clarity",
        "rubric": "1: the answer cannot be understood … 5: the answer is clear and easy to follow.",
    },
    {
        "key": "faithfulness",
        "label": "Faithfulness",
        "rubric": "1: the answer contradicts or is absent from the source page … 5: everything it says is on the page.",
    },
    {
        "key": "informativeness",
        "label": "Informativeness",
        "rubric": "1: the answer says nothing the question asks for … 5: it gives all the information asked for.",
    },
    {
        "key": "plausibility",
        "label": "Plausibility",
        "rubric": "1: the answer cannot be right … 5: the answer is entirely plausible for the question.",
    },
]


def default_tasks() -> list[str]:
    return list(Task.values)


def default_leave_out() -> list[str]:
    return list(LeaveOut.values)


def default_likert_criteria() -> list[dict[str, str]]:
    return [dict(criterion) for criterion in DEFAULT_LIKERT_CRITERIA]


class ValidationSettings(models.Model):
    """What a validation project asks of its validators (several tasks can be on)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="validation_settings")
    location = models.CharField(max_length=200, blank=True, help_text="The location questions should be about.")
    tasks = models.JSONField(default=default_tasks, blank=True)
    likert_criteria = models.JSONField(default=default_likert_criteria, blank=True)
    duplicate_threshold = models.PositiveSmallIntegerField(
        default=90, help_text="rapidfuzz ratio (0-100) of normalised texts from which two texts are near-duplicates."
    )
    release_leave_out = models.JSONField(
        default=default_leave_out,
        blank=True,
        help_text="Which items releases leave out: bad questions, items from completely unreliable domains.",
    )
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"Validation settings of {self.project}"

    def has(self, task: str) -> bool:
        return task in self.tasks


LOCATION_FORMS = [
    ("adjective", "Adjective (Qatari, Bavarian)"),
    ("demonym", "Its people (Qataris, New Yorkers)"),
    ("bare", "Arabic: the name without the article (دوحة for الدوحة)"),
    ("nisba", "Arabic: the stem -ي, -ية, -يين attach to (قطر, دوح)"),
]


class Location(models.Model):
    """A place seed-query templates are expanded for: its name and the other forms templates need."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="locations")
    name = models.CharField(max_length=200)
    forms = models.JSONField(default=dict, blank=True, help_text="Form name (LOCATION_FORMS) → text.")
    language = models.CharField(
        max_length=16, blank=True, help_text="The language its seed queries are written in (empty: the project's)."
    )
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="location_unique_per_project")]

    def __str__(self) -> str:
        return self.name


class SeedQuery(models.Model):
    """A query the collection tool searches with, per topic; written by hand or expanded from a template."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="seed_queries")
    topic = models.CharField(max_length=100)
    query = models.TextField()
    location = models.CharField(max_length=200, blank=True)
    template = models.TextField(blank=True, help_text="The [LOCATION] template it was expanded from, if any.")
    normalised = models.TextField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["project", "normalised"], name="seed_unique_normalised")]

    def __str__(self) -> str:
        return self.query


class SourceDomain(models.Model):
    """The reliability of one source domain, labelled once per project (by hand or from an imported list)."""

    class Origin(models.TextChoices):
        VALIDATOR = "validator", "Labelled by a validator"
        COORDINATOR = "coordinator", "Labelled by a coordinator"
        IMPORTED = "imported", "From an imported list"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="source_domains")
    domain = models.CharField(max_length=255)
    label = models.CharField(max_length=32, choices=DomainLabel.choices)
    origin = models.CharField(max_length=16, choices=Origin.choices)
    labelled_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    labelled_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["domain"]
        constraints = [models.UniqueConstraint(fields=["project", "domain"], name="domain_unique_per_project")]

    def __str__(self) -> str:
        return f"{self.domain}: {self.label}"


class ValidationItem(models.Model):
    """What a collected QA pair brings beyond question and answer; one-to-one with its QAItem."""

    item = models.OneToOneField(QAItem, on_delete=models.CASCADE, related_name="validation")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="validation_items")
    data_id = models.CharField(max_length=200, blank=True)
    topic = models.CharField(max_length=100, blank=True)
    input_query = models.TextField(blank=True)
    question_type = models.CharField(max_length=100, blank=True)
    location = models.CharField(max_length=200, blank=True)
    language = models.CharField(max_length=8, blank=True)
    source_urls = models.JSONField(default=list, blank=True)
    domain = models.CharField(max_length=255, blank=True, help_text="Host of the first source URL, without www.")
    original_answer = models.TextField()
    alternative_answer = models.TextField(blank=True, help_text="A second answer to compare, if the import had one.")
    normalised_question = models.TextField(blank=True)
    duplicate_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="duplicates"
    )
    merged_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="merged")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["project", "domain"], name="vitem_domain_idx")]

    def __str__(self) -> str:
        return f"Validation of item {self.item_id}"

    @property
    def text_language(self) -> str:
        """The language its question and answers are in (its own, else the project's): every page's `lang` and
        `dir` follow it (`{{ vitem.text_language|lang }}`), never the project's language."""
        return self.language or self.project.standard_language


class ValidationJudgment(models.Model):
    """One validator's answers for one item: one row per filled review slot."""

    class Choice(models.TextChoices):
        ORIGINAL = "original", "Original answer"
        ALTERNATIVE = "alternative", "Other answer"
        MODEL = "model", "Model-edited answer"
        NEITHER = "neither", "Neither"

    # The item's project, kept on the judgment so a project's agreement figures and results read its own judgments
    # alone, whatever other projects hold (validation_submit sets it; migration 0008 filled it in).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    slot = models.OneToOneField(ReviewSlot, on_delete=models.CASCADE, related_name="validation_judgment")
    item = models.ForeignKey(QAItem, on_delete=models.CASCADE, related_name="validation_judgments")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    question_good = models.BooleanField(null=True, blank=True)
    question_reason = models.CharField(max_length=32, blank=True)
    location_relevant = models.BooleanField(null=True, blank=True)
    edit_revision = models.ForeignKey(
        QAItemRevision, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    better_order = models.JSONField(default=list, blank=True, help_text="The answers left to right as shown.")
    better_choice = models.CharField(max_length=16, choices=Choice.choices, blank=True)
    better_position = models.PositiveSmallIntegerField(null=True, blank=True, help_text="1 left, 2 right.")
    better_comment = models.TextField(blank=True)
    likert = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["item_id", "id"]
        # A project's judgments in id order: the agreement gatherer, the validation agreement page, the results.
        indexes = [models.Index(fields=["project", "id"], name="vjudgment_project_idx")]

    def __str__(self) -> str:
        return f"Judgment of item {self.item_id} by {self.validator_id}"


class FinalAnswerChoice(models.Model):
    """A coordinator's choice of the revision (the imported answer or a validator's edit) whose answer is the
    item's final answer in releases. The latest choice counts; earlier ones stay as its history."""

    item = models.ForeignKey(QAItem, on_delete=models.CASCADE, related_name="final_answer_choices")
    revision = models.ForeignKey(QAItemRevision, on_delete=models.PROTECT, related_name="+")
    chosen_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["item_id", "-created_at", "-id"]
        indexes = [models.Index(fields=["item", "-id"], name="final_answer_latest_idx")]

    def __str__(self) -> str:
        return f"Item {self.item_id}: final answer from revision {self.revision_id}"


# Search collections: seed queries sent to a search engine through SerpApi (validation/search.py)


class SearchEngine(models.TextChoices):
    GOOGLE = "google", "Google"
    BING = "bing", "Bing"
    YAHOO = "yahoo", "Yahoo"


class SearchType(models.TextChoices):
    TEXT = "text", "Text search (people also ask)"
    IMAGES = "images", "Image search (Google Images)"


class SearchKey(models.Model):
    """A project's SerpApi key, encrypted (common/secrets.py). No row: the project has no key."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="search_key")
    token = models.TextField(help_text="The key, encrypted; never shown again.")
    last_four = models.CharField(
        max_length=4, blank=True, help_text="The key's last four characters, to tell keys apart."
    )
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    set_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"Search key of {self.project}"


class SearchCollection(Job):
    """One run of a project's seed queries through a search engine, N iterations deep, within a budget of calls."""

    STATUS_WORDS = {JobStatus.CANCELLED: "Cancelled (it can be resumed)"}

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="search_collections")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    engine = models.CharField(max_length=16, choices=SearchEngine.choices, default=SearchEngine.GOOGLE)
    search_type = models.CharField(
        max_length=8,
        choices=SearchType.choices,
        default=SearchType.TEXT,
        help_text="Text: people-also-ask pairs; images: image results (Google Images), one item each.",
    )
    location = models.CharField(max_length=200, blank=True, help_text="SerpApi location (Google), e.g. Doha, Qatar.")
    gl = models.CharField(max_length=8, blank=True, help_text="Country code (gl), e.g. qa.")
    hl = models.CharField(max_length=16, blank=True, help_text="Interface language code (hl), e.g. ar.")
    iterations = models.PositiveSmallIntegerField(default=1, help_text="1: the seed queries only.")
    budget = models.PositiveIntegerField(help_text="Most calls to SerpApi this collection may send.")
    calls_sent = models.PositiveIntegerField(default=0)
    calls_cached = models.PositiveIntegerField(default=0, help_text="Queries answered from earlier responses.")
    items_created = models.PositiveIntegerField(default=0)
    items_left_out = models.PositiveIntegerField(default=0, help_text="Pairs collected before, not added again.")
    cancel_requested = models.BooleanField(default=False)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"Search collection {self.pk} of {self.project}"


class SearchQuery(models.Model):
    """One query of a collection: a seed query (iteration 1) or one that a response suggested (later ones)."""

    class Origin(models.TextChoices):
        SEED = "seed", "Seed query"
        RELATED_QUESTION = "related_question", "People also ask"
        RELATED_SEARCH = "related_search", "Related search"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting"
        SENT = "sent", "Answered by the search engine"
        CACHED = "cached", "Answered from an earlier response"
        FAILED = "failed", "Failed"
        OVER_BUDGET = "over_budget", "Not sent: the budget was used up"

    collection = models.ForeignKey(SearchCollection, on_delete=models.CASCADE, related_name="queries")
    position = models.PositiveIntegerField()
    query = models.TextField()
    normalised = models.TextField()
    iteration = models.PositiveSmallIntegerField()
    origin = models.CharField(max_length=20, choices=Origin.choices)
    topic = models.CharField(max_length=100, blank=True)
    location = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    failures = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    response = models.ForeignKey("SearchResponse", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    items_created = models.PositiveIntegerField(default=0)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["collection_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "normalised"], name="search_query_unique_normalised"),
            models.UniqueConstraint(fields=["collection", "position"], name="search_query_unique_position"),
        ]

    def __str__(self) -> str:
        return self.query


class SearchResponse(models.Model):
    """A search engine's response to one request, kept whole: the per-query cache (a rerun sends no call)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="search_responses")
    key = models.CharField(max_length=64, help_text="SHA-256 of the request's parameters, the key left out.")
    params = models.JSONField(help_text="The request's parameters, the key left out.")
    body = models.JSONField(help_text="The response as SerpApi sent it.")
    fetched_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "key"], name="search_response_unique_key")]

    def __str__(self) -> str:
        return f"{self.params.get('engine')}: {self.params.get('q')}"


# A model as a collaborator (validation/suggestions.py): suggestions for validators, drafted seed queries


class ModelJob(Job):
    """One run of a model endpoint over a project's work: suggestions for its items, or drafted seed queries."""

    class Purpose(models.TextChoices):
        SUGGEST = "suggest", "Suggestions for validators"
        SEED_DRAFTS = "seed_drafts", "Drafted seed queries"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="model_jobs")
    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    endpoint = models.ForeignKey(
        "endpoints.Endpoint", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    endpoint_name = models.CharField(max_length=100)
    model = models.CharField(max_length=200)
    options = models.JSONField(default=dict, blank=True, help_text="What was asked for (locations, topics, count).")
    answered = models.PositiveIntegerField(default=0, help_text="Requests the model answered as asked.")
    failed = models.PositiveIntegerField(default=0, help_text="Requests that failed or were not understood.")
    failures = models.JSONField(default=list, blank=True, help_text="[{what, error}] per failed request.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.get_purpose_display()} {self.pk} of {self.project}"


class SuggestionOutcome(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"
    CHANGED = "changed", "Accepted, then changed"
    IGNORED = "ignored", "Answered without it"


class Suggestion(models.Model):
    """A model's pre-annotation of one item: a suggestion beside the validator's controls, never a verdict.

    `ok` False: the request failed or its reply was not understood (`error` says which); nothing is suggested."""

    # The item's project, kept on the suggestion as on a judgment (set where suggestions are stored; migration 0008).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    item = models.ForeignKey(QAItem, on_delete=models.CASCADE, related_name="model_suggestions")
    job = models.ForeignKey(ModelJob, on_delete=models.CASCADE, related_name="suggestions")
    ok = models.BooleanField(default=False)
    question_good = models.BooleanField(null=True, blank=True)
    question_reason = models.CharField(max_length=32, blank=True)
    answer = models.TextField(blank=True, help_text="The model's edit of the answer (empty: none).")
    location_relevant = models.BooleanField(null=True, blank=True)
    reply = models.TextField(blank=True, help_text="The model's reply as it came.")
    error = models.TextField(blank=True)
    call = models.ForeignKey("endpoints.ModelCall", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["item_id", "-id"]
        constraints = [models.UniqueConstraint(fields=["job", "item"], name="suggestion_one_per_item_and_job")]
        indexes = [
            models.Index(fields=["item", "-id"], name="suggestion_latest_idx"),
            # A project's suggestions in id order: the latest per item for the agreement figures.
            models.Index(fields=["project", "id"], name="suggestion_project_idx"),
        ]

    def __str__(self) -> str:
        return f"Suggestion for item {self.item_id} ({'ok' if self.ok else 'failed'})"


class SuggestionUse(models.Model):
    """What a validator did with one suggested field: accepted it, accepted then changed it, or answered alone."""

    class Field(models.TextChoices):
        QUESTION = "question", "Question good?"
        ANSWER = "answer", "Edited answer"
        LOCATION = "location", "Location relevance"

    # The judgment's project, kept on the use as on the judgment: a project's counts of uses read its own rows
    # (suggestion_uses_record sets it; migration 0008 filled it in).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    suggestion = models.ForeignKey(Suggestion, on_delete=models.CASCADE, related_name="uses")
    judgment = models.ForeignKey(ValidationJudgment, on_delete=models.CASCADE, related_name="suggestion_uses")
    field = models.CharField(max_length=16, choices=Field.choices)
    outcome = models.CharField(max_length=16, choices=SuggestionOutcome.choices)

    class Meta:
        ordering = ["judgment_id", "field"]
        constraints = [models.UniqueConstraint(fields=["judgment", "field"], name="suggestion_use_one_per_field")]

    def __str__(self) -> str:
        return f"{self.field}: {self.outcome}"


class SeedDraft(models.Model):
    """A seed query a model drafted for one location and topic; a coordinator accepts, edits or rejects it before
    any search runs, and only an accepted one becomes a `SeedQuery`."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Waiting for review"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="seed_drafts")
    job = models.ForeignKey(ModelJob, on_delete=models.CASCADE, related_name="seed_drafts")
    location = models.CharField(max_length=200)
    topic = models.CharField(max_length=100)
    language = models.CharField(max_length=16)
    drafted = models.TextField(help_text="The query as the model wrote it.")
    query = models.TextField(help_text="The query as accepted (the coordinator may have edited it).")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    seed = models.ForeignKey(SeedQuery, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    note = models.CharField(max_length=300, blank=True, help_text="Why it did not become a seed query, if so.")
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["project", "status"], name="seed_draft_status_idx")]

    def __str__(self) -> str:
        return self.query
