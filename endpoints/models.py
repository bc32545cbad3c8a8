"""A project's model endpoints, the record of every call made to one, and the cache of their replies.

`Endpoint` is what a coordinator sets: an OpenAI-compatible server (base URL), the model it serves, chat or
raw completion, decoding settings, a concurrency limit, a timeout and optional prices. Its API key lives
apart, encrypted (`EndpointSecret`, common/secrets.py): it never leaves the server, not even in a project
archive. `ModelCall` is one request as it went (tokens, latency, attempts, status, error, cost), cache hits
included; `CachedReply` is a successful reply kept under the hash of everything that determines it, so the
same request asked again costs nothing. Calls and cached replies keep the model and base URL they were made
with: an endpoint deleted or changed later does not change what was recorded.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

MILLION = Decimal(1_000_000)


class Mode(models.TextChoices):
    CHAT = "chat", "Chat (messages)"
    COMPLETION = "completion", "Raw completion (a prompt, no chat template)"


class Endpoint(models.Model):
    Mode = Mode

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="model_endpoints")
    name = models.CharField(max_length=100, help_text="How people and runs name it in this project.")
    base_url = models.CharField(
        max_length=500, help_text="The server's OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1."
    )
    model = models.CharField(max_length=200, help_text="The model name the server expects.")
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.CHAT)
    # Decoding settings; an empty one is left out of the request (the server's default applies).
    temperature = models.FloatField(null=True, blank=True)
    top_p = models.FloatField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    seed = models.BigIntegerField(null=True, blank=True)
    stop = models.JSONField(default=list, blank=True, help_text="Up to 4 stop sequences.")
    concurrency = models.PositiveSmallIntegerField(default=4, help_text="Requests in flight at once, at most.")
    timeout_seconds = models.PositiveSmallIntegerField(default=60, help_text="Seconds one attempt may take.")
    # Prices per million tokens (any currency, the operator's), both or neither: a call's cost when set.
    price_input = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    price_output = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    version = models.PositiveIntegerField(
        default=1, help_text="Raised by every change: an edit from an older copy is refused."
    )

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="endpoint_name_unique_in_project"),
            models.CheckConstraint(condition=Q(mode__in=["chat", "completion"]), name="endpoint_mode_known"),
            models.CheckConstraint(
                condition=Q(price_input__isnull=True, price_output__isnull=True)
                | Q(price_input__isnull=False, price_output__isnull=False),
                name="endpoint_prices_both_or_neither",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    def decoding(self) -> dict[str, Any]:
        """The decoding settings that are set, as the request carries them."""
        values = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "stop": list(self.stop) or None,
        }
        return {name: value for name, value in values.items() if value is not None}

    def cost(self, tokens_in: int | None, tokens_out: int | None) -> Decimal | None:
        """What a call cost at this endpoint's prices; None without prices or without the server's token counts."""
        if self.price_input is None or self.price_output is None or tokens_in is None or tokens_out is None:
            return None
        return (tokens_in * self.price_input + tokens_out * self.price_output) / MILLION


class EndpointSecret(models.Model):
    """An endpoint's API key, encrypted (common/secrets.py). No row: the endpoint has no key."""

    endpoint = models.OneToOneField(Endpoint, on_delete=models.CASCADE, related_name="secret")
    token = models.TextField(help_text="The Fernet token of the API key.")
    set_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"API key of endpoint {self.endpoint_id}"  # never the key


class ErrorKind(models.TextChoices):
    HOST_REFUSED = "host_refused", "Host not allowed"
    CONNECTION = "connection", "Could not connect"
    TIMEOUT = "timeout", "Timed out"
    RATE_LIMITED = "rate_limited", "Rate limited"
    SERVER = "server", "Server error"
    AUTH = "auth", "Key refused"
    REFUSED = "refused", "Request refused"
    GARBAGE = "garbage", "Reply not understood"
    KEY_UNREADABLE = "key_unreadable", "Stored key unreadable"


class ModelCall(models.Model):
    """One request to a model as it went: answered by the server, from the cache, or failed (with why)."""

    class Status(models.TextChoices):
        OK = "ok", "Answered"
        FAILED = "failed", "Failed"

    ErrorKind = ErrorKind

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="model_calls")
    endpoint = models.ForeignKey(Endpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls")
    endpoint_name = models.CharField(max_length=100)
    model = models.CharField(max_length=200)
    purpose = models.CharField(max_length=40, help_text="What asked: test, generation, judge, seed_draft, ...")
    request_hash = models.CharField(max_length=64, help_text="sha256 of what determines the answer (the cache key).")
    status = models.CharField(max_length=8, choices=Status.choices)
    cached = models.BooleanField(default=False, help_text="Answered from the cache: no request was sent.")
    error_kind = models.CharField(max_length=16, choices=ErrorKind.choices, blank=True)
    error = models.TextField(blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    tokens_in = models.PositiveIntegerField(null=True, blank=True)
    tokens_out = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(default=0, help_text="From the first attempt to the end, waits included.")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Requests sent (0 for a cache hit).")
    cost = models.DecimalField(max_digits=16, decimal_places=8, null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "-created_at", "-id"], name="modelcall_project_time_idx"),
            models.Index(fields=["endpoint", "-created_at"], name="modelcall_endpoint_time_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["ok", "failed"]), name="modelcall_status_known"),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_name} {self.purpose} {self.status} ({self.created_at:%Y-%m-%d %H:%M})"


class CachedReply(models.Model):
    """A successful reply, found again by the hash of its request (base URL, model, mode, prompt or messages,
    decoding settings, variant) within its project."""

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="cached_replies")
    key = models.CharField(max_length=64)
    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200)
    text = models.TextField(blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    tokens_in = models.PositiveIntegerField(null=True, blank=True)
    tokens_out = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "key"], name="cachedreply_key_unique_in_project")]
        indexes = [models.Index(fields=["project", "base_url", "model"], name="cachedreply_model_idx")]

    def __str__(self) -> str:
        return f"{self.model} reply {self.key[:12]}"
