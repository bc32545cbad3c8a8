"""Log-in with a brake on password guessing."""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse


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
