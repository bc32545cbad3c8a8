"""The people API: add people (one, or a CSV), new invitation links, deactivation, passwords.

The same services as the Members page (accounts.people); the invitation link and the initial
password are in the response of the call that made them, and nowhere else.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model, password_validation, update_session_auth_hash
from django.contrib.auth.forms import PasswordResetForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from accounts import people
from accounts.models import ApiToken
from accounts.throttles import PASSWORD_RESET_THROTTLES
from annotation import access
from annotation.models import Membership, Project, Role
from annotation.serializers import MembershipCreateInput, MembershipOutput, MembershipRolesInput
from annotation.services.members import membership_remove, membership_set
from common.api import BAD_INPUT, NO_CONTENT, responses, validated
from common.errors import InvalidInput
from common.requests import SignedInApiRequest

ACCESS = serializers.ChoiceField(
    choices=people.ACCESS_CHOICES, default=people.INVITATION, help_text="What a new account gets to sign in with."
)


class PersonInput(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    email = serializers.CharField(max_length=254, required=False, allow_blank=True)
    name = serializers.CharField(max_length=150, required=False, allow_blank=True)
    roles = serializers.ListField(child=serializers.ChoiceField(choices=Role.choices), allow_empty=True)
    languages = serializers.ListField(
        child=serializers.CharField(max_length=8), required=False, help_text="ISO 639-3 codes the person reads."
    )
    access = ACCESS


class PeopleCsvInput(serializers.Serializer):
    file = serializers.FileField(help_text="CSV: username,email,name,roles,languages; lists in a cell separated by ;")
    access = ACCESS


class AccessInput(serializers.Serializer):
    access = ACCESS


class PersonAddedOutput(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    created = serializers.BooleanField(help_text="A new account; false when an existing one got the membership.")
    roles = serializers.ListField(child=serializers.CharField(), source="membership.roles")
    access = serializers.CharField(allow_null=True)
    invitation_url = serializers.SerializerMethodField(help_text="One-time link (shown once), or null.")
    password = serializers.CharField(allow_blank=True, help_text="Initial password (shown once), or empty.")
    emailed = serializers.BooleanField(help_text="The invitation link was also e-mailed to the person.")

    def get_invitation_url(self, result: people.PersonAdded) -> str | None:
        request = self.context["request"]
        return request.build_absolute_uri(result.invitation_path) if result.invitation_path else None


class PeopleAddedOutput(serializers.Serializer):
    people = PersonAddedOutput(many=True)


class AccountOutput(serializers.Serializer):
    username = serializers.CharField()
    is_active = serializers.BooleanField()


class PasswordChangeInput(serializers.Serializer):
    old_password = serializers.CharField(trim_whitespace=False)
    new_password = serializers.CharField(trim_whitespace=False)


class PasswordResetInput(serializers.Serializer):
    email = serializers.EmailField()


def _sent(request: SignedInApiRequest, project: Project, results: list[people.PersonAdded]) -> list[people.PersonAdded]:
    for result in results:
        if result.invitation_path:
            people.invitation_send(
                result=result, project=project, url=request.build_absolute_uri(result.invitation_path)
            )
    return results


def _membership(project: Project, username: str) -> Membership:
    membership = (  # deactivated members too: their roles can change, and they can be removed
        Membership.all_objects.select_related("user").filter(project=project, user__username=username).first()
    )
    if membership is None:
        raise Http404("No such member of this project.")
    return membership


def _member(project: Project, username: str) -> Any:
    return _membership(project, username).user


class PeopleApi(APIView):
    @extend_schema(
        summary="Add a person (coordinator): a new account with an invitation link or initial password, "
        "or an existing account (same username or e-mail) as a member",
        request=PersonInput,
        responses=responses({201: PersonAddedOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        data = validated(PersonInput, request.data)
        choice = data.pop("access")
        result = people.person_add(project=project, actor=request.user, values=data, access=choice)
        _sent(request, project, [result])
        return Response(PersonAddedOutput(result, context={"request": request}).data, status=status.HTTP_201_CREATED)


class PeopleImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        summary="Add everyone of a CSV (coordinator), or nobody: problems come back as details['row 3.email']",
        request={"multipart/form-data": PeopleCsvInput},
        responses=responses({201: PeopleAddedOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        data = validated(PeopleCsvInput, request.data)
        results = people.people_import_csv(
            project=project, actor=request.user, data=data["file"].read(), access=data["access"]
        )
        _sent(request, project, results)
        output = PeopleAddedOutput({"people": results}, context={"request": request})
        return Response(output.data, status=status.HTTP_201_CREATED)


class MemberDeactivateApi(APIView):
    @extend_schema(
        summary="Deactivate a member (coordinator): out of queues and the project; their work stays",
        request=None,
        responses=responses({200: MembershipOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, username: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        membership = people.membership_deactivate(project=project, user=_member(project, username), actor=request.user)
        return Response(MembershipOutput(membership).data)


class MemberReactivateApi(APIView):
    @extend_schema(
        summary="Reactivate a deactivated member (coordinator)",
        request=None,
        responses=responses({200: MembershipOutput}, bad_input=False, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str, username: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        membership = people.membership_reactivate(project=project, user=_member(project, username), actor=request.user)
        return Response(MembershipOutput(membership).data)


class MemberAccessApi(APIView):
    @extend_schema(
        summary="A new invitation link or initial password (coordinator), for an account this project made "
        "and nobody has used yet",
        request=AccessInput,
        responses=responses({200: PersonAddedOutput}),
    )
    def post(self, request: SignedInApiRequest, slug: str, username: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        data = validated(AccessInput, request.data)
        result = people.person_access_issue(
            project=project, actor=request.user, user=_member(project, username), access=data["access"]
        )
        _sent(request, project, [result])
        return Response(PersonAddedOutput(result, context={"request": request}).data)


class AccountActiveApi(APIView):
    active = True

    @extend_schema(
        summary="Deactivate or reactivate an account (superuser): no sign-in, no API; every row it made stays",
        request=None,
        responses=responses({200: AccountOutput}, bad_input=False),
    )
    def post(self, request: SignedInApiRequest, username: str) -> Response:
        if not request.user.is_superuser:
            raise PermissionDenied("Only a superuser may deactivate or reactivate an account.")
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise Http404("No such account.")
        if self.active:
            people.account_reactivate(user=user, actor=request.user)
        else:
            people.account_deactivate(user=user, actor=request.user)
        return Response(AccountOutput(user).data)


class PasswordChangedOutput(serializers.Serializer):
    detail = serializers.CharField()
    tokens_revoked = serializers.IntegerField(
        help_text="Your other API tokens, revoked by the change (the one this call came with keeps working)."
    )


class PasswordChangeApi(APIView):
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "password"  # per person: a stolen session guessing old_password

    @extend_schema(
        summary="Change your own password: your other API tokens are revoked and other sessions signed out",
        request=PasswordChangeInput,
        responses=responses({200: PasswordChangedOutput}, conflict=False, not_found=False),
    )
    def post(self, request: SignedInApiRequest) -> Response:
        if not request.user.is_authenticated:
            raise PermissionDenied("Sign in first.")
        data = validated(PasswordChangeInput, request.data)
        user = request.user
        if not user.check_password(data["old_password"]):
            raise InvalidInput("old_password: this is not your current password.", field="old_password")
        try:
            password_validation.validate_password(data["new_password"], user)
        except ValidationError as error:
            raise InvalidInput(
                f"new_password: {error.messages[0]}", field="new_password", details={"new_password": error.messages}
            ) from None
        user.set_password(data["new_password"])
        user.save(update_fields=["password"])
        if request.auth is None:  # a browser session: it stays signed in, every other one ends
            update_session_auth_hash(request._request, user)
        keep = request.auth if isinstance(request.auth, ApiToken) else None
        revoked = people.account_password_set(user=user, keep_token=keep)
        detail = (
            f"Password changed. {revoked} other API token(s) revoked; other browser sessions are signed out."
            if keep is not None
            else f"Password changed. {revoked} API token(s) revoked; other browser sessions are signed out."
        )
        return Response({"detail": detail, "tokens_revoked": revoked})


class PasswordResetApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []
    throttle_classes = PASSWORD_RESET_THROTTLES
    throttle_scope = "password_reset"

    @extend_schema(
        summary="E-mail a password-reset link to the account with this address (202 whether or not there is one)",
        request=PasswordResetInput,
        responses={
            202: OpenApiResponse(description="Accepted."),
            400: BAD_INPUT,
            429: OpenApiResponse(description="Too many requests from this address or for this e-mail address."),
        },
    )
    def post(self, request: Request) -> Response:
        data = validated(PasswordResetInput, request.data)
        form = PasswordResetForm({"email": data["email"]})
        if form.is_valid():
            form.save(request=request._request, use_https=request.is_secure())
        return Response(status=status.HTTP_202_ACCEPTED)


class MemberListApi(APIView):
    @extend_schema(
        summary="Members of a project and their roles, deactivated ones too (coordinator)",
        responses=responses({200: MembershipOutput(many=True)}, bad_input=False, conflict=False),
    )
    def get(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        return Response(MembershipOutput(people.members_of(project), many=True).data)

    @extend_schema(
        summary="Add a member, or set the roles of an existing one (coordinator)",
        request=MembershipCreateInput,
        responses=responses({200: MembershipOutput}, conflict=False),
    )
    def post(self, request: SignedInApiRequest, slug: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        data = validated(MembershipCreateInput, request.data)
        user = get_user_model().objects.filter(username=data["username"]).first()
        if user is None:
            raise InvalidInput(f"No user is called {data['username']!r}.", field="username")
        membership = membership_set(project=project, user=user, roles=data["roles"], actor=request.user)
        return Response(MembershipOutput(membership).data)


class MemberDetailApi(APIView):
    @extend_schema(
        summary="Set a member's roles (coordinator)",
        request=MembershipRolesInput,
        responses=responses({200: MembershipOutput}, conflict=False),
    )
    def patch(self, request: SignedInApiRequest, slug: str, username: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        membership = _membership(project, username)
        data = validated(MembershipRolesInput, request.data)
        membership = membership_set(project=project, user=membership.user, roles=data["roles"], actor=request.user)
        return Response(MembershipOutput(membership).data)

    @extend_schema(
        summary="Remove a member (coordinator); a project keeps at least one coordinator",
        responses=responses({204: NO_CONTENT}, bad_input=False),
    )
    def delete(self, request: SignedInApiRequest, slug: str, username: str) -> Response:
        project = access.get_project_for_user(request.user, slug, role=Role.COORDINATOR)
        membership = _membership(project, username)
        membership_remove(project=project, user=membership.user, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# Page pairs, the queue and screening
