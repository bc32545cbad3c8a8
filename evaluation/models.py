"""Evaluation runs: model answers scored against one published release, pinned to its exact files.

A run belongs to one immutable release and records what it read: the version, the sha256 of the release's
`manifest.json` and the sha256 of every file it took gold answers and prompts from. Scoring checks those hashes
again before it reads, so results can never drift from the data they scored. The run is a job (common/jobs.py):
predictions are stored when the upload is accepted, then a worker extracts and scores them with progress.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse

from annotation.models import Project
from common.jobs import Job
from exports.models import Release


class EvaluationRun(Job):
    STATUS_WORDS = {Job.Status.RUNNING: "Scoring", Job.Status.DONE: "Scored"}

    class Source(models.TextChoices):
        PREDICTIONS = "predictions", "Predictions file (JSONL)"
        HARNESS = "harness", "lm-evaluation-harness samples log"
        ENDPOINT = "endpoint", "Generated through a model endpoint"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="evaluation_runs")
    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="evaluation_runs")
    release_version = models.PositiveIntegerField()
    manifest_sha256 = models.CharField(max_length=64)
    # [{name, sha256}] of the release files the run read (the item files its prompts are filled from, or trivia)
    release_files = models.JSONField(default=list)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.PREDICTIONS)
    file_name = models.CharField(max_length=255, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)
    file_size = models.PositiveBigIntegerField(default=0)
    # Generated runs: the endpoint asked (kept by name and model if the endpoint is deleted later), the scenarios
    # whose prompts were sent and how many items per scenario at most (None: all).
    endpoint = models.ForeignKey(
        "endpoints.Endpoint", null=True, blank=True, on_delete=models.SET_NULL, related_name="evaluation_runs"
    )
    endpoint_name = models.CharField(max_length=100, blank=True)
    endpoint_model = models.CharField(max_length=200, blank=True)
    scenarios = models.JSONField(default=list, blank=True)
    # Generated validation runs: the named template each item's question was asked through (evaluation.gold's
    # VALIDATION_TEMPLATES; a validation release ships none). Empty: the release's own templates or prompt files.
    prompt_template = models.CharField(max_length=64, blank=True)
    item_limit = models.PositiveIntegerField(null=True, blank=True)
    bootstrap_draws = models.PositiveIntegerField(default=1000)
    seed = models.PositiveIntegerField(default=20261203)
    # The upload's refused lines [{line, field, reason}] (the first ones) and counts by what was found.
    problems = models.JSONField(default=list, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    # Tidy rows {kind, scenario, model, metric, mode, stratum, value, n, mean, ci_low, ci_high, ...} once scored.
    results = models.JSONField(default=list, blank=True)
    # Each scenario against question only on the same items: {kind, model, scenario, baseline, metric, mode, n,
    # delta, ci_low, ci_high, test, p, p_holm}.
    comparisons = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Evaluation run {self.pk} of {self.project.slug} v{self.release_version}"

    def get_absolute_url(self) -> str:
        return reverse("evaluation_run", args=[self.project.slug, self.pk])


class Prediction(models.Model):
    """One model's answer to one release item under one scenario, what was extracted from it and its scores."""

    class Extraction(models.TextChoices):
        FOUND = "found", "Answer found"
        EMPTY = "empty", "Empty answer"
        NOT_FOUND = "not_found", "No answer found"
        MISSING = "missing", "No prediction for this item"
        ERROR = "error", "The model call failed"

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="predictions")
    item_id = models.CharField(max_length=200, help_text="The release item's stable id.")
    item_kind = models.CharField(max_length=16, help_text="lead, document or trivia: never mixed in one table.")
    scenario = models.CharField(max_length=64)
    model = models.CharField(max_length=200)
    line = models.PositiveIntegerField(null=True, blank=True, help_text="Line of the uploaded file.")
    prediction = models.TextField(blank=True)
    extraction = models.CharField(max_length=16, choices=Extraction.choices, blank=True)
    extracted = models.TextField(blank=True)
    # Multiple choice: the tolerant filter's outcome beside the strict one.
    extraction_tolerant = models.CharField(max_length=16, choices=Extraction.choices, blank=True)
    extracted_tolerant = models.TextField(blank=True)
    scores = models.JSONField(default=dict, blank=True)
    # Generated: the recorded model call (endpoints.ModelCall) and, when it failed, why (scored as an empty answer).
    call_id = models.BigIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["run_id", "model", "scenario", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "model", "scenario", "item_id"], name="prediction_one_per_item")
        ]

    def __str__(self) -> str:
        return f"{self.model} · {self.scenario} · {self.item_id}"


# An LLM judge of a run's answers, and people checking the judge


class Rubric(models.TextChoices):
    """What a judge is asked to say. YES_NO: WiLoVa's protocol (exactly YES or NO). THREE_WAY: as OpenAI's SimpleQA
    grader, exactly CORRECT, INCORRECT or NOT_ATTEMPTED."""

    YES_NO = "yes_no", "YES / NO (WiLoVa)"
    THREE_WAY = "three_way", "Correct / incorrect / not attempted (SimpleQA)"


class JudgePrompt(models.Model):
    """One version of a project's judge prompt. Editing saves a new version; a judgment names the one it used.
    Each version carries its rubric; versions are numbered across rubrics, one sequence per project."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judge_prompts")
    version = models.PositiveIntegerField()
    rubric = models.CharField(max_length=16, choices=Rubric.choices, default=Rubric.YES_NO)
    text = models.TextField(help_text="With {question}, {gold} and {answer}.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["project", "version"], name="judge_prompt_one_per_version"),
        ]

    def __str__(self) -> str:
        return f"Judge prompt v{self.version} ({self.rubric}) of {self.project_id}"


class Judgment(Job):
    """A model endpoint judging every answer of one run under a rubric (a job, resumable item by item)."""

    STATUS_WORDS = {Job.Status.RUNNING: "Judging", Job.Status.DONE: "Judged"}

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="judgments")
    # Kept by name and model if the endpoint is deleted later.
    endpoint = models.ForeignKey(
        "endpoints.Endpoint", null=True, blank=True, on_delete=models.SET_NULL, related_name="judgments"
    )
    endpoint_name = models.CharField(max_length=100)
    endpoint_model = models.CharField(max_length=200)
    prompt = models.ForeignKey(JudgePrompt, on_delete=models.PROTECT, related_name="judgments")
    prompt_version = models.PositiveIntegerField()
    rubric = models.CharField(max_length=16, choices=Rubric.choices, default=Rubric.YES_NO)
    temperature = models.FloatField(default=0.1)
    max_asks = models.PositiveSmallIntegerField(default=10, help_text="Asks per item until it says a rubric's word.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Judgment {self.pk} of run {self.run_id} by {self.endpoint_name}"


class Verdict(models.TextChoices):
    YES = "yes", "YES (correct)"
    NO = "no", "NO (incorrect)"
    CORRECT = "correct", "CORRECT"
    INCORRECT = "incorrect", "INCORRECT"
    NOT_ATTEMPTED = "not_attempted", "NOT_ATTEMPTED"
    UNSCORED = "unscored", "Unscored (none of the rubric's words)"
    ERROR = "error", "The judge call failed"


# The verdicts of each rubric, in the order of its agreement table (a person's check and override offer these)
RUBRIC_VERDICTS: dict[str, tuple[str, ...]] = {
    Rubric.YES_NO: (Verdict.YES, Verdict.NO),
    Rubric.THREE_WAY: (Verdict.CORRECT, Verdict.INCORRECT, Verdict.NOT_ATTEMPTED),
}
PERSON_VERDICTS = [choice for choice in Verdict.choices if choice[0] not in (Verdict.UNSCORED, Verdict.ERROR)]


class JudgeCheckSample(models.Model):
    """One press of *Sample k per scenario* on a judgment: up to k judged items per (kind, model, scenario) cell
    drawn with `seed` among the cell's items not sampled before, queued first for people to check."""

    judgment = models.ForeignKey("Judgment", on_delete=models.CASCADE, related_name="check_samples")
    k = models.PositiveIntegerField()
    seed = models.PositiveBigIntegerField()
    added = models.PositiveIntegerField(default=0)
    # [{kind, model, scenario, eligible, before, added}] per cell: how many could be drawn, were drawn earlier, now
    cells = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judgment_id", "id"]

    def __str__(self) -> str:
        return f"Check sample {self.pk} of judgment {self.judgment_id}: k={self.k}, seed {self.seed}"


class JudgedItem(models.Model):
    """The judge's verdict on one prediction, its raw outputs, and what people said about the same item."""

    Verdict = Verdict

    judgment = models.ForeignKey(Judgment, on_delete=models.CASCADE, related_name="items")
    prediction = models.ForeignKey(Prediction, on_delete=models.CASCADE, related_name="judged")
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    asked = models.BooleanField(
        default=True, help_text="False: no answer to judge, counted NO (three-way: NOT_ATTEMPTED) without a call."
    )
    asks = models.PositiveSmallIntegerField(default=0)
    # The judge's output of every ask, each cut to MAX_OUTPUT characters (model output is hostile text).
    outputs = models.JSONField(default=list, blank=True)
    call_ids = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    # A person's own call on the item (the check of the judge), and a person's override of the judge's verdict.
    human = models.CharField(max_length=16, choices=PERSON_VERDICTS, blank=True)
    human_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    human_at = models.DateTimeField(null=True, blank=True)
    override = models.CharField(max_length=16, choices=PERSON_VERDICTS, blank=True)
    override_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Drawn into a check sample (queued first for people); None: not sampled.
    check_sample = models.ForeignKey(
        JudgeCheckSample, null=True, blank=True, on_delete=models.SET_NULL, related_name="items"
    )

    class Meta:
        ordering = ["judgment_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["judgment", "prediction"], name="judged_item_one_per_prediction"),
        ]

    def __str__(self) -> str:
        return f"{self.judgment_id} · {self.prediction_id}: {self.verdict}"

    @property
    def effective(self) -> str:
        """What counts in the accuracy: a person's override, else the judge's verdict."""
        return self.override or self.verdict


# Is it local knowledge? (evaluation/local_checks.py; the checks themselves are annotation's LocalCheck rows)


class LocalCheckSetting(models.Model):
    """A Wikipedia QA project's local-knowledge check: off by default; on, each saved item is asked of `endpoint`
    closed-book and with the standard lead, and counts as answered when chrF++ reaches `threshold` (or, with a
    `judge`, when the judge says YES)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="local_check_setting")
    enabled = models.BooleanField(default=False)
    endpoint = models.ForeignKey(
        "endpoints.Endpoint", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    threshold = models.FloatField(
        default=0.5, help_text="chrF++ (0 to 1) from which the model's answer counts as the author's answer."
    )
    judge = models.ForeignKey(
        "endpoints.Endpoint",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="A judge endpoint instead of chrF++ (it reads the project's judge prompt).",
    )
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(threshold__gte=0, threshold__lte=1), name="localchecksetting_threshold_0_1"
            ),
        ]

    def __str__(self) -> str:
        return f"Local-knowledge check of {self.project_id} ({'on' if self.enabled else 'off'})"

    @property
    def active(self) -> bool:
        return self.enabled and self.endpoint_id is not None


class GoldFlag(models.Model):
    """A person reading a run's answers said an item's gold looks wrong. The flag itself is the review app's: the
    item's `gold_flagged` event (and, for an accepted item, a new review round); this row keeps which run and
    release the person was reading, so the drill-down shows it and the event can be traced back to the results."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="gold_flags")
    item_id = models.CharField(max_length=200, help_text="The release item's stable id.")
    qa_item = models.ForeignKey("annotation.QAItem", on_delete=models.CASCADE, related_name="gold_flags")
    event = models.OneToOneField("annotation.ItemEvent", on_delete=models.CASCADE, related_name="gold_flag")
    note = models.TextField()
    flagged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["qa_item", "created_at"], name="gold_flag_item_idx")]

    def __str__(self) -> str:
        return f"Gold of {self.item_id} flagged from run {self.run_id}"
