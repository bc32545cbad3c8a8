"""Someone signed in with a password another person chose sets their own before anything else."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import Resolver404, resolve, reverse
from django.utils.http import urlencode

# Set in the session at sign-in (annotation.views.auth.LoginView), so the check costs no query per request.
MUST_CHANGE_PASSWORD = "localqa_must_change_password"  # noqa: S105 (a session key, not a password)
ALLOWED_URL_NAMES = {"password_change", "password_change_done", "logout", "login"}


class PasswordChangeRequiredMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.session.get(MUST_CHANGE_PASSWORD) and request.user.is_authenticated:
            try:
                name = resolve(request.path_info).url_name
            except Resolver404:
                name = None
            if name not in ALLOWED_URL_NAMES:
                if request.path_info.startswith("/api/"):
                    return JsonResponse({"detail": "Choose your own password first (Change password)."}, status=403)
                return redirect(f"{reverse('password_change')}?{urlencode({'next': request.get_full_path()})}")
        return self.get_response(request)
