"""Brakes around passwords, as DRF throttle classes (rates in REST_FRAMEWORK's DEFAULT_THROTTLE_RATES, counts in
the cache), used by the API views and by the matching pages alike:

- `password`: changing one's own password, per person (a stolen session guessing `old_password`);
- `password_reset`: reset requests per client address;
- `password_reset_address`: reset e-mails per e-mail address, whoever asks (nobody floods one mailbox from many
  addresses). It counts whether or not an account has the address, so it tells nothing about accounts.
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Any

from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle


class PasswordResetAddressThrottle(SimpleRateThrottle):
    scope = "password_reset_address"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        data: Any = getattr(request, "data", None)
        raw = (data if hasattr(data, "get") else request.POST).get("email")
        if not isinstance(raw, str) or not raw.strip():
            return None  # nothing to send to: the request is refused as bad input anyway
        address = unicodedata.normalize("NFKC", raw).strip().casefold()
        return self.cache_format % {"scope": self.scope, "ident": hashlib.sha256(address.encode()).hexdigest()}


PASSWORD_RESET_THROTTLES = [ScopedRateThrottle, PasswordResetAddressThrottle]


def throttled_for(request: Any, view: Any, throttles: list[type[SimpleRateThrottle]]) -> float | None:
    """For a page (a Django HttpRequest; the throttles read only its META, user and POST): None when every
    throttle lets the request through, else the seconds to wait (as DRF would)."""
    waits = []
    for throttle_class in throttles:
        throttle = throttle_class()
        if not throttle.allow_request(request, view):
            waits.append(throttle.wait() or 0)
    return max(waits) if waits else None


def wait_message(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return f"Too many attempts; try again in {minutes} minute{'s' if minutes != 1 else ''}."
