"""Requests made by the page's scripts (htmx, fetch) get answers a script can act on, never a sign-in page; and
someone signed in with a password another person chose sets their own before anything else."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, resolve_url
from django.urls import Resolver404, resolve, reverse
from django.utils.http import url_has_allowed_host_and_scheme

# Set in the session at sign-in (accounts.views.auth.LoginView), so the check costs no query per request.
MUST_CHANGE_PASSWORD = "localqa_must_change_password"  # noqa: S105 (a session key, not a password)
ALLOWED_URL_NAMES = {"password_change", "password_change_done", "logout", "login"}
SCRIPT_FETCH_MODES = {"cors", "same-origin", "no-cors"}  # Sec-Fetch-Mode of fetch/XHR; a page load is "navigate"


def is_script_request(request: HttpRequest) -> bool:
    """An htmx request, or a fetch/XHR (its Sec-Fetch-Mode is not a navigation), or one asking for JSON."""
    headers = request.headers
    return (
        headers.get("HX-Request") == "true"
        or headers.get("Sec-Fetch-Mode", "") in SCRIPT_FETCH_MODES
        or "application/json" in headers.get("Accept", "")
    )


def not_signed_in(request: HttpRequest) -> JsonResponse:
    response = JsonResponse(
        {
            "detail": "You are signed out. Nothing was saved; sign in again and it will be.",
            "code": "not_authenticated",
            "login_url": resolve_url(settings.LOGIN_URL),
        },
        status=401,
    )
    response["WWW-Authenticate"] = 'Session realm="localqa"'
    response["HX-Reswap"] = "none"  # htmx must not swap this into the fragment it asked for
    return response


def back_after_sign_in(request: HttpRequest) -> HttpResponseRedirect:
    """A plain form posted while signed out: sign in, then back to the page the form was on.

    `next` pointing at the POST-only address would end, after signing in, on a GET it refuses (405).
    """
    referer = request.headers.get("Referer", "")
    allowed = url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    parts = urlsplit(referer)
    back = (parts.path + (f"?{parts.query}" if parts.query else "")) if allowed and parts.path else "/"
    return HttpResponseRedirect(f"{resolve_url(settings.LOGIN_URL)}?{urlencode({REDIRECT_FIELD_NAME: back})}")


class ScriptAuthMiddleware:
    """Turn the sign-in redirect of `login_required` into 401 JSON for script requests.

    Followed by a script, that redirect would put the whole sign-in page into a fragment
    of the page (and its autofocus would take the annotator's keystrokes). For a plain
    form posted while signed out, signing in leads back to the form's page.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code == 302
            and not request.user.is_authenticated
            and urlsplit(response.get("Location", "")).path == resolve_url(settings.LOGIN_URL)
        ):
            if is_script_request(request):
                return not_signed_in(request)
            if request.method == "POST":
                return back_after_sign_in(request)
        return response


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
