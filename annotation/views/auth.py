"""Log-in with a brake on password guessing, and what the page's scripts need to sign in again mid-edit."""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.views import csrf as csrf_views

from annotation.middleware import is_script_request


def _failure_key(request: HttpRequest) -> str:
    username = request.POST.get("username", "").strip().casefold()
    address = request.META.get("REMOTE_ADDR", "")
    return f"login-failures:{address}:{username}"


class LoginView(auth_views.LoginView):
    """Django's login view; after LOGIN_MAX_FAILURES wrong passwords for a name from one address, wait."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:  # type: ignore[no-untyped-def]
        key = _failure_key(request)
        if cache.get(key, 0) >= settings.LOGIN_MAX_FAILURES:
            form = self.get_form()
            form.errors.clear()
            form.add_error(
                None,
                f"Too many failed attempts for this user name. Try again in {settings.LOGIN_LOCKOUT_MINUTES} minutes.",
            )
            return self.render_to_response(self.get_context_data(form=form), status=429)
        response = super().post(request, *args, **kwargs)
        if request.user.is_authenticated:
            cache.delete(key)
        else:
            cache.add(key, 0, timeout=settings.LOGIN_LOCKOUT_MINUTES * 60)
            cache.incr(key)
        return response


def session_state(request: HttpRequest) -> JsonResponse:
    """Who is signed in, and the CSRF token the page must now send (signing in changes it)."""
    user = request.user
    return JsonResponse(
        {
            "authenticated": user.is_authenticated,
            "username": user.get_username() if user.is_authenticated else None,
            "csrf_token": get_token(request),
        },
        headers={"Cache-Control": "no-store"},
    )


@login_required
def signed_in(request: HttpRequest) -> HttpResponse:
    """Where signing in from another tab ends: says so, and tells the waiting page (storage event)."""
    return render(request, "registration/signed_in.html")


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A stale CSRF token: JSON a script can act on (fetch a new token, send again), the usual page otherwise."""
    if is_script_request(request):
        return JsonResponse(
            {"detail": "The page's security token is out of date; fetch a new one and send again.", "code": "csrf"},
            status=403,
            headers={"HX-Reswap": "none"},
        )
    return csrf_views.csrf_failure(request, reason=reason)
