"""Secrets kept in the database (a model endpoint's API key), encrypted at rest with Fernet.

`secret_encrypt` and `secret_decrypt` are the one way in and out. The keys come from `settings.ENCRYPTION_KEYS`
(comma-separated Fernet keys): the first encrypts, every one decrypts (`MultiFernet`), so an operator rotates by
listing a new key first, re-encrypting what is stored (`secret_rotate`, through `manage.py endpoint rotate-keys`),
then dropping the old key. With DEBUG on and no key set, one derived from SECRET_KEY stands in, so the embedded
default works out of the box; settings refuse to start without keys when DEBUG is off.

A value that no key opens (an archive from another server, a key dropped too early) raises `SecretUnreadable`,
whose message names the cause and never the value.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

DERIVED_KEY_CONTEXT = b"localqa development secrets key:"


class SecretUnreadable(Exception):
    """A stored secret that none of the configured keys decrypts."""


def _fernet() -> MultiFernet:
    keys: list[str | bytes] = list(settings.ENCRYPTION_KEYS)
    if not keys:
        # Development only (settings refuse DEBUG off without keys): derived, so it survives restarts.
        digest = hashlib.sha256(DERIVED_KEY_CONTEXT + settings.SECRET_KEY.encode()).digest()
        keys = [base64.urlsafe_b64encode(digest)]
    return MultiFernet([Fernet(key) for key in keys])


def secret_encrypt(*, plain: str) -> str:
    """The Fernet token of `plain` under the first key (ASCII text, safe to store)."""
    return _fernet().encrypt(plain.encode()).decode("ascii")


def secret_decrypt(*, token: str) -> str:
    try:
        return _fernet().decrypt(token.encode("ascii")).decode()
    except (InvalidToken, UnicodeError):
        raise SecretUnreadable(
            "The stored secret cannot be decrypted with this server's ENCRYPTION_KEYS (was it stored on another "
            "server, or was its key removed?): set it again."
        ) from None


def secret_rotate(*, token: str) -> str:
    """The token re-encrypted under the first key (SecretUnreadable if no key opens it)."""
    try:
        return _fernet().rotate(token.encode("ascii")).decode("ascii")
    except (InvalidToken, UnicodeError):
        raise SecretUnreadable("A stored secret cannot be decrypted with any of ENCRYPTION_KEYS.") from None


# Stores of secrets outside the endpoints app (a validation project's search key) register a rotator here, from
# their app's ready(), so that `manage.py endpoint rotate-keys` re-encrypts them too: it returns how many it
# re-encrypted and, in words, the secrets no configured key opens.
SecretRotator = Callable[[], tuple[int, list[str]]]
SECRET_ROTATORS: dict[str, SecretRotator] = {}


def secret_rotator_register(name: str, rotator: SecretRotator) -> None:
    SECRET_ROTATORS[name] = rotator
