"""API tokens: issued on sign-in through the API or on the tokens page, listed, revoked, expiring.

A key is shown once, when it is made; the table keeps its sha256. Tokens live `API_TOKEN_DAYS` days (0: no
expiry). Signing out of the browser does not revoke them: they exist for scripts that run without a browser
session. People see theirs on the tokens page (and `GET /api/auth/tokens/`), and revoke one or all there; a
person made inactive loses them all at once (authentication refuses inactive accounts).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import OperationalError
from django.db.models import QuerySet
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from accounts.models import ApiToken
from common.errors import InvalidInput

LAST_USED_EVERY = timedelta(minutes=1)  # last_used_at is written at most this often per token

logger = logging.getLogger(__name__)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_token_create(*, user: User, name: str = "", via: str = ApiToken.Via.SIGN_IN) -> tuple[ApiToken, str]:
    """A new token for `user`; returns it and its key (the only time the key is known)."""
    name = name.strip()
    if len(name) > 100:
        raise InvalidInput("name: at most 100 characters.", field="name")
    key = secrets.token_hex(20)
    days = settings.API_TOKEN_DAYS
    token = ApiToken.objects.create(
        user=user,
        digest=_digest(key),
        prefix=key[:8],
        name=name,
        via=via,
        expires_at=timezone.now() + timedelta(days=days) if days else None,
    )
    return token, key


def api_tokens_of(user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user)


def api_token_of_user(user: User, token_id: int) -> ApiToken | None:
    """One of the person's own tokens (None for someone else's: it does not exist for them)."""
    return ApiToken.objects.filter(user=user, pk=token_id).first()


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        token.refresh_from_db(fields=["revoked_at"])
    return token


def api_tokens_revoke_all(*, user: User, keep: ApiToken | None = None) -> int:
    """Revoke every live token of the person (but `keep`); returns how many."""
    live = ApiToken.objects.filter(user=user, revoked_at__isnull=True)
    if keep is not None:
        live = live.exclude(pk=keep.pk)
    return live.update(revoked_at=timezone.now())


def api_token_user(key: str) -> tuple[User, ApiToken] | None:
    """The person a key signs in, if the token is live and the person active; else None."""
    try:
        token = ApiToken.objects.select_related("user").get(digest=_digest(key))
    except ApiToken.DoesNotExist:
        return None
    now = timezone.now()
    if not token.is_live(now) or not token.user.is_active:
        return None
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_EVERY:
        try:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        except OperationalError:
            # The embedded SQLite has one writer: while a long job (a 100,000-pair import) holds it past the busy
            # timeout, a read-only request must not fail for want of this stamp; a later request writes it.
            logger.info("Token %s: last use not recorded, the database is busy", token.prefix)
    return token.user, token


class ExpiringTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>` against ApiToken: revoked or expired keys are refused like unknown ones."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        found = api_token_user(key)
        if found is None:
            raise exceptions.AuthenticationFailed("Invalid, expired or revoked token.")
        return found
