"""Hostile text in Chromium: every page that shows user-written text, with a dialog and console watcher.

The world is the one of tests/security/test_hostile_text.py (one payload in every user-writable field).
Nothing may open a dialog, log a Content-Security-Policy refusal (an injected script the policy stopped is
still an escaping bug) or raise; the text reads as it was written.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import BrowserContext

from tests.security.hostile import PAYLOADS, build_hostile_world

# How hostile text reads in Chromium does not depend on the engine; its way through the database is checked on
# both by tests/security/test_hostile_text.py.
pytestmark = [pytest.mark.browser, pytest.mark.one_engine]

# The payloads that would run if anything were unescaped, and those that only test how text reads.
# (All payloads go through tests/security/test_hostile_text.py's HTML check; these few through a browser too.)
BROWSER_PAYLOADS = ["img-onerror", "single-quote-breakout", "textarea-breakout", "rtl-override"]

PAGE_TEXT = """() => {
    const values = [...document.querySelectorAll("input, textarea")].map((field) => field.value);
    return document.body.textContent + "\\n" + values.join("\\n");
}"""


def sign_in(context: BrowserContext, live_server, user) -> None:
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.clear_cookies()
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])


@pytest.fixture
def no_tasks(monkeypatch, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr("wikiqa.tasks.collection_run.delay", lambda collection_id: None)
    monkeypatch.setattr("annotation.tasks.import_job_run.delay", lambda job_id: None)


@pytest.mark.parametrize("name", BROWSER_PAYLOADS)
def test_hostile_text_never_runs_and_reads_as_written(context, live_server, coordinator, no_tasks, name):
    payload = PAYLOADS[name]
    world = build_hostile_world(payload, coordinator)
    dialogs: list[str] = []
    console: list[str] = []
    errors: list[str] = []
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: errors.append(str(error)))
    signed_in = None
    for role, url, literal in world.pages:
        if role != signed_in:
            sign_in(context, live_server, world.users[role])
            signed_in = role

        response = page.goto(url, wait_until="load")
        page.wait_for_timeout(150)  # htmx's load triggers and autofocus handlers would have fired

        assert response is not None and response.status == 200, f"{url} as {role}"
        assert page.url.endswith(url), f"{url} as {role} went to {page.url}"  # an injected hx-get did not navigate
        if literal:
            assert payload in page.evaluate(PAGE_TEXT), f"{url} as {role} does not read as written"
        refused = [line for line in console if "Content Security Policy" in line or "xss-" in line]
        assert not (dialogs or refused or errors), f"{url} as {role}: {dialogs} {refused} {errors}"
    page.close()


def test_the_watchers_see_a_script_that_runs(context):
    """Outside our pages (no CSP on about:blank), the same watchers catch an executing payload."""
    dialogs: list[str] = []
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    page.set_content(f"<p>{PAYLOADS['img-onerror']}</p>")
    page.wait_for_timeout(300)

    assert dialogs == ["xss-2"]
    page.close()
