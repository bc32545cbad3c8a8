"""Signing in through the API, and the person's own API tokens: see them, make one, revoke one or all.

`POST /api/auth/token/` goes through Django's `authenticate()`, so the sign-in lockout (accounts/signin.py)
counts its failures and refuses a locked-out name with 429, like the sign-in form; it is also throttled per
client address (`API_THROTTLE_AUTH`).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from accounts import people, tokens
from accounts.models import ApiToken
from accounts.signin import lockout_message, lockout_username
from common.api import NO_CONTENT, paginated, responses, validated
from common.errors import InvalidInput
from common.requests import SignedInApiRequest


class SignInInput(serializers.Serializer):
    username = serializers.CharField(max_length=150, trim_whitespace=False)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)
    name = serializers.CharField(max_length=100, required=False, allow_blank=True, help_text="Says what it is for.")


class TokenCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=100, required=False, allow_blank=True)


class TokenOutput(serializers.ModelSerializer):
    state = serializers.CharField(read_only=True, help_text="active, expired or revoked")

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "via", "state", "created_at", "expires_at", "last_used_at", "revoked_at"]


class NewTokenOutput(TokenOutput):
    token = serializers.CharField(help_text="The key: shown this once, send it as `Authorization: Token <key>`.")

    class Meta(TokenOutput.Meta):
        fields = ["token", *TokenOutput.Meta.fields]


def _new(token: ApiToken, key: str) -> dict[str, Any]:
    return {**TokenOutput(token).data, "token": key}


class TokenObtainApi(APIView):
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "auth"

    @extend_schema(
        summary="Sign in: a new API token for a username and password (anyone)",
        description="Wrong passwords count towards the sign-in lockout shared with the sign-in form; "
        "a locked-out name gets 429 until the lockout ends. The token expires after API_TOKEN_DAYS.",
        request=SignInInput,
        responses={
            200: NewTokenOutput,
            400: OpenApiResponse(description="Wrong username or password."),
            429: OpenApiResponse(description="Locked out, or too many requests."),
        },
    )
    def post(self, request: Request) -> Response:
        data = validated(SignInInput, request.data)
        # The Django request: the lockout reads and marks it (the DRF wrapper would hide the marks).
        # Spelled as the sign-in form spells it (stripped, NFKC), so both ways of signing in agree on who it is.
        username = lockout_username(request._request, {"username": data["username"]}) or ""
        user = authenticate(request._request, username=username, password=data["password"])
        if getattr(request._request, "axes_locked_out", False):
            return Response({"detail": lockout_message(), "code": "locked_out"}, status=429)
        if user is None:
            raise InvalidInput("Unable to sign in with that username and password.", field="password")
        if people.must_change_password(user):
            raise PermissionDenied("Choose your own password first: sign in on the web page.")
        token, key = tokens.api_token_create(user=user, name=data.get("name", ""), via=ApiToken.Via.SIGN_IN)
        return Response(_new(token, key))


class TokenListApi(APIView):
    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS

    @extend_schema(
        summary="Your API tokens, newest first (signed in)",
        responses=responses({200: TokenOutput(many=True)}, bad_input=False, conflict=False, not_found=False),
    )
    def get(self, request: SignedInApiRequest) -> Response:
        return paginated(self, request, tokens.api_tokens_of(request.user), TokenOutput)

    @extend_schema(
        summary="Make a new API token (signed in)",
        request=TokenCreateInput,
        responses=responses({201: NewTokenOutput}, conflict=False, not_found=False),
    )
    def post(self, request: SignedInApiRequest) -> Response:
        data = validated(TokenCreateInput, request.data)
        token, key = tokens.api_token_create(user=request.user, name=data.get("name", ""), via=ApiToken.Via.PAGE)
        return Response(_new(token, key), status=status.HTTP_201_CREATED)


class TokenRevokeAllApi(APIView):
    @extend_schema(
        summary="Revoke all your API tokens, this one included (signed in)",
        request=None,
        responses=responses({204: NO_CONTENT}, bad_input=False, conflict=False, not_found=False),
    )
    def post(self, request: SignedInApiRequest) -> Response:
        tokens.api_tokens_revoke_all(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenDetailApi(APIView):
    @extend_schema(
        summary="Revoke one of your API tokens (signed in; someone else's is 404)",
        responses=responses({204: NO_CONTENT}, bad_input=False, conflict=False),
    )
    def delete(self, request: SignedInApiRequest, token_id: int) -> Response:
        token = tokens.api_token_of_user(request.user, token_id)
        if token is None:
            raise Http404("No such token.")
        tokens.api_token_revoke(token=token)
        return Response(status=status.HTTP_204_NO_CONTENT)
