"""API tokens: many per person, each with a name, an expiry, and a revocation; only a digest is stored."""

from __future__ import annotations

import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone


class ApiToken(models.Model):
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
