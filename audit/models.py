"""The audit log: who did what, when, to which object of which project.

One row per change, written by `audit.services.record` in the same transaction
as the change. Item status changes and review steps are not copied here: they
are review.ItemEvent rows, and the log's queries read both tables
(`annotation.audit_log.events`), so a coordinator still sees everything in one list.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Action(models.TextChoices):
    PROJECT_CREATED = "project.created", "Project created"
    PROJECT_SETTINGS = "project.settings_changed", "Project settings changed"
    PROJECT_REVIEW_SETTINGS = "project.review_settings_changed", "Review settings changed"
    PROJECT_EXPORT_SETTINGS = "project.export_settings_changed", "Export settings changed"
    PROJECT_DELETED = "project.deleted", "Project deleted"
    PROJECT_RESTORED = "project.restored", "Project restored"
    PROJECT_PURGED = "project.purged", "Project purged for good"
    MEMBER_ADDED = "member.added", "Member added"
    MEMBER_ROLES = "member.roles_changed", "Member roles changed"
    MEMBER_REMOVED = "member.removed", "Member removed"
    MEMBER_LANGUAGES = "member.languages_changed", "Reviewer languages changed"
    MEMBER_DEACTIVATED = "member.deactivated", "Member deactivated"
    MEMBER_REACTIVATED = "member.reactivated", "Member reactivated"
    ACCOUNT_CREATED = "account.created", "Account created"
    ACCOUNT_ACCESS_ISSUED = "account.access_issued", "New invitation link or initial password issued"
    ACCOUNT_PASSWORD_SET = "account.password_set", "Password set by its owner"
    ACCOUNT_DEACTIVATED = "account.deactivated", "Account deactivated"
    ACCOUNT_REACTIVATED = "account.reactivated", "Account reactivated"
    PAIR_SCREENED = "pair.screened", "Pair screened"
    PAIR_SUBMITTED = "pair.submitted", "Pair submitted"
    PAIR_GIVEN_BACK = "pair.given_back", "Pair given back to the queue"
    PAIR_SKIP_UNDONE = "pair.skip_undone", "Skip of a pair taken back"
    PAIR_DELETED = "pair.deleted", "Pair deleted"
    PAIR_RESTORED = "pair.restored", "Pair restored"
    PAIR_PURGED = "pair.purged", "Pair purged for good"
    ITEM_DELETED = "item.deleted", "Item deleted"
    ITEM_RESTORED = "item.restored", "Item restored"
    ITEM_PURGED = "item.purged", "Item purged for good"
    LABEL_SET = "label.set", "Label set"
    LABEL_AGREED = "label.agreed", "Final label by agreement"
    LABEL_ADJUDICATED = "label.adjudicated", "Label adjudicated"
    RELEASE_REQUESTED = "release.requested", "Release requested"
    RELEASE_REBUILT = "release.rebuilt", "Release build retried"
    RELEASE_PUBLISHED = "release.published", "Release published"
    RELEASE_FAILED = "release.failed", "Release failed"
    RELEASE_CANCELLED = "release.cancelled", "Release cancelled"
    ARCHIVE_EXPORT_REQUESTED = "archive.export_requested", "Project archive requested"
    ARCHIVE_EXPORTED = "archive.exported", "Project archive written"
    ARCHIVE_IMPORTED = "archive.imported", "Project imported from an archive"
    IMPORT_STARTED = "import.started", "Import started"
    IMPORT_FINISHED = "import.finished", "Import finished"
    COLLECTION_STARTED = "collection.started", "Wikipedia collection started"
    COLLECTION_CANCELLED = "collection.cancelled", "Wikipedia collection cancelled"
    COLLECTION_RESUMED = "collection.resumed", "Wikipedia collection resumed"
    TRIVIA_TRANSLATED = "trivia.translated", "Trivia item translated"
    TRIVIA_RESOLVED = "trivia.resolved", "Tagged translation resolved"
    ENTITY_CORRECTED = "entity.corrected", "Entity value corrected"
    ENTITY_QUESTIONS_GENERATED = "entity.questions_generated", "Entity questions generated"
    VALIDATION_FINAL_ANSWER = "validation.final_answer_chosen", "Final answer chosen"
    VALIDATION_MERGED = "validation.duplicate_merged", "Duplicate merged"
    VALIDATION_DOMAIN_LABELLED = "validation.domain_labelled", "Source domain labelled"
    VALIDATION_DOMAIN_RELABELLED = "validation.domain_relabelled", "Source domain label changed"
    VALIDATION_SEED_ADDED = "validation.seed_query_added", "Seed query written"
    SEARCH_KEY_SET = "search.key_set", "Search API key set"
    SEARCH_KEY_REMOVED = "search.key_removed", "Search API key removed"
    SEARCH_STARTED = "search.started", "Search collection started"
    SEARCH_CANCELLED = "search.cancelled", "Search collection cancelled"
    SEARCH_RESUMED = "search.resumed", "Search collection resumed"
    ENDPOINT_CREATED = "endpoint.created", "Model endpoint added"
    ENDPOINT_CHANGED = "endpoint.changed", "Model endpoint changed"
    ENDPOINT_DELETED = "endpoint.deleted", "Model endpoint deleted"
    ENDPOINT_CACHE_CLEARED = "endpoint.cache_cleared", "Model endpoint's cached replies forgotten"


class AuditEvent(models.Model):
    project = models.ForeignKey(
        "annotation.Project", null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_events"
    )  # kept (without the project) when a superuser purges the project, so the purge itself stays on record
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_events"
    )  # empty: the system (a worker, a command without a user)
    # One of Action (checked by audit.services.record); not a `choices` field, so that a new action
    # needs no migration.
    action = models.CharField(max_length=48)
    object_type = models.CharField(max_length=24)
    object_id = models.BigIntegerField(null=True, blank=True)
    object_label = models.CharField(max_length=200, blank=True, help_text="What the object was called then.")
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "-created_at", "-id"], name="audit_project_time_idx"),
            models.Index(fields=["project", "actor", "-created_at"], name="audit_project_actor_idx"),
            models.Index(fields=["project", "action", "-created_at"], name="audit_project_action_idx"),
            models.Index(fields=["project", "object_type", "object_id"], name="audit_project_object_idx"),
            models.Index(fields=["-created_at", "-id"], name="audit_time_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.object_type} {self.object_id}"
