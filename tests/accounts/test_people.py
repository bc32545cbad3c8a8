"""A team sets itself up in the product: adding people (one, or a CSV), invitation links and initial passwords,
changing and resetting passwords, deactivating members and accounts; through the pages and the API."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import people
from accounts.models import Account
from annotation.models import Membership, QAItem
from annotation.services.items import qa_item_create
from annotation.services.members import membership_set
from audit.models import Action, AuditEvent
from review import queue as review_queue
from review import reviewers as review_reviewers
from review.models import ReviewerLanguages, ReviewSlot
from tests import factories
from tests.conftest import api_as
from tests.review.conftest import submitted_pair

User = get_user_model()
NEW_PASSWORD = "a-long-Own-password-42"


def _members(project) -> str:
    return reverse("project_members", args=[project.slug])


def _link(content: str) -> str:
    """The invitation link shown on the page (its path)."""
    match = re.search(r'value="https?://[^/"]+(/accounts/invitation/[^"]+)"', content)
    assert match, "no invitation link on the page"
    return match.group(1)


def _accept(client, link: str, password: str = NEW_PASSWORD):
    """Open an invitation link like a browser (Django moves the token into the session) and choose a password."""
    opened = client.get(link)
    assert opened.status_code == 302, "a working link redirects to the form without the token in the URL"
    return client.post(opened["Location"], {"new_password1": password, "new_password2": password})


# Adding one person on the Members page


def test_coordinator_adds_a_person_who_gets_a_one_time_invitation_link(client, project, coordinator):
    client.force_login(coordinator)

    response = client.post(
        _members(project),
        {"username": "mei", "email": "mei@example.org", "name": "Mei Chan", "roles": ["annotator", "reviewer"],
         "languages": "yue; cmn", "access": "invitation"},
    )  # fmt: skip

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    mei = User.objects.get(username="mei")
    assert (mei.email, mei.get_full_name(), mei.has_usable_password()) == ("mei@example.org", "Mei Chan", False)
    membership = Membership.objects.get(project=project, user=mei)
    assert membership.roles == ["annotator", "reviewer"]
    assert ReviewerLanguages.objects.get(membership=membership).languages == ["yue", "cmn"]
    link = _link(response.content.decode())
    actions = set(AuditEvent.objects.filter(object_label="mei").values_list("action", flat=True))
    assert {Action.ACCOUNT_CREATED, Action.MEMBER_ADDED, Action.MEMBER_LANGUAGES} <= actions
    assert link not in str(list(AuditEvent.objects.values_list("details", flat=True)))  # the link is not stored


def test_the_invitation_is_emailed_when_the_person_has_an_address(
    client, project, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            _members(project), {"username": "mei", "email": "mei@example.org", "roles": ["annotator"]}
        )

    link = _link(response.content.decode())
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["mei@example.org"]
    assert link in mail.outbox[0].body
    assert "Also e-mailed" in response.content.decode()


def test_an_invitation_link_sets_the_password_signs_in_and_lands_on_the_project(client, project, coordinator):
    client.force_login(coordinator)
    link = _link(client.post(_members(project), {"username": "mei", "roles": ["annotator"]}).content.decode())
    client.logout()

    done = _accept(client, link)

    assert done.status_code == 302
    assert done["Location"] == reverse("project_detail", args=[project.slug])
    assert client.get(done["Location"]).status_code == 200  # signed in as mei
    mei = User.objects.get(username="mei")
    assert mei.check_password(NEW_PASSWORD)
    assert AuditEvent.objects.filter(action=Action.ACCOUNT_PASSWORD_SET, actor=mei).exists()


def test_an_invitation_link_works_only_once(client, project, coordinator):
    client.force_login(coordinator)
    link = _link(client.post(_members(project), {"username": "mei", "roles": ["annotator"]}).content.decode())
    client.logout()
    _accept(client, link)
    client.logout()

    again = client.get(link, follow=True)

    assert "This invitation no longer works" in again.content.decode()
    assert User.objects.get(username="mei").check_password(NEW_PASSWORD)


def test_an_expired_invitation_link_is_refused(client, project, coordinator, settings, monkeypatch):
    client.force_login(coordinator)
    link = _link(client.post(_members(project), {"username": "mei", "roles": ["annotator"]}).content.decode())
    client.logout()
    later = people.invitation_tokens._now() + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT + 60)
    monkeypatch.setattr(people.invitation_tokens, "_now", lambda: later)

    response = client.get(link, follow=True)

    assert "This invitation no longer works" in response.content.decode()
    assert not User.objects.get(username="mei").has_usable_password()


def test_a_password_reset_token_is_not_an_invitation(client, project, coordinator):
    from django.contrib.auth.tokens import default_token_generator

    client.force_login(coordinator)
    link = _link(client.post(_members(project), {"username": "mei", "roles": ["annotator"]}).content.decode())
    mei = User.objects.get(username="mei")
    forged = link.rsplit("/", 2)[0] + f"/{default_token_generator.make_token(mei)}/"
    client.logout()

    assert "no longer works" in client.get(forged, follow=True).content.decode()


def test_a_new_invitation_link_spends_the_old_one(client, project, coordinator):
    client.force_login(coordinator)
    old = _link(client.post(_members(project), {"username": "mei", "roles": ["annotator"]}).content.decode())

    renewed = client.post(reverse("project_member_access", args=[project.slug, "mei"]), {"access": "invitation"})

    new = _link(renewed.content.decode())
    client.logout()
    assert "no longer works" in client.get(old, follow=True).content.decode()
    assert _accept(client, new).status_code == 302


def test_no_new_link_for_someone_who_has_signed_in(client, project, coordinator, annotator):
    client.force_login(annotator)  # sets last_login
    client.force_login(coordinator)

    response = client.post(reverse("project_member_access", args=[project.slug, "annotator"]), follow=True)

    assert "reset their password from the sign-in page" in response.content.decode()
    annotator.refresh_from_db()
    assert annotator.check_password(factories.PASSWORD)


# An initial password, and changing it before anything else


def test_an_initial_password_is_shown_once_and_must_be_replaced_at_first_sign_in(client, project, coordinator):
    client.force_login(coordinator)
    shown = client.post(_members(project), {"username": "mei", "roles": ["annotator"], "access": "password"})
    password = re.search(r'<code class="initial-password">([^<]+)</code>', shown.content.decode()).group(1)
    assert client.get(_members(project)).content.decode().count(password) == 0  # not shown again
    client.logout()

    signed_in = client.post(reverse("login"), {"username": "mei", "password": password})
    blocked_page = client.get(reverse("project_detail", args=[project.slug]))
    blocked_api = client.get(f"/api/projects/{project.slug}/")
    token = APIClient().post("/api/auth/token/", {"username": "mei", "password": password})
    form = client.get(signed_in["Location"])
    changed = client.post(
        signed_in["Location"],
        {"old_password": password, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD,
         "next": reverse("project_detail", args=[project.slug])},
    )  # fmt: skip
    after = client.get(reverse("project_detail", args=[project.slug]))

    assert signed_in["Location"].startswith(reverse("password_change"))
    assert blocked_page.status_code == 302 and blocked_page["Location"].startswith(reverse("password_change"))
    assert blocked_api.status_code == 403
    assert token.status_code == 403
    assert "Choose your own password" in form.content.decode()
    assert changed["Location"] == reverse("project_detail", args=[project.slug])
    assert after.status_code == 200
    assert not Account.objects.get(user__username="mei").must_change_password


def test_the_forced_change_keeps_what_was_typed_when_it_fails(client, project, coordinator):
    people.person_add(project=project, actor=coordinator, values={"username": "mei", "roles": ["annotator"]})
    mei = User.objects.get(username="mei")
    mei.set_password("initial-one-xyz")
    mei.save()
    Account.objects.filter(user=mei).update(must_change_password=True)
    client.post(reverse("login"), {"username": "mei", "password": "initial-one-xyz"})

    refused = client.post(
        reverse("password_change"),
        {"old_password": "initial-one-xyz", "new_password1": NEW_PASSWORD, "new_password2": "different"},
    )

    assert refused.status_code == 200
    assert "didn’t match" in refused.content.decode() or "didn't match" in refused.content.decode()
    assert client.get(reverse("home")).status_code == 302  # still sent to the change form


# Existing accounts and bad input


def test_an_existing_account_by_email_just_gets_the_membership(client, project, coordinator, other_project):
    someone = factories.user("someone")
    membership_set(project=other_project, user=someone, roles={"annotator"})
    client.force_login(coordinator)

    response = client.post(
        _members(project), {"username": "someone-else", "email": "SOMEONE@example.org", "roles": ["reviewer"]}
    )

    assert response.status_code == 302
    someone.refresh_from_db()
    assert someone.check_password(factories.PASSWORD)
    assert Membership.objects.get(project=project, user=someone).roles == ["reviewer"]
    assert not User.objects.filter(username="someone-else").exists()


def test_a_username_and_an_email_of_two_different_accounts_are_refused(client, project, coordinator, outsider):
    client.force_login(coordinator)

    response = client.post(_members(project), {"username": "annotator", "email": outsider.email, "roles": ["reviewer"]})

    assert response.status_code == 400
    assert "belongs to another account" in response.content.decode()
    assert 'value="annotator"' in response.content.decode()  # what was typed stays
    assert not Membership.objects.filter(project=project, user=outsider).exists()


def test_a_bad_person_keeps_the_form_input_and_adds_nobody(client, project, coordinator):
    client.force_login(coordinator)

    response = client.post(_members(project), {"username": "mei", "name": "Mei", "roles": ["annotator"],
                                               "languages": "yue;klingon"})  # fmt: skip

    assert response.status_code == 400
    assert "klingon" in response.content.decode()
    assert 'value="yue;klingon"' in response.content.decode()
    assert not User.objects.filter(username="mei").exists()


# A CSV batch

GOOD_CSV = (
    b"username,email,name,roles,languages\n"
    b"mei,mei@example.org,Mei Chan,annotator;reviewer,yue;cmn\n"
    b"kai,,Kai,Researcher,\n"
    b"outsider,,,reviewer,\n"  # an existing account: just the membership
)


def test_a_csv_adds_everyone_with_an_invitation_each(client, project, coordinator, outsider):
    client.force_login(coordinator)

    response = client.post(
        reverse("project_people_import", args=[project.slug]),
        {"file": SimpleUploadedFile("people.csv", GOOD_CSV), "access": "invitation"},
    )

    assert response.status_code == 200
    content = response.content.decode()
    assert content.count("/accounts/invitation/") == 2  # mei and kai; outsider already has an account
    assert "Their own account" in content
    roles = {m.user.username: m.roles for m in Membership.objects.filter(project=project).select_related("user")}
    assert roles["mei"] == ["annotator", "reviewer"]
    assert roles["kai"] == ["researcher"]
    assert roles["outsider"] == ["reviewer"]
    outsider.refresh_from_db()
    assert outsider.check_password(factories.PASSWORD)


BAD_CSV = (
    b"username,email,name,roles,languages\n"
    b"mei,not-an-address,Mei,annotator,yue\n"
    b"kai,,Kai,boss,\n"
    b"mei,,Again,reviewer,xx\n"
    b"bad name!,,,annotator,\n"
    b"lin,,Lin,,\n"
)


def test_a_csv_with_problems_adds_nobody_and_names_every_row_and_column(client, project, coordinator):
    client.force_login(coordinator)
    before = User.objects.count()

    response = client.post(
        reverse("project_people_import", args=[project.slug]), {"file": SimpleUploadedFile("people.csv", BAD_CSV)}
    )

    assert response.status_code == 400
    assert User.objects.count() == before
    rows = re.findall(r"<tr><td>(row \d+)</td><td>(\w+)</td>", response.content.decode())
    assert set(rows) == {
        ("row 2", "email"),
        ("row 3", "roles"),
        ("row 4", "username"),  # repeats row 2
        ("row 4", "languages"),
        ("row 5", "username"),
        ("row 6", "roles"),  # none given
    }


def test_a_csv_of_hostile_text_is_refused_or_shown_as_text(client, project, coordinator):
    client.force_login(coordinator)
    hostile = (
        "username,email,name,roles,languages\n"
        'eve,,"<script>alert(1)</script>=HYPERLINK(""http://x"")",annotator,\n'
        "mallory,,\u202egnp.exe,annotator,\n"  # a right-to-left override
        "trudy,,\x1b[31mred,annotator,\n"
    ).encode()

    refused = client.post(
        reverse("project_people_import", args=[project.slug]), {"file": SimpleUploadedFile("p.csv", hostile)}
    )
    accepted = client.post(
        reverse("project_people_import", args=[project.slug]),
        {
            "file": SimpleUploadedFile(
                "p.csv", b"username,email,name,roles,languages\neve,,<script>x</script>,annotator,"
            )
        },
    )

    assert refused.status_code == 400
    assert {row for row, _ in re.findall(r"<tr><td>(row \d+)</td><td>(\w+)</td>", refused.content.decode())} == {
        "row 3",
        "row 4",
    }
    assert "<script>alert(1)" not in refused.content.decode()
    assert accepted.status_code == 200
    assert "<script>x</script>" not in accepted.content.decode()
    assert "&lt;script&gt;x&lt;/script&gt;" in client.get(_members(project)).content.decode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"username,roles\nmei,annotator\n", "missing: email, name, languages"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"username,email,name,roles,languages\n", "names nobody"),
        (b"username,email,name,roles,languages\nmei,,,annotator,,extra\n", "more cells"),
    ],
)
def test_a_file_that_is_not_a_people_csv_is_refused_with_the_reason(project, coordinator, data, message):
    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/people/import/", {"file": SimpleUploadedFile("p.csv", data)}, format="multipart"
    )

    assert response.status_code == 400
    assert message in str(response.json())


# The API


def test_the_api_adds_a_person_and_returns_the_link_once(project, coordinator, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(coordinator).post(
            f"/api/projects/{project.slug}/people/",
            {"username": "mei", "email": "mei@example.org", "roles": ["annotator"], "languages": ["yue"]},
            format="json",
        )

    body = response.json()
    assert response.status_code == 201
    assert body["created"] and body["emailed"] and body["password"] == ""
    assert body["invitation_url"].startswith("http://testserver/accounts/invitation/")
    assert mail.outbox[0].to == ["mei@example.org"]


def test_the_api_imports_a_csv_or_reports_every_problem(project, coordinator, outsider):
    client = api_as(coordinator)

    bad = client.post(
        f"/api/projects/{project.slug}/people/import/",
        {"file": SimpleUploadedFile("p.csv", BAD_CSV)},
        format="multipart",
    )
    good = client.post(
        f"/api/projects/{project.slug}/people/import/",
        {"file": SimpleUploadedFile("p.csv", GOOD_CSV), "access": "password"},
        format="multipart",
    )

    assert bad.status_code == 400
    assert {"row 2.email", "row 3.roles", "row 4.username", "row 6.roles"} <= set(bad.json()["details"])
    assert good.status_code == 201
    created = [person for person in good.json()["people"] if person["created"]]
    assert [len(person["password"]) >= 16 for person in created] == [True, True]
    assert Account.objects.get(user__username="kai").must_change_password


def test_a_member_changes_their_password_through_the_api(annotator):
    client = api_as(annotator)

    wrong = client.post("/api/auth/password/", {"old_password": "nope", "new_password": NEW_PASSWORD}, format="json")
    weak = client.post(
        "/api/auth/password/", {"old_password": factories.PASSWORD, "new_password": "123"}, format="json"
    )
    done = client.post(
        "/api/auth/password/", {"old_password": factories.PASSWORD, "new_password": NEW_PASSWORD}, format="json"
    )

    assert (wrong.status_code, wrong.json()["field"]) == (400, "old_password")
    assert (weak.status_code, weak.json()["field"]) == (400, "new_password")
    assert done.status_code == 200
    annotator.refresh_from_db()
    assert annotator.check_password(NEW_PASSWORD)


# Changing and resetting a password in the browser


def test_a_member_changes_their_password(client, annotator):
    client.force_login(annotator)

    response = client.post(
        reverse("password_change"),
        {"old_password": factories.PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert response["Location"] == reverse("password_change_done")
    annotator.refresh_from_db()
    assert annotator.check_password(NEW_PASSWORD)
    assert client.get(reverse("home")).status_code == 200  # still signed in


def test_a_forgotten_password_is_reset_through_an_emailed_link(client, annotator):
    sent = client.post(reverse("password_reset"), {"email": annotator.email})
    assert sent["Location"] == reverse("password_reset_done")
    assert len(mail.outbox) == 1
    link = re.search(r"https?://[^/\s]+(/accounts/password/reset/\S+/)", mail.outbox[0].body).group(1)

    opened = client.get(link)
    saved = client.post(opened["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    reused = client.get(link, follow=True)

    assert saved["Location"] == reverse("password_reset_complete")
    assert client.login(username="annotator", password=NEW_PASSWORD)
    assert "This link no longer works" in reused.content.decode()


def test_a_reset_for_an_unknown_address_sends_nothing_and_says_the_same(client, db):
    response = client.post(reverse("password_reset"), {"email": "nobody@example.org"})
    api = APIClient().post("/api/auth/password-reset/", {"email": "nobody@example.org"}, format="json")

    assert response["Location"] == reverse("password_reset_done")
    assert api.status_code == 202
    assert mail.outbox == []


def test_the_reset_api_emails_a_link(annotator):
    response = APIClient().post("/api/auth/password-reset/", {"email": annotator.email}, format="json")

    assert response.status_code == 202
    assert "/accounts/password/reset/" in mail.outbox[0].body


def test_the_sign_in_page_offers_the_reset(client, db):
    assert reverse("password_reset") in client.get(reverse("login")).content.decode()


# Deactivation keeps the work and history, and takes the person out of the queues


def test_a_deactivated_annotator_keeps_their_items_and_history_but_cannot_work(
    client, project, coordinator, annotator, annotating_pair
):
    item = qa_item_create(pair=annotating_pair, user=annotator, question="问题？")
    events_before = AuditEvent.objects.count()
    client.force_login(coordinator)

    client.post(reverse("project_member_deactivate", args=[project.slug, "annotator"]))

    assert QAItem.objects.filter(pk=item.pk, author=annotator).exists()
    assert AuditEvent.objects.count() == events_before + 1
    assert AuditEvent.objects.filter(action=Action.MEMBER_DEACTIVATED, object_label="annotator").exists()
    client.force_login(annotator)
    assert client.get(reverse("project_detail", args=[project.slug])).status_code == 404
    assert client.post(reverse("queue_next", args=[project.slug])).status_code == 404
    assert api_as(annotator).post(f"/api/projects/{project.slug}/queue/next/").status_code == 404
    assert project.slug not in client.get(reverse("home")).content.decode()
    members = api_as(coordinator).get(f"/api/projects/{project.slug}/members/").json()
    assert {m["username"]: m["active"] for m in members}["annotator"] is False


def test_a_deactivated_reviewer_gives_back_their_claim_and_cannot_claim(client, project, coordinator, reviewer):
    author = factories.user("author")
    membership_set(project=project, user=author, roles={"annotator"})
    _, items = submitted_pair(project, author)
    slot = review_queue.review_claim(item=items[0], user=reviewer)

    api_as(coordinator).post(f"/api/projects/{project.slug}/members/reviewer/deactivate/")

    slot.refresh_from_db()
    assert (slot.status, slot.reviewer_id) == (ReviewSlot.Status.OPEN, None)
    client.force_login(reviewer)
    assert client.post(reverse("review_next", args=[project.slug])).status_code == 404
    assert api_as(reviewer).post(f"/api/projects/{project.slug}/review/next/").status_code == 404
    assert "reviewer" not in [m.user.username for m in review_reviewers.reviewers_eligible(project)]


def test_a_reactivated_member_is_back_with_their_roles(client, project, coordinator, annotator):
    people.membership_deactivate(project=project, user=annotator, actor=coordinator)
    client.force_login(coordinator)

    client.post(reverse("project_member_reactivate", args=[project.slug, "annotator"]))

    client.force_login(annotator)
    assert client.get(reverse("project_detail", args=[project.slug])).status_code == 200
    assert Membership.objects.get(project=project, user=annotator).roles == ["annotator"]
    assert AuditEvent.objects.filter(action=Action.MEMBER_REACTIVATED).count() == 1


def test_the_last_active_coordinator_cannot_be_deactivated(client, project, coordinator):
    response = api_as(coordinator).post(f"/api/projects/{project.slug}/members/coordinator/deactivate/")

    assert response.status_code == 409
    assert Membership.objects.get(project=project, user=coordinator).is_active


def test_adding_a_deactivated_member_again_reactivates_them(project, coordinator, annotator):
    people.membership_deactivate(project=project, user=annotator, actor=coordinator)

    people.person_add(project=project, actor=coordinator, values={"username": "annotator", "roles": ["reviewer"]})

    assert Membership.objects.get(project=project, user=annotator).roles == ["reviewer"]


def test_a_superuser_deactivates_an_account_and_nothing_it_made_goes(
    client, project, superuser, annotator, annotating_pair
):
    item = qa_item_create(pair=annotating_pair, user=annotator, question="问题？")
    client.force_login(superuser)

    client.post(reverse("account_deactivate", args=[project.slug, "annotator"]))

    annotator.refresh_from_db()
    assert not annotator.is_active
    assert not client.login(username="annotator", password=factories.PASSWORD)
    assert (
        APIClient().post("/api/auth/token/", {"username": "annotator", "password": factories.PASSWORD}).status_code
        == 400
    )
    assert QAItem.objects.filter(pk=item.pk).exists()
    assert Membership.all_objects.filter(project=project, user=annotator).exists()
    api_as(superuser).post("/api/accounts/annotator/reactivate/")
    assert client.login(username="annotator", password=factories.PASSWORD)
    assert list(AuditEvent.objects.filter(object_label="annotator", action__startswith="account.").values_list(
        "action", flat=True).order_by("id")) == [Action.ACCOUNT_DEACTIVATED, Action.ACCOUNT_REACTIVATED]  # fmt: skip


def test_a_coordinator_cannot_deactivate_an_account(project, coordinator):
    assert api_as(coordinator).post("/api/accounts/annotator/deactivate/").status_code == 403
    assert User.objects.get(username="annotator").is_active


# The page's cost


def test_members_page_query_count_does_not_grow_with_members(
    client, project, coordinator, django_assert_max_num_queries
):
    for number in range(30):
        result = people.person_add(
            project=project,
            actor=coordinator,
            values={"username": f"p{number}", "roles": ["reviewer"], "languages": ["yue"]},
        )
        if number % 3 == 0:
            people.membership_deactivate(project=project, user=result.user, actor=coordinator)
    User.objects.filter(username="p1").update(last_login=timezone.now())
    client.force_login(coordinator)

    with django_assert_max_num_queries(6):
        response = client.get(_members(project))

    assert response.status_code == 200
    assert response.content.decode().count("Deactivated ") == 10


def test_a_members_roles_are_changed_on_their_row_and_a_refusal_is_shown_on_that_row(
    client, project, coordinator, annotator
):
    """One form per member's row: tick, *Save roles*; what cannot be saved is said on that row, not at the
    add-a-person form below."""
    client.force_login(coordinator)
    url = reverse("project_members", args=[project.slug])
    page = client.get(url).content.decode()
    assert 'id="roles-annotator"' in page and 'id="roles-coordinator"' in page

    saved = client.post(url, {"row": "1", "username": "annotator", "roles": ["annotator", "reviewer"]})
    assert saved.status_code == 302
    assert Membership.objects.get(project=project, user=annotator).roles == ["annotator", "reviewer"]
    assert get_user_model().objects.get(pk=annotator.pk).email == annotator.email  # nothing else changed

    none_ticked = client.post(url, {"row": "1", "username": "annotator"})
    assert none_ticked.status_code == 400
    assert none_ticked.context["row_error"] == {
        "username": "annotator",
        "message": "Tick at least one role (to take someone off the project, deactivate them).",
    }
    assert not none_ticked.context["form"].is_bound  # the add-a-person form stays empty

    last = client.post(url, {"row": "1", "username": "coordinator", "roles": ["annotator"]})
    assert last.status_code == 400
    assert last.context["row_error"]["username"] == "coordinator"
    assert "coordinator" in last.context["row_error"]["message"].lower()
    assert Membership.objects.get(project=project, user=coordinator).is_coordinator
