"""The person's own API tokens: see them, make one (its key shown once), revoke one or all."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts import tokens
from accounts.models import ApiToken
from common.errors import ServiceError
from common.requests import SignedInRequest


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, required=False, label="What it is for", help_text="e.g. nightly export script"
    )


@login_required
def api_tokens_page(request: SignedInRequest) -> HttpResponse:
    form = TokenForm(request.POST or None)
    new_key = None
    if request.method == "POST" and form.is_valid():
        try:
            _token, new_key = tokens.api_token_create(
                user=request.user, name=form.cleaned_data["name"], via=ApiToken.Via.PAGE
            )
        except ServiceError as error:
            form.add_error("name", error.message)
        else:
            form = TokenForm()
    context = {
        "form": form,
        "new_key": new_key,
        "tokens": tokens.api_tokens_of(request.user)[:200],
        "days": settings.API_TOKEN_DAYS,
    }
    response = render(request, "accounts/api_tokens.html", context)
    response["Cache-Control"] = "no-store"  # the new key is on this page once; no cache keeps it
    return response


@login_required
@require_POST
def api_token_revoke(request: SignedInRequest, token_id: int) -> HttpResponse:
    token = tokens.api_token_of_user(request.user, token_id)
    if token is None:
        raise Http404("No such token.")
    tokens.api_token_revoke(token=token)
    messages.success(request, f"Token {token.prefix}… revoked: it no longer signs anyone in.")
    return redirect("api_tokens_page")


@login_required
@require_POST
def api_tokens_revoke_all(request: SignedInRequest) -> HttpResponse:
    count = tokens.api_tokens_revoke_all(user=request.user)
    messages.success(request, f"{count} token{'s' if count != 1 else ''} revoked.")
    return redirect("api_tokens_page")
