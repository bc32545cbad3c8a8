"""Signing in, invitations, changing or resetting a password, and what the page's scripts need to sign in again.

Django's own auth views, with our templates (templates/registration/) and one addition each: whoever
sets their own password is no longer made to change it. Password guessing is braked by django-axes, which
watches every `authenticate()` (accounts/signin.py), not here.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm, SetPasswordForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views import csrf as csrf_views
from rest_framework.throttling import ScopedRateThrottle

from accounts import people
from accounts.middleware import MUST_CHANGE_PASSWORD, is_script_request
from accounts.throttles import PASSWORD_RESET_THROTTLES, throttled_for, wait_message
from annotation.models import Membership


class LoginView(auth_views.LoginView):
    """Django's login view; someone whose password another person chose is sent to choose their own."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().post(request, *args, **kwargs)
        if request.user.is_authenticated and people.must_change_password(request.user):
            request.session[MUST_CHANGE_PASSWORD] = True
            target = urlencode({"next": self.get_success_url()})
            return HttpResponseRedirect(f"{reverse('password_change')}?{target}")
        return response


class _SetsOwnPassword:
    def password_set(self, request: HttpRequest, user: Any) -> None:
        people.account_password_set(user=user)
        request.session.pop(MUST_CHANGE_PASSWORD, None)


class PasswordChangeView(_SetsOwnPassword, auth_views.PasswordChangeView):
    throttle_scope = "password"  # the API's brake on guessing the old password (accounts/throttles.py)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        wait = throttled_for(request, self, [ScopedRateThrottle])
        if wait is not None:
            form = self.get_form()
            form.add_error(None, wait_message(wait))
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["forced"] = bool(self.request.session.get(MUST_CHANGE_PASSWORD))
        context["next"] = self._next()
        return context

    def _next(self) -> str:
        target = self.request.POST.get("next") or self.request.GET.get("next") or ""
        if url_has_allowed_host_and_scheme(target, {self.request.get_host()}, self.request.is_secure()):
            return target
        return ""

    def form_valid(self, form: PasswordChangeForm) -> HttpResponse:
        target = self._next()
        response = super().form_valid(form)
        self.password_set(self.request, form.user)
        if target:
            response["Location"] = target
        return response


class PasswordResetView(auth_views.PasswordResetView):
    """Django's, with the API's brakes: reset requests per client address, e-mails per address."""

    throttle_scope = "password_reset"

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        wait = throttled_for(request, self, PASSWORD_RESET_THROTTLES)
        if wait is not None:
            form = self.get_form()
            form.is_valid()
            form.add_error(None, wait_message(wait))
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)


class PasswordResetConfirmView(_SetsOwnPassword, auth_views.PasswordResetConfirmView):
    def form_valid(self, form: SetPasswordForm) -> HttpResponse:
        response = super().form_valid(form)
        self.password_set(self.request, form.user)
        return response


class InvitationAcceptView(_SetsOwnPassword, auth_views.PasswordResetConfirmView):
    """The one-time link of a new person: they choose a password, are signed in, and land on their project."""

    token_generator = people.invitation_tokens
    template_name = "registration/invitation_accept.html"
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"

    def form_valid(self, form: SetPasswordForm) -> HttpResponse:
        response = super().form_valid(form)
        self.password_set(self.request, form.user)
        return response

    def get_success_url(self) -> str:
        membership = (
            Membership.objects.filter(user=self.user, project__deleted_at__isnull=True)
            .select_related("project")
            .order_by("-created_at")
            .first()
        )
        return membership.project.get_absolute_url() if membership is not None else reverse("home")


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
