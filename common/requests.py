"""Requests whose user has signed in, for the type checker.

Every project page is behind `login_required` and every API route behind `IsAuthenticated`, so the view
body only ever sees a `User`, never an `AnonymousUser`. Annotating the view's request with these types
says so once, instead of a cast or an `assert` in each view.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails
from rest_framework.request import Request


class SignedInRequest(HttpRequest):
    user: User
    htmx: HtmxDetails  # set by django-htmx's middleware on every request


class SignedInApiRequest(Request):
    user: User
