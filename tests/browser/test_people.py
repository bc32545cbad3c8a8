"""A coordinator adds a person with an invitation link; the new person opens it in a browser of their own,
chooses a password and lands on the project."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, ViewportSize, expect

from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

SIZES: dict[str, ViewportSize] = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


def _no_horizontal_scroll(page) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow}px"


def test_a_coordinator_invites_a_person_who_sets_a_password_and_lands_on_the_project(
    browser: Browser, live_server, page, project, coordinator
):
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/members/")
    form = page.locator("#add-person")
    form.get_by_label("Username").fill("mei")
    form.get_by_label("E-mail").fill("mei@example.org")
    form.get_by_label("Full name").fill("陳美 Mei <b>Chan</b>")
    form.get_by_label("Annotator").check()
    form.get_by_label("Languages read").fill("yue;cmn")
    form.get_by_label("A one-time invitation link").check()
    form.get_by_role("button", name="Add person").click()

    link_field = page.locator("#people-added .invitation-link")
    expect(link_field).to_have_value(re.compile(r"/accounts/invitation/"))
    expect(page.locator("#members")).to_contain_text("陳美 Mei <b>Chan</b>")  # shown as text
    for name, size in SIZES.items():
        page.set_viewport_size(size)
        page.screenshot(path=f"/tmp/people-members-{name}.png", full_page=True)
        _no_horizontal_scroll(page)
    link = link_field.input_value()

    newcomer = browser.new_context(base_url=live_server.url, viewport=SIZES["phone"], locale="en-GB")
    try:
        fresh = newcomer.new_page()
        fresh.goto(link)
        expect(fresh.get_by_role("heading", name="Welcome to localqa")).to_be_visible()
        assert "/accounts/invitation/" in fresh.url and "set-password" in fresh.url  # the token left the URL
        fresh.screenshot(path="/tmp/people-invitation-phone.png", full_page=True)
        _no_horizontal_scroll(fresh)
        fresh.get_by_label("New password", exact=True).fill("a-long-Own-password-42")
        fresh.get_by_label("New password confirmation").fill("a-long-Own-password-42")
        fresh.get_by_role("button", name="Save my password").click()

        expect(fresh).to_have_url(re.compile(rf"/projects/{project.slug}/$"))
        expect(fresh.locator(".topbar .who")).to_have_text("mei")
        fresh.set_viewport_size(SIZES["desktop"])
        fresh.screenshot(path="/tmp/people-landed-desktop.png", full_page=True)

        fresh.goto(link)  # the link works once
        expect(fresh.locator("#link-invalid")).to_be_visible()
    finally:
        newcomer.close()


def test_a_person_with_an_initial_password_chooses_their_own_first(
    browser: Browser, live_server, page, project, coordinator
):
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/members/")
    form = page.locator("#add-person")
    form.get_by_label("Username").fill("kai")
    form.get_by_label("Researcher").check()
    form.get_by_label("An initial password, shown once").check()
    form.get_by_role("button", name="Add person").click()
    password = page.locator("#people-added code.initial-password").inner_text()

    newcomer = browser.new_context(base_url=live_server.url, viewport=SIZES["desktop"], locale="en-GB")
    try:
        fresh = newcomer.new_page()
        fresh.goto("/accounts/login/")
        fresh.get_by_label("Username").fill("kai")
        fresh.get_by_label("Password").fill(password)
        fresh.get_by_role("button", name="Log in").click()
        expect(fresh.get_by_role("heading", name="Choose your own password")).to_be_visible()
        fresh.screenshot(path="/tmp/people-forced-change-desktop.png", full_page=True)
        fresh.goto(f"/projects/{project.slug}/")
        expect(fresh.get_by_role("heading", name="Choose your own password")).to_be_visible()  # nothing else first
        fresh.get_by_label("Old password").fill(password)
        fresh.get_by_label("New password", exact=True).fill("a-long-Own-password-42")
        fresh.get_by_label("New password confirmation").fill("a-long-Own-password-42")
        fresh.get_by_role("button", name="Save my password").click()

        expect(fresh).to_have_url(re.compile(rf"/projects/{project.slug}/releases/$"))  # a researcher's landing
        expect(fresh.get_by_role("heading", name="Releases")).to_be_visible()
    finally:
        newcomer.close()


@pytest.mark.parametrize("size", SIZES)
def test_a_coordinator_changes_a_members_roles_on_their_row_by_keyboard(
    browser: Browser, live_server, project, coordinator, annotator, size, tmp_path
):
    """Space on the role, Tab past the roles after it to *Save roles*, Enter: four keys here (before: the
    name typed again in the form below and every role ticked again, about fifteen)."""
    from annotation.models import Membership

    annotator.first_name = "نور الهدى"
    annotator.save()
    context = browser.new_context(base_url=live_server.url, viewport=SIZES[size])
    page = context.new_page()
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/members/")
    row = page.locator("#roles-annotator")
    expect(row.get_by_label("Annotator")).to_be_checked()
    row.get_by_label("Reviewer").focus()
    page.keyboard.press("Space")
    keys = 1
    save = row.get_by_role("button", name="Save roles")
    while not save.evaluate("button => button === document.activeElement") and keys < 6:
        page.keyboard.press("Tab")
        keys += 1
    page.keyboard.press("Enter")
    assert keys + 1 == 4
    expect(page.locator(".messages")).to_contain_text("annotator (Annotator, Reviewer) is a member.")
    assert Membership.objects.get(project=project, user=annotator).roles == ["annotator", "reviewer"]
    expect(page.locator("#roles-annotator").get_by_label("Reviewer")).to_be_checked()
    _no_horizontal_scroll(page)
    page.screenshot(path=str(tmp_path / f"members-{size}.png"), full_page=True)
    context.close()
