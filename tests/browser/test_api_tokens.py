"""A person signs in through the form, makes an API token, sees it once, and revokes it; a lockout keeps input."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from accounts.models import ApiToken
from tests import factories
from tests.browser.conftest import log_in, open_account_menu
from tests.factories import PASSWORD

pytestmark = pytest.mark.browser


def test_a_person_makes_an_api_token_sees_it_once_and_revokes_it(page: Page, annotator):
    log_in(page, "annotator")
    open_account_menu(page)
    page.get_by_role("link", name="API tokens").click()

    page.get_by_label("What it is for").fill("nightly export")
    page.get_by_role("button", name="Make a token").click()

    key = page.locator("#new-token code.token-key").inner_text()
    assert len(key) == 40 and ApiToken.objects.get(user=annotator).prefix == key[:8]
    row = page.locator("#tokens tbody tr").first
    expect(row).to_contain_text("nightly export")
    expect(row).to_contain_text("Active")
    for width, height, name in ((1440, 900, "desktop"), (390, 844, "phone")):
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=f"/tmp/sec-tokens-{name}.png", full_page=True)

    row.get_by_role("button", name="Revoke").click()

    expect(page.locator("#tokens tbody tr").first).to_contain_text("Revoked")
    expect(page.locator("#new-token")).to_have_count(0)  # the key is not shown again
    assert ApiToken.objects.get(user=annotator).revoked_at is not None


def test_a_locked_out_sign_in_says_why_and_keeps_the_name(page: Page, settings):
    # A name of its own: the lock holds for the rest of the run for this name from this address.
    factories.user("lockout_browser")
    settings.LOGIN_MAX_FAILURES = 2
    page.goto("/accounts/login/")
    for password in ("wrong", "wrong", PASSWORD):
        page.get_by_label("Username").fill("lockout_browser")
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()

    expect(page.locator(".error")).to_contain_text("Too many failed attempts")
    expect(page.get_by_label("Username")).to_have_value("lockout_browser")
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path="/tmp/sec-lockout-phone.png", full_page=True)
