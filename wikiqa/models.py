"""The Wikipedia QA kind's own models: collecting page pairs from Wikipedia, and the cache of fetched pages.

They were models of `annotation` and keep the tables they had there (`db_table`); annotation's migration 0025
and this app's 0001 moved them by state only, so no table was renamed, copied or dropped.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotation.languages import validate_variant, validate_wiki_code
from annotation.models import PagePair, Project
from common.jobs import Job


class Collection(Job):
    """One run of collecting page pairs from Wikipedia for a list of local-wiki titles.

    Progress lives in the counters (titles done of `progress_total`, kept, new pairs; updated in the same
    transaction as each title's outcome), so a crashed worker leaves a collection that resumes where it
    stopped: titles without an outcome are simply still pending. It may be cancelled, and resumed.
    """

    class Source(models.TextChoices):
        TITLES = "titles", "A list of titles"
        CATEGORY = "category", "Members of a local-wiki category"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="collections")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.TITLES)
    category = models.CharField(max_length=500, blank=True, help_text="Local-wiki category, for category sources.")
    local_wiki = models.CharField(max_length=32, validators=[validate_wiki_code])
    standard_wiki = models.CharField(max_length=32, validators=[validate_wiki_code])
    standard_variant = models.CharField(max_length=16, blank=True, validators=[validate_variant])
    local_heavy_only = models.BooleanField(
        default=True, help_text="Keep a pair only if the local lead and full text are both longer than the standard."
    )
    cancel_requested = models.BooleanField(default=False)
    kept = models.PositiveIntegerField(default=0)
    created_pairs = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "annotation_collection"  # the table it had in `annotation` (migrations/0001_initial.py)
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="collection_project_idx")]

    def __str__(self) -> str:
        return f"Collection {self.pk} for {self.project_id}"

    @property
    def dropped(self) -> int:
        return self.progress_done - self.kept


class CollectionTitle(models.Model):
    """One requested title and what became of it."""

    class Outcome(models.TextChoices):
        PENDING = "pending", "Not processed yet"
        KEPT = "kept", "Kept"
        NO_STANDARD_PAGE = "no_standard_page", "Dropped: no standard page"
        NOT_LOCAL_HEAVY = "not_local_heavy", "Dropped: not local-heavy"
        DISAMBIGUATION = "disambiguation", "Dropped: disambiguation page"
        EMPTY_LEAD = "empty_lead", "Dropped: empty lead"
        PAGE_MISSING = "page_missing", "Dropped: page missing"
        FETCH_FAILED = "fetch_failed", "Dropped: fetch failed"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="titles")
    position = models.PositiveIntegerField()
    title = models.CharField(max_length=500)
    outcome = models.CharField(max_length=24, choices=Outcome.choices, default=Outcome.PENDING)
    error = models.TextField(blank=True)
    local_title = models.CharField(max_length=500, blank=True, help_text="After following redirects.")
    standard_title = models.CharField(max_length=500, blank=True)
    local_revision = models.BigIntegerField(null=True, blank=True)
    standard_revision = models.BigIntegerField(null=True, blank=True)
    pair = models.ForeignKey(PagePair, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    pair_created = models.BooleanField(default=False)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotation_collectiontitle"
        ordering = ["collection_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "position"], name="collection_title_position"),
            models.UniqueConstraint(fields=["collection", "title"], name="collection_title_unique"),
        ]
        indexes = [models.Index(fields=["collection", "outcome", "position"], name="collection_title_outcome_idx")]

    def __str__(self) -> str:
        return f"{self.title}: {self.outcome}"


class WikiPage(models.Model):
    """A fetched Wikipedia page at one revision: the cache that keeps re-runs off Wikipedia."""

    wiki = models.CharField(max_length=32)
    variant = models.CharField(max_length=16, blank=True)
    title = models.CharField(max_length=500)
    revision = models.BigIntegerField()
    pageid = models.BigIntegerField(null=True, blank=True)
    url = models.URLField(max_length=1000, blank=True)
    lead = models.TextField(blank=True)
    text = models.TextField(blank=True)
    fetched_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "annotation_wikipage"
        constraints = [
            models.UniqueConstraint(fields=["wiki", "variant", "title", "revision"], name="wikipage_unique_revision"),
        ]

    def __str__(self) -> str:
        return f"{self.wiki}:{self.title}@{self.revision}"
