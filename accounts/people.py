"""People: adding them to a project (one at a time or from a CSV), invitations, passwords, deactivation.

A new person gets either a one-time invitation link (Django's password-reset token machinery with its
own salt: signed, expiring after PASSWORD_RESET_TIMEOUT, and spent once the password is set, because
the token hashes the password) or an initial password shown once, after which they must choose their
own before anything else. Someone who already has an account (same username or e-mail) just gets the
membership. Deactivating keeps every row: the membership (or the account) is only switched off.
"""

from __future__ import annotations

import secrets
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.models import Account, ApiToken
from accounts.tokens import api_tokens_revoke_all
from annotation.languages import UnknownLanguage, get_language
from annotation.models import Membership, PagePair, Project, Role
from annotation.review_hooks import review_hooks
from annotation.services.members import LAST_COORDINATOR, coordinator_is_last, membership_set
from audit import services as audit
from audit.models import Action
from common import csvfile
from common.errors import InvalidInput, InvalidState

INVITATION = "invitation"
PASSWORD = "password"  # noqa: S105 (the name of a choice)
ACCESS_CHOICES = [(INVITATION, "A one-time invitation link"), (PASSWORD, "An initial password, shown once")]
CSV_COLUMNS = ("username", "email", "name", "roles", "languages")
LIST_SEPARATOR = ";"  # between roles and between languages inside one CSV cell
MAX_CSV_ROWS = 1000
MAX_CSV_BYTES = 1024 * 1024
NAME_MAX = 150  # Django's first_name, where the name is kept
INITIAL_PASSWORD_BYTES = 12  # 16 URL-safe characters


class InvitationTokenGenerator(PasswordResetTokenGenerator):
    """Password-reset tokens under another salt: a reset link is not an invitation, nor the other way round."""

    key_salt = "localqa.people.InvitationTokenGenerator"


invitation_tokens = InvitationTokenGenerator()


@dataclass
class PersonAdded:
    """What adding one person did; `password` and `invitation_path` are shown once and never stored."""

    user: User
    membership: Membership
    created: bool
    access: str | None = None  # INVITATION, PASSWORD, or None for an existing account
    password: str = ""
    invitation_path: str = ""
    emailed: bool = False


@dataclass
class PersonRow:
    """One validated person of a form, an API call or a CSV row."""

    username: str
    email: str = ""
    name: str = ""
    roles: list[str] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)


# Validation, the same for one person and for every row of a CSV


def _no_control_characters(value: str, column: str, errors: dict[str, list[str]]) -> None:
    if any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") for char in value):
        errors.setdefault(column, []).append("contains control or invisible formatting characters")


def _split(value: Any) -> list[str]:
    parts = [str(part) for part in value] if isinstance(value, list | tuple) else str(value or "").split(LIST_SEPARATOR)
    return [part.strip() for part in parts if part.strip()]


def person_row_validate(values: dict[str, Any]) -> tuple[PersonRow, dict[str, list[str]]]:
    """Check one person's fields; returns the cleaned row and the problems per column (empty when fine).

    `roles` and `languages` are lists, or strings with the parts separated by LIST_SEPARATOR (";").
    """
    errors: dict[str, list[str]] = {}
    # As Django's sign-in reads a name (NFKC): `ｒｅｖｉｅｗｅｒ` is `reviewer`, and matched case-insensitively below,
    # so nobody gets a look-alike of an existing account (or a 500 when the normalised name is taken).
    username = unicodedata.normalize("NFKC", str(values.get("username") or "")).strip()
    email = unicodedata.normalize("NFKC", str(values.get("email") or "")).strip()
    name = str(values.get("name") or "").strip()
    if not username:
        errors["username"] = ["is required"]
    else:
        if len(username) > 150:
            errors.setdefault("username", []).append("is longer than 150 characters")
        try:
            UnicodeUsernameValidator()(username)
        except ValidationError:
            errors.setdefault("username", []).append("may contain only letters, digits and @ . + - _")
    if email:
        try:
            validate_email(email)
        except ValidationError:
            errors.setdefault("email", []).append(f"{email!r} is not an e-mail address")
        _no_control_characters(email, "email", errors)
    if len(name) > NAME_MAX:
        errors.setdefault("name", []).append(f"is longer than {NAME_MAX} characters")
    _no_control_characters(name, "name", errors)
    roles: list[str] = []
    labels = {role.label.casefold(): role.value for role in Role} | {value: value for value in Role.values}
    for part in _split(values.get("roles")):
        role = labels.get(part.casefold())
        if role is None:
            errors.setdefault("roles", []).append(
                f"{part!r} is not a role (use {', '.join(Role.values)}, separated by {LIST_SEPARATOR!r})"
            )
        elif role not in roles:
            roles.append(role)
    if not roles and "roles" not in errors:
        errors["roles"] = ["at least one role is needed"]
    languages: list[str] = []
    for part in _split(values.get("languages")):
        try:
            code = get_language(part.lower()).code
        except UnknownLanguage:
            errors.setdefault("languages", []).append(f"{part!r} is not a language code localqa knows (e.g. yue, cmn)")
        else:
            if code not in languages:
                languages.append(code)
    row = PersonRow(username=username, email=email, name=name, roles=roles, languages=languages)
    return row, errors


def _existing_user(row: PersonRow) -> tuple[User | None, dict[str, list[str]]]:
    """The account this row names by username or e-mail; a row naming two different accounts is an error."""
    users = get_user_model().objects
    by_name = users.filter(username__iexact=row.username).first()
    by_email = users.filter(email__iexact=row.email).first() if row.email else None
    if by_name is not None and by_email is not None and by_name.pk != by_email.pk:
        return None, {"email": [f"belongs to another account ({by_email.get_username()}), not to {row.username}"]}
    return by_name or by_email, {}


def _flat(errors: dict[str, list[str]], prefix: str = "") -> dict[str, list[str]]:
    return {f"{prefix}{column}": problems for column, problems in errors.items()}


# Adding people


def _issue_access(user: User, access: str, result: PersonAdded) -> None:
    """Give the account a fresh invitation link or initial password; the previous one stops working."""
    if access == PASSWORD:
        result.password = secrets.token_urlsafe(INITIAL_PASSWORD_BYTES)
        user.set_password(result.password)
    else:
        user.set_unusable_password()  # a new random unusable hash: any earlier link is spent
    user.save(update_fields=["password"])
    Account.objects.update_or_create(user=user, defaults={"must_change_password": access == PASSWORD})
    if access == INVITATION:
        result.invitation_path = invitation_path(user)
    result.access = access


def invitation_path(user: User) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("invitation_accept", kwargs={"uidb64": uid, "token": invitation_tokens.make_token(user)})


def _add(*, project: Project, actor: User | None, row: PersonRow, access: str) -> PersonAdded:
    user, errors = _existing_user(row)
    if errors:
        raise InvalidInput(f"email: {errors['email'][0]}", field="email", details=errors)
    created = user is None
    if user is None:
        user = get_user_model().objects.create_user(username=row.username, email=row.email, first_name=row.name)
        Account.objects.create(
            user=user, invited_by=actor if actor is not None and actor.is_authenticated else None, created_in=project
        )
        audit.record(actor, Action.ACCOUNT_CREATED, user, project=project, label=user.get_username(), access=access)
    existing = Membership.all_objects.filter(project=project, user=user).first()
    membership = membership_set(project=project, user=user, roles=row.roles, actor=actor)
    if existing is not None and not existing.is_active:
        membership = membership_reactivate(project=project, user=user, actor=actor)
    if row.languages:
        review_hooks().reviewer_languages_set(project=project, user=user, languages=row.languages, actor=actor)
    result = PersonAdded(user=user, membership=membership, created=created)
    if created:
        _issue_access(user, access, result)
    return result


def _check_access(access: str) -> None:
    if access not in (INVITATION, PASSWORD):
        raise InvalidInput(f"access must be {INVITATION!r} or {PASSWORD!r}.", field="access")


def person_add(
    *, project: Project, actor: User | None, values: dict[str, Any], access: str = INVITATION
) -> PersonAdded:
    """Add one person to the project (creating their account if nobody has this username or e-mail)."""
    _check_access(access)
    row, errors = person_row_validate(values)
    if errors:
        column = next(iter(errors))
        raise InvalidInput(f"{column}: {errors[column][0]}", field=column, details=errors)
    with transaction.atomic():
        return _add(project=project, actor=actor, row=row, access=access)


def people_csv_parse(data: bytes) -> list[tuple[int, PersonRow]]:
    """Read and check a CSV of people; every problem of every row at once, as `details["row 3.email"]`.

    Columns: username,email,name,roles,languages (header required, any order); roles and languages hold
    several values separated by ";". Row numbers are the file's line numbers (the header is row 1).
    """
    if len(data) > MAX_CSV_BYTES:
        raise InvalidInput(f"The file is larger than {MAX_CSV_BYTES // 1024} KiB.", field="file")
    try:
        text = csvfile.decode(data)
    except csvfile.CsvProblem as problem:
        raise InvalidInput(
            f"The file {problem.message}.".replace("The file the file", "The file"), field="file"
        ) from None
    if "\x00" in text:
        raise InvalidInput("The file is not a CSV text file (it contains NUL bytes).", field="file")
    found = csvfile.rows(text)
    first_line = next(found, (1, []))[1]
    header = [name.strip().lower() for name in first_line]
    if not any(header):
        raise InvalidInput("The file is empty; the first line names the columns.", field="file")
    missing = [column for column in CSV_COLUMNS if column not in header]
    unknown = [column for column in header if column not in CSV_COLUMNS]
    if missing or unknown or len(set(header)) != len(header):
        raise InvalidInput(
            f"The first line must name the columns {','.join(CSV_COLUMNS)}"
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + (f"; unknown: {', '.join(unknown[:5])}" if unknown else "")
            + csvfile.separator_hint(first_line, ","),
            field="file",
        )
    rows: list[tuple[int, PersonRow]] = []
    errors: dict[str, list[str]] = {}
    seen: dict[str, dict[str, int]] = {"username": {}, "email": {}}
    try:
        for number, cells in found:
            values: dict[str | None, Any] = dict(zip(header, cells, strict=False))
            if len(cells) > len(header):
                values[None] = cells[len(header) :]
            if len(rows) >= MAX_CSV_ROWS:
                raise InvalidInput(f"The file has more than {MAX_CSV_ROWS} people; split it.", field="file")
            if None in values:
                errors[f"row {number}"] = ["has more cells than the header names"]
                continue
            if not any((value or "").strip() for value in values.values()):
                continue  # a blank line
            row, problems = person_row_validate({str(key): value for key, value in values.items()})
            for column in ("username", "email"):
                key = getattr(row, column).casefold()
                if key and key in seen[column]:
                    problems.setdefault(column, []).append(f"repeats row {seen[column][key]}")
                elif key:
                    seen[column][key] = number
            if not problems and (row.username or row.email):
                _, problems = _existing_user(row)
            errors |= _flat(problems, f"row {number}.")
            rows.append((number, row))
    except csvfile.CsvProblem as problem:
        raise InvalidInput(f"The file is not valid CSV: {problem.message}", field="file") from None
    if errors:
        first = next(iter(errors))
        raise InvalidInput(
            f"{len(errors)} problem(s); nobody was added. {first}: {errors[first][0]}", field=first, details=errors
        )
    if not rows:
        raise InvalidInput("The file names nobody.", field="file")
    return rows


def people_import_csv(
    *, project: Project, actor: User | None, data: bytes, access: str = INVITATION
) -> list[PersonAdded]:
    """Add everyone of a CSV, or nobody: any problem in any row refuses the whole file."""
    _check_access(access)
    rows = people_csv_parse(data)
    with transaction.atomic():
        results = []
        for number, row in rows:
            try:
                results.append(_add(project=project, actor=actor, row=row, access=access))
            except InvalidInput as error:  # found only now (e.g. a language for a membership); nobody stays added
                raise InvalidInput(
                    f"row {number}.{error.field}: {error.message}", field=f"row {number}.{error.field}"
                ) from None
    return results


def invitation_send(*, result: PersonAdded, project: Project, url: str) -> bool:
    """E-mail the invitation link to a new person who has an address (after the transaction commits)."""
    email = getattr(result.user, "email", "")
    if not (result.access == INVITATION and email):
        return False
    subject = f"You are invited to {project.name} on localqa"
    body = (
        f"Hello {result.user.get_full_name() or result.user.get_username()},\n\n"
        f"you have been added to the project {project.name}. Open this link to choose your password "
        f"(your user name is {result.user.get_username()}):\n\n{url}\n\n"
        f"The link works once and expires in {settings.PASSWORD_RESET_TIMEOUT // 86400} day(s).\n"
    )
    transaction.on_commit(lambda: send_mail(subject, body, None, [email]))
    result.emailed = True
    return True


def _access_refusal(*, project: Project, user: User, account: Account | None, has_token: bool, elsewhere: bool) -> str:
    name = user.get_username()
    if user.is_superuser or user.is_staff:
        return "Only a superuser may issue access for a superuser or staff account."
    if account is None or account.created_in_id != project.pk:
        return f"{name}'s account was not made in this project; they can reset their password from the sign-in page."
    if elsewhere:
        return f"{name} is a member of another project; they can reset their password from the sign-in page."
    owner_chose = account.password_set_at is not None or (
        user.has_usable_password() and not account.must_change_password
    )
    if user.last_login is not None or owner_chose or has_token:
        return f"{name} has signed in before; they can reset their password from the sign-in page."
    return ""


def account_access_refusal(*, project: Project, user: User) -> str:
    """Why a coordinator of `project` may not hand `user` a new link or password ("" when they may).

    Only an account this project made and that nobody has used by any means: never signed in (a session sets
    last_login), no API token ever made (the token endpoint leaves last_login alone), no password its owner
    chose, and no membership of another project. Anything else would let a coordinator take the account over.
    """
    return _access_refusal(
        project=project,
        user=user,
        account=Account.objects.filter(user=user).first(),
        has_token=ApiToken.objects.filter(user=user).exists(),
        elsewhere=Membership.all_objects.filter(user=user).exclude(project=project).exists(),
    )


def person_access_issue(*, project: Project, actor: User | None, user: User, access: str) -> PersonAdded:
    """A new invitation link or initial password for a member who has never signed in (the old one is spent).

    A coordinator may do it only where account_access_refusal finds nothing; a superuser for any account.
    """
    _check_access(access)
    membership = Membership.all_objects.filter(project=project, user=user).first()
    if membership is None:
        raise InvalidInput(f"{user.get_username()} is not a member of this project.", field="username")
    if not getattr(actor, "is_superuser", False):
        refusal = account_access_refusal(project=project, user=user)
        if refusal:
            raise InvalidState(refusal, field="username")
    result = PersonAdded(user=user, membership=membership, created=False)
    with transaction.atomic():
        _issue_access(user, access, result)
        audit.record(
            actor, Action.ACCOUNT_ACCESS_ISSUED, user, project=project, label=user.get_username(), access=access
        )
    return result


def account_password_set(*, user: User, keep_token: ApiToken | None = None) -> int:
    """The person chose their own password (invitation, change or reset): nothing forces them any more, and every
    API token they had stops working (whoever held one no longer holds the account), but `keep_token`, the one
    this very change came with. Other browser sessions end by themselves: Django's session hash follows the
    password. Returns how many tokens were revoked."""
    with transaction.atomic():
        Account.objects.update_or_create(
            user=user, defaults={"must_change_password": False, "password_set_at": timezone.now()}
        )
        revoked = api_tokens_revoke_all(user=user, keep=keep_token)
        audit.record(user, Action.ACCOUNT_PASSWORD_SET, user, label=user.get_username(), tokens_revoked=revoked)
    return revoked


def must_change_password(user: User) -> bool:
    return Account.objects.filter(user=user, must_change_password=True).exists()


# Deactivation


def membership_deactivate(*, project: Project, user: User, actor: User | None) -> Membership:
    """Switch a membership off: out of access, queues and reviewer lists; items, reviews and history stay.

    Claims they hold are given back: a review slot returns to the queue, an unscreened pair to the pool.
    """
    with transaction.atomic():
        membership = Membership.all_objects.select_for_update().filter(project=project, user=user).first()
        if membership is None:
            raise InvalidInput(f"{user.get_username()} is not a member of this project.", field="username")
        if not membership.is_active:
            return membership
        if membership.is_coordinator and coordinator_is_last(project=project, user=user):
            raise InvalidState(LAST_COORDINATOR, field="username")
        now = timezone.now()
        Membership.all_objects.filter(pk=membership.pk).update(deactivated_at=now)
        membership.deactivated_at = now
        slots, pairs = _release_claims(project=project, user=user, now=now)
        audit.record(
            actor,
            Action.MEMBER_DEACTIVATED,
            membership,
            label=user.get_username(),
            review_slots_released=slots,
            pairs_released=pairs,
        )
    return membership


def _release_claims(*, project: Project, user: User, now: Any) -> tuple[int, int]:
    slots = review_hooks().review_slots_release(project=project, user=user)
    # An unscreened claim past its time goes back to the pool (PairQuerySet.available); the assignee stays on record.
    pairs = PagePair.objects.filter(project=project, assignee=user, status=PagePair.Status.CLAIMED).update(
        claim_expires_at=now - timedelta(seconds=1)
    )
    return slots, pairs


def membership_reactivate(*, project: Project, user: User, actor: User | None) -> Membership:
    with transaction.atomic():
        membership = Membership.all_objects.select_for_update().filter(project=project, user=user).first()
        if membership is None:
            raise InvalidInput(f"{user.get_username()} is not a member of this project.", field="username")
        if membership.is_active:
            return membership
        Membership.all_objects.filter(pk=membership.pk).update(deactivated_at=None)
        audit.record(
            actor, Action.MEMBER_REACTIVATED, membership, label=user.get_username(), since=membership.deactivated_at
        )
        membership.deactivated_at = None
    return membership


def account_deactivate(*, user: User, actor: User) -> None:
    """A superuser switches an account off: no sign-in, no API token; every row it made stays."""
    if not actor.is_superuser:
        raise InvalidState("Only a superuser may deactivate an account.", field="username")
    if user.pk == actor.pk:
        raise InvalidState("You cannot deactivate your own account.", field="username")
    with transaction.atomic():
        if get_user_model().objects.filter(pk=user.pk, is_active=True).update(is_active=False):
            audit.record(actor, Action.ACCOUNT_DEACTIVATED, user, label=user.get_username())
    user.is_active = False


def account_reactivate(*, user: User, actor: User) -> None:
    if not actor.is_superuser:
        raise InvalidState("Only a superuser may reactivate an account.", field="username")
    with transaction.atomic():
        if get_user_model().objects.filter(pk=user.pk, is_active=False).update(is_active=True):
            audit.record(actor, Action.ACCOUNT_REACTIVATED, user, label=user.get_username())
    user.is_active = True


def members_of(project: Project) -> Iterable[Membership]:
    """Every membership of the project, deactivated ones too, for the members page and API (one query).

    Each carries `access_issuable`: whether a coordinator may hand the person a new link (account_access_refusal).
    """
    memberships = list(
        Membership.all_objects.filter(project=project)
        .select_related("user", "user__account", "reader_languages")
        .annotate(
            has_token=Exists(ApiToken.objects.filter(user=OuterRef("user"))),
            elsewhere=Exists(Membership.all_objects.filter(user=OuterRef("user")).exclude(project=project)),
        )
        .order_by(F("deactivated_at").asc(nulls_first=True), "user__username")
    )
    for membership in memberships:
        refusal = _access_refusal(
            project=project,
            user=membership.user,
            account=getattr(membership.user, "account", None),
            has_token=membership.has_token,
            elsewhere=membership.elsewhere,
        )
        membership.access_issuable = not refusal  # type: ignore[attr-defined]
    return memberships
