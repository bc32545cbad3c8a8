"""Signing in (with a brake on password guessing), invitations, and changing or resetting a password.

Django's own auth views, with our templates (templates/registration/) and one addition each: whoever
sets their own password is no longer made to change it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode

from annotation import people
from annotation.middleware import MUST_CHANGE_PASSWORD
from annotation.models import Membership


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
            if people.must_change_password(request.user):
                request.session[MUST_CHANGE_PASSWORD] = True
                target = urlencode({"next": self.get_success_url()})
                return HttpResponseRedirect(f"{reverse('password_change')}?{target}")
        else:
            cache.add(key, 0, timeout=settings.LOGIN_LOCKOUT_MINUTES * 60)
            cache.incr(key)
        return response


class _SetsOwnPassword:
    def password_set(self, request: HttpRequest, user: Any) -> None:
        people.account_password_set(user=user)
        request.session.pop(MUST_CHANGE_PASSWORD, None)


class PasswordChangeView(_SetsOwnPassword, auth_views.PasswordChangeView):
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

    def form_valid(self, form):  # type: ignore[no-untyped-def]
        target = self._next()
        response = super().form_valid(form)
        self.password_set(self.request, form.user)
        if target:
            response["Location"] = target
        return response


class PasswordResetConfirmView(_SetsOwnPassword, auth_views.PasswordResetConfirmView):
    def form_valid(self, form):  # type: ignore[no-untyped-def]
        response = super().form_valid(form)
        self.password_set(self.request, form.user)
        return response


class InvitationAcceptView(_SetsOwnPassword, auth_views.PasswordResetConfirmView):
    """The one-time link of a new person: they choose a password, are signed in, and land on their project."""

    token_generator = people.invitation_tokens
    template_name = "registration/invitation_accept.html"
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"

    def form_valid(self, form):  # type: ignore[no-untyped-def]
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
