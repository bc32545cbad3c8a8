"""Models for getting rows in: file imports of every project kind, and the original rows of imported
releases (kept so a release can be written back byte for byte). Wikipedia collections are `wikiqa.models`.

Imported from `annotation.models`, so Django sees them as models of the annotation app.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotation.models import PagePair, Project
from common.jobs import Job


class ImportJob(Job):
    """An import of uploaded files, run by a worker; the report is stored when it ends.

    Progress is in bytes read (`progress_done` of `progress_total`) and records read. A running job silent
    for JOB_STALE_SECONDS has lost its worker and is taken over (its transaction was rolled back with the
    dead worker's connection: nothing to undo).
    """

    STATUS_WORDS = {Job.Status.REFUSED: "Refused (nothing imported)"}

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    format = models.CharField(max_length=16, default="auto")
    dry_run = models.BooleanField(default=False)
    files = models.JSONField(default=list, blank=True)  # [{name, path (in default storage), size}]
    # What the project kind's importer needs beyond the files, e.g. the locations seed-query templates expand to.
    options = models.JSONField(default=dict, blank=True)
    records_done = models.PositiveIntegerField(default=0)
    report = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="importjob_project_idx")]

    def __str__(self) -> str:
        return f"Import {self.pk} into {self.project_id}"


class SourceFile(models.Model):
    """A file of an imported release, with what is needed to write it back byte for byte."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="source_files")
    format = models.CharField(max_length=16)
    name = models.CharField(max_length=255)
    role = models.CharField(max_length=16, help_text="base or quality (WiLoVa).")
    position = models.PositiveSmallIntegerField(default=0)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveBigIntegerField()
    formatting = models.JSONField(default=dict, blank=True)  # json.dumps arguments and trailing newline
    reproducible = models.BooleanField(default=True, help_text="Re-encoding the rows gives the original bytes.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["project_id", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="sourcefile_unique_name")]

    def __str__(self) -> str:
        return self.name


class SourceRow(models.Model):
    """One original row, as compact JSON that keeps key order and number types.

    `projection` holds the row's fields as localqa saw them right after the
    import; a writer compares it with the current state and rewrites only the
    fields that changed.
    """

    source_file = models.ForeignKey(SourceFile, on_delete=models.CASCADE, related_name="rows")
    position = models.PositiveIntegerField()
    key = models.TextField()
    pair = models.ForeignKey(PagePair, null=True, blank=True, on_delete=models.SET_NULL, related_name="source_rows")
    raw = models.TextField()
    projection = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["source_file_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["source_file", "position"], name="sourcerow_unique_position"),
            models.CheckConstraint(condition=~Q(raw=""), name="sourcerow_raw_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.source_file_id}[{self.position}] {self.key}"
