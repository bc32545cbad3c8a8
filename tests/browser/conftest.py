"""Playwright against Debian's Chromium and pytest-django's live server."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.factories import PASSWORD

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

expect.set_options(timeout=10_000)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium is not installed at {CHROMIUM}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def context(browser: Browser, live_server) -> Iterator[BrowserContext]:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 1000}, locale="en-GB")
    context.set_default_timeout(10_000)
    yield context
    context.close()
    _requests_finished()


def _requests_finished(timeout: float = 5.0) -> None:
    """Wait for the live server's requests in flight: closing a page sends its beacons (active time, a last
    autosave), and a request still running when the test's tables are truncated deadlocks with the TRUNCATE."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = [t for t in threading.enumerate() if "process_request_thread" in t.name and t.is_alive()]
        if not busy:
            return
        time.sleep(0.02)


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    assert not errors, f"JavaScript errors on the page: {errors}"


def log_in(page: Page, username: str, password: str = PASSWORD) -> None:
    """Log in through the real login form."""
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".topbar .who")).to_have_text(username)


@pytest.fixture(autouse=True)
def _live_database(transactional_db):
    """The live server runs in another thread: its requests must see committed data."""


def open_account_menu(page: Page) -> None:
    """Open the account menu of the top bar (under the username): API, tokens, password, log out."""
    page.locator(".topbar .account-menu summary").click()


def open_menu(page: Page, group: str) -> None:
    """Open one task menu of the project bar (a <details>), as a person clicks its summary."""
    page.locator(".crumbs summary", has_text=group).click()


def nav_to(page: Page, label: str, group: str | None = None) -> None:
    """Follow a link of the project bar, opening its task menu first when it sits in one."""
    if group:
        open_menu(page, group)
    page.locator(".crumbs").get_by_role("link", name=label, exact=True).click()
