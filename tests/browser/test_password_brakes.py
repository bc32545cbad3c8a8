"""The password pages in a browser: the reset form says when it is braked (keyboard only, at phone width), and
the Members page offers a new invitation link only for a pending invitee of this project."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from accounts import people
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser


def test_the_reset_form_says_when_too_many_links_were_asked_for(page, annotator):
    page.set_viewport_size({"width": 390, "height": 844})
    for _ in range(4):
        page.goto("/accounts/password/reset/")
        field = page.get_by_label("Email")
        field.fill(annotator.email)
        field.press("Enter")

    expect(page.get_by_text("Too many attempts; try again in")).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1
    page.screenshot(path="/tmp/password-reset-braked-phone.png", full_page=True)


def test_the_members_page_offers_a_new_link_only_for_this_projects_pending_invitee(page, project, coordinator):
    people.person_add(project=project, actor=coordinator, values={"username": "fresh", "roles": ["annotator"]})
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/members/")

    rows = page.locator("tr", has=page.get_by_role("button", name="New invitation link"))
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("fresh")
    page.screenshot(path="/tmp/members-new-link-desktop.png", full_page=True)
