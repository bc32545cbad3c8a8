"""One brake on password guessing for every way of signing in, through django-axes.

Every `authenticate()` call counts — the sign-in form, `POST /api/auth/token/`, Django's admin — because
axes listens to Django's own login signals; its backend refuses a locked-out name before any password is
checked. A failure is counted for the pair (username, client address), so one address guessing one name is
stopped without letting anyone lock a name for everybody. Counts live in the cache (Redis in production),
which fails open (django-redis with IGNORE_EXCEPTIONS): while Redis is down nothing is counted and nobody is locked out.

The two keys are what Django authenticates and who is really asking:
- the username is NFKC-normalised and stripped as the sign-in form does (`ｖｉｃｔｉｍ２` is `victim2`);
- the address is the client's, read by django-ipware from X-Forwarded-For when TRUSTED_PROXY_COUNT says
  how many proxies of ours stand in front (the shipped nginx: 1), else REMOTE_ADDR. Headers a client sends
  itself are never believed beyond that count.
"""

from __future__ import annotations

import unicodedata
from datetime import timedelta
from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from ipware import get_client_ip


class LockoutBackend(AxesStandaloneBackend):
    """axes' guard, for sign-ins that come with a request (every HTTP one: the form, the token endpoint, the
    admin). A call without a request is code on this server (a shell, the test client's `login`), not a guess
    from outside; axes would refuse it outright, so it is left to the next backend."""

    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, *args, **kwargs)


def lockout_username(request: HttpRequest, credentials: dict[str, Any] | None) -> str | None:
    """The username as Django authenticates it (AuthenticationForm's UsernameField: strip, then NFKC)."""
    raw = (credentials or {}).get("username")
    if raw is None:
        data = getattr(request, "data", None) or request.POST
        raw = data.get("username") if hasattr(data, "get") else None
    if not isinstance(raw, str):
        return None
    return unicodedata.normalize("NFKC", raw.strip())


def client_address(request: HttpRequest) -> str | None:
    """The client's address: from X-Forwarded-For behind TRUSTED_PROXY_COUNT proxies of ours, else REMOTE_ADDR."""
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies:
        # Each proxy of ours appends the address it was reached from; the client is the one our first proxy
        # wrote, `proxies` from the right. Anything further left was written by the client and is ignored.
        address, _ = get_client_ip(
            request,
            proxy_order="left-most",
            proxy_count=proxies - 1,
            request_header_order=["HTTP_X_FORWARDED_FOR"],
            strict=False,
        )
        if address:
            return address
    return request.META.get("REMOTE_ADDR")


def failure_limit(request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
    return int(settings.LOGIN_MAX_FAILURES)


def lockout_time(request: HttpRequest | None = None) -> timedelta:
    return timedelta(minutes=settings.LOGIN_LOCKOUT_MINUTES)


def lockout_message() -> str:
    return f"Too many failed attempts for this user name. Try again in {settings.LOGIN_LOCKOUT_MINUTES} minutes."


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """429: the sign-in form again with the reason (what was typed stays), or JSON for the API."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": lockout_message(), "code": "locked_out"}, status=429)
    # Unbound, with the name typed kept: validating the form again would check the password once more.
    form = AuthenticationForm(request, initial={"username": request.POST.get("username", "")})
    context = {"form": form, "lockout": lockout_message(), "next": request.POST.get("next", "")}
    return render(request, "registration/login.html", context, status=429)
