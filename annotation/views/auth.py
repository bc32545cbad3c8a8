"""What the page's scripts need to sign in again mid-edit. (Signing in itself is Django's view behind django-axes.)"""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.views import csrf as csrf_views

from annotation.middleware import is_script_request


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
