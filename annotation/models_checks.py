"""Is it local knowledge? The latest check of an item by a language model (closed-book, then with the standard lead).

A Wikipedia QA item is worth asking only if the knowledge is local. When a project turns the check on (its setting
lives in the evaluation app, which owns the model connection), each save of an item whose question or standard
answer changed asks for a check: the row below becomes a pending job (common/jobs.py) holding the text to check,
and a worker asks the model. Annotation owns the row so that review, the release and the evaluation strata can read
it without depending on the app that runs it. One row per item: a new request replaces the result, while every
call made stays recorded in the endpoint's calls.
"""

from __future__ import annotations

from django.db import models

from common.jobs import Job


class LocalCheckResult(models.TextChoices):
    NONE = "", "Not checked yet"
    NOT_ANSWERED = "not_answered", "The model does not answer it: local knowledge"
    CLOSED_BOOK = "closed_book", "A model answers this without any article"
    STANDARD_LEAD = "standard_lead", "A model answers this from the standard article"


class LocalCheck(Job):
    """One item's local-knowledge check: what was checked, what the model said, and the outcome."""

    STATUS_WORDS = {"pending": "Waiting for the model", "running": "Asking the model", "failed": "Check failed"}
    Result = LocalCheckResult

    item = models.OneToOneField("annotation.QAItem", on_delete=models.CASCADE, related_name="local_check")
    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="local_checks")
    # The text checked (copied when the check was asked for): a result is about this text only.
    question = models.TextField()
    answer = models.TextField(help_text="The standard-language answer the model's answers are compared with.")
    requested_at = models.DateTimeField(help_text="When the save that asked for this check happened.")
    result = models.CharField(max_length=16, choices=LocalCheckResult.choices, blank=True)
    model = models.CharField(max_length=200, blank=True, help_text="The model asked (as its endpoint named it).")
    method = models.CharField(max_length=120, blank=True, help_text="How a model answer was judged right.")
    closed_book_answer = models.TextField(blank=True)
    closed_book_score = models.FloatField(null=True, blank=True)
    lead_answer = models.TextField(blank=True)
    lead_score = models.FloatField(null=True, blank=True)
    failures = models.PositiveSmallIntegerField(default=0, help_text="Failed tries since the check was asked for.")
    retry_at = models.DateTimeField(null=True, blank=True, help_text="When a failed check is tried again (none: not).")

    class Meta:
        indexes = [models.Index(fields=["project", "status"], name="localcheck_project_status_idx")]

    def __str__(self) -> str:
        return f"Local-knowledge check of item {self.item_id}: {self.status} {self.result}"

    @property
    def model_answers(self) -> bool:
        return self.result in (LocalCheckResult.CLOSED_BOOK, LocalCheckResult.STANDARD_LEAD)

    @property
    def shown_answer(self) -> str:
        """The model's answer that was right (or the one with the standard lead when none was)."""
        if self.result == LocalCheckResult.CLOSED_BOOK:
            return self.closed_book_answer
        return self.lead_answer

    def is_current_for(self, question: str, answer: str) -> bool:
        return self.question == question and self.answer == answer
