"""Releases: numbered, immutable snapshots of a project's QA items, and the project's export settings.

A release row is the whole truth about a build: its status and progress while
a worker writes it, its error when it failed, and its files (name, size,
sha256) once published. A published release never changes: the services have
no path that edits one, the API has no update or delete route and the admin
is read-only.

Versions are integers counted per project (1, 2, 3, shown as "v3"); a failed
build keeps its row, for the record, but gives its number back.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse

from annotation.models import Project
from common.jobs import Job

DEFAULT_SPLITS = {"train": 70, "dev": 10, "test": 20}

# The study's prompts: the question, optional context blocks, an instruction to put the answer in tags.
# Each context block says which lead it is, by the project's language names ("Cantonese lead section:").
_ASK = "{question}\n\nPut your final answer inside <answer></answer> tags."
LEGACY_CONTEXT = "Here is some relevant information: {context}\n\n"  # the wording before each lead was named


def _prompt_templates(standard: str, local: str) -> dict[str, str]:
    standard, local = (name.replace("{", "{{").replace("}", "}}") for name in (standard, local))
    standard_block = f"{standard} lead section: {{standard_lead}}\n\n"
    local_block = f"{local} lead section: {{local_lead}}\n\n"
    return {
        "question_only": _ASK,
        "standard_lead": standard_block + _ASK,
        "local_lead": local_block + _ASK,
        "both_leads": standard_block + local_block + _ASK,
    }


# Without a project (the column default, tests): "Standard lead section:", "Local lead section:".
DEFAULT_PROMPT_TEMPLATES = _prompt_templates("Standard", "Local")
LEGACY_PROMPT_TEMPLATES = {
    "question_only": _ASK,
    "standard_lead": LEGACY_CONTEXT.replace("{context}", "{standard_lead}") + _ASK,
    "local_lead": LEGACY_CONTEXT.replace("{context}", "{local_lead}") + _ASK,
    "both_leads": LEGACY_CONTEXT.replace("{context}", "{standard_lead}")
    + LEGACY_CONTEXT.replace("{context}", "{local_lead}")
    + _ASK,
}
PROMPT_FIELDS = ("question", "standard_lead", "local_lead", "standard_title", "local_title")


def default_prompt_templates() -> dict[str, str]:
    return dict(DEFAULT_PROMPT_TEMPLATES)


def project_prompt_templates(project: Project) -> dict[str, str]:
    """The default templates of a project: each lead named by its language ("Mandarin lead section:")."""
    from annotation.languages import UnknownLanguage

    try:
        return _prompt_templates(project.standard.name, project.local.name)
    except UnknownLanguage:
        return default_prompt_templates()


class ReleaseQuerySet(models.QuerySet["Release"]):
    def published(self) -> ReleaseQuerySet:
        return self.filter(status=Release.Status.DONE)

    def in_progress(self) -> ReleaseQuerySet:
        return self.filter(status__in=Release.ACTIVE)


class Release(Job):
    """A build job whose done state is a published release (progress: items written of items to write)."""

    STATUS_WORDS = {Job.Status.RUNNING: "Building", Job.Status.DONE: "Published"}

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="releases")
    version = models.PositiveIntegerField()
    # What goes in: item statuses, splits ({} = no splits) and the seed they are drawn from.
    item_statuses = models.JSONField(default=list)
    splits = models.JSONField(default=dict, blank=True)
    seed = models.PositiveIntegerField()
    changelog = models.TextField(blank=True)
    license = models.CharField(max_length=64)
    schema_version = models.PositiveSmallIntegerField(default=1)
    # Once published: [{name, size, sha256}], counts, the archive directory under MEDIA_ROOT.
    files = models.JSONField(default=list, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    path = models.CharField(max_length=300, blank=True)
    # The zip of the published files, built once when the release is published: {name, size, sha256} of the file
    # in the release's directory ({} for releases published before; a release restored from a project archive has
    # no zip file: both are zipped as they are sent).
    archive = models.JSONField(default=dict, blank=True)
    # What was unfinished when the build read the project ({ready, checked, unfinished: [...]}; exports.readiness).
    readiness = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        ordering = ["project_id", "-version", "-id"]
        constraints = [
            # A failed build gives its number back; every other release holds its number alone.
            models.UniqueConstraint(
                fields=["project", "version"], condition=~Q(status="failed"), name="release_unique_version"
            ),
            # At most one build per project at a time: two requests at once produce one build.
            models.UniqueConstraint(
                fields=["project"], condition=Q(status__in=["pending", "running"]), name="release_one_build"
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="release_version_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.project.slug} v{self.version}"

    def get_absolute_url(self) -> str:
        return reverse("release_detail", args=[self.project.slug, self.version])

    @property
    def label(self) -> str:
        return f"v{self.version}"

    @property
    def is_published(self) -> bool:
        return self.status == self.Status.DONE

    @property
    def split_shares(self) -> list[tuple[str, int]]:
        """(split, percent) in train, dev, test order (the JSON column does not keep key order)."""
        return [(name, self.splits[name]) for name in ("train", "dev", "test") if self.splits.get(name)]

    @property
    def unfinished(self) -> list[dict]:
        return list((self.readiness or {}).get("unfinished") or [])

    def file_entry(self, name: str) -> dict | None:
        return next((entry for entry in self.files if entry["name"] == name), None)


class ExportSettings(models.Model):
    """Per-project export settings: the prompt templates of the context scenarios and the default license."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="export_settings")
    prompt_templates = models.JSONField(default=default_prompt_templates)
    license = models.CharField(max_length=64, default="cc-by-sa-4.0")
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Export settings of {self.project}"
