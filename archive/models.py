"""A project archive job: one export of a project into a file, or one import of a file into a new project.

The row is the whole truth about the job: status, progress (rows written or read out of the total), the
archive file (under MEDIA_ROOT), its sha256, counts per model, and the error that stopped it. A worker claims
the row with a conditional update; one whose heartbeat went stale (worker killed) is taken over.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class ProjectArchive(models.Model):
    class Kind(models.TextChoices):
        EXPORT = "export", "Export"
        IMPORT = "import", "Import"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    ACTIVE = (Status.PENDING, Status.RUNNING)

    kind = models.CharField(max_length=8, choices=Kind.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    # Export: the project archived. Import: the project created, once done.
    project = models.ForeignKey(
        "annotation.Project", null=True, blank=True, on_delete=models.SET_NULL, related_name="archives"
    )
    slug = models.SlugField(max_length=60, help_text="Export: the project's slug. Import: the slug asked for.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    path = models.CharField(max_length=300, blank=True, help_text="The archive file, relative to MEDIA_ROOT.")
    original_name = models.CharField(max_length=255, blank=True, help_text="Import: the uploaded file's name.")
    size = models.PositiveBigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)
    progress_done = models.PositiveBigIntegerField(default=0)
    progress_total = models.PositiveBigIntegerField(default=0)
    stage = models.CharField(max_length=200, blank=True, help_text="What the worker is doing now.")
    counts = models.JSONField(default=dict, blank=True)  # rows per model, users matched and created
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["kind", "project", "-created_at"], name="archive_kind_project_idx")]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=["export", "import"]), name="archive_kind_known"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.pk} of {self.slug}: {self.status}"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def is_done(self) -> bool:
        return self.status == self.Status.DONE

    @property
    def percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        if not self.progress_total:
            return 0
        return min(99, int(100 * self.progress_done / self.progress_total))

    @property
    def file_name(self) -> str:
        stamp = self.created_at.strftime("%Y%m%d-%H%M%S")
        return f"{self.slug}-{stamp}.localqa.zip"
