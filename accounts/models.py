"""What localqa keeps about people beyond Django's user: their account, and their API tokens.

Both tables were made while these models lived in `annotation` and keep their names (`db_table`); the move was
a state-only migration (accounts/migrations/0001_initial.py), so no row was copied.
"""

from __future__ import annotations

import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone


class Account(models.Model):
    """What localqa keeps about a person beyond Django's user: whether they must choose a new password."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="account")
    must_change_password = models.BooleanField(
        default=False, help_text="Set when someone else chose the password; cleared when the person sets their own."
    )
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The project whose coordinator made the account: only that project may hand it a new link or password,
    # and only while nobody has used it (accounts.people.person_access_issue). Empty: made elsewhere.
    created_in = models.ForeignKey(
        "annotation.Project", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    password_set_at = models.DateTimeField(null=True, blank=True, help_text="When the person last chose a password.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "annotation_account"

    def __str__(self) -> str:
        return f"account of {self.user}"


class ApiToken(models.Model):
    """Many per person, each with a name, an expiry, and a revocation; only a digest is stored."""

    class Via(models.TextChoices):
        SIGN_IN = "sign_in", "Signed in through the API"
        PAGE = "page", "Created on the tokens page"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    # sha256 of the key: a copy of the table (a backup, an archive) does not hand out working keys.
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8, help_text="The key's first characters, to tell tokens apart.")
    name = models.CharField(max_length=100, blank=True)
    via = models.CharField(max_length=16, choices=Via.choices, default=Via.SIGN_IN)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: never (API_TOKEN_DAYS=0).")
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "annotation_apitoken"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "-created_at"], name="apitoken_user_idx")]

    def __str__(self) -> str:
        return f"{self.prefix}… of {self.user_id}"

    def is_live(self, now: datetime.datetime | None = None) -> bool:
        now = now or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    @property
    def state(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        return "active" if self.is_live() else "expired"
