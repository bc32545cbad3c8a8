"""A project archive job: one export of a project into a file, or one import of a file into a new project.

The row is the whole truth about the job: status, progress (rows written or read out of the total), the
archive file (under MEDIA_ROOT), its sha256, counts per model, and the error that stopped it. A worker claims
the row with a conditional update; one whose heartbeat went stale (worker killed) is taken over.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from common.jobs import Job


class ProjectArchive(Job):
    class Kind(models.TextChoices):
        EXPORT = "export", "Export"
        IMPORT = "import", "Import"

    kind = models.CharField(max_length=8, choices=Kind.choices)
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
    counts = models.JSONField(default=dict, blank=True)  # rows per model, users matched and created

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["kind", "project", "-created_at"], name="archive_kind_project_idx")]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=["export", "import"]), name="archive_kind_known"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.pk} of {self.slug}: {self.status}"

    @property
    def file_name(self) -> str:
        stamp = self.created_at.strftime("%Y%m%d-%H%M%S")
        return f"{self.slug}-{stamp}.localqa.zip"
