"""Stored agreement reports of a project: every statistic, the counts behind it, and the data it came from.

Imported from `review.models`, so Django sees the model as part of the review
app. A report row is the whole truth about one computation: queued by a
button, the API, the command or a burst of new judgments; claimed by one
worker with a conditional update; its progress, error and result live here,
never in the Celery result backend. Reports are kept: the history is the
"alpha over time" chart, and a release cites the report of its data.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Project
from common.jobs import Job


class ReportQuerySet(models.QuerySet["AgreementReport"]):
    def active(self) -> ReportQuerySet:
        return self.filter(status__in=AgreementReport.ACTIVE)

    def done(self) -> ReportQuerySet:
        return self.filter(status=AgreementReport.Status.DONE)


class AgreementReport(Job):
    """A computation job; progress is in percent (`progress_done` of 100)."""

    STATUS_WORDS = {Job.Status.PENDING: "Queued", Job.Status.RUNNING: "Computing"}

    class Trigger(models.TextChoices):
        PAGE = "page", "Button on the agreement page"
        API = "api", "API"
        COMMAND = "command", "Management command"
        AUTO = "auto", "Automatic, after new judgments"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="agreement_reports")
    trigger = models.CharField(max_length=16, choices=Trigger.choices, default=Trigger.PAGE)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    progress_total = models.PositiveBigIntegerField(default=100)
    # The highest judgment id the report saw: "new judgments since the last report" counts above it.
    judgment_watermark = models.BigIntegerField(default=0)
    fingerprint = models.CharField(max_length=80, blank=True, help_text="sha256 of every scope's judgments.")
    # When the data had not changed since an earlier done report, its result is reused and named here.
    same_as = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Per scope: alpha with its interval and counts, for the history chart without loading every result.
    headline = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)

    objects = ReportQuerySet.as_manager()

    class Meta:
        ordering = ["project_id", "-created_at", "-id"]
        constraints = [
            # One report waits or runs per project at a time: a burst of triggers produces one computation.
            models.UniqueConstraint(
                fields=["project"], condition=Q(status__in=["pending", "running"]), name="agreement_report_one_active"
            ),
        ]
        indexes = [models.Index(fields=["project", "status", "-finished_at"], name="agreement_report_done_idx")]

    def __str__(self) -> str:
        return f"Agreement report {self.pk} of {self.project_id}: {self.status}"

    @property
    def progress(self) -> int:
        """Percent done."""
        return int(self.progress_done)
