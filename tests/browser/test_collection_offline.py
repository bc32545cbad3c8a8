"""Offline, in the embedded default (no broker: jobs run on threads of the web process, common/jobs.py), starting a
Wikipedia collection answers at once, its page names the reason within seconds, and Resume takes it up once
Wikipedia can be reached, the page showing the progress as it goes."""

from __future__ import annotations

import re
import socket
import time

import pytest
from playwright.sync_api import Page, expect

from tests import factories
from tests.browser.conftest import log_in
from tests.wikiqa.wiki_replay import Replay, ReplayServer

pytestmark = pytest.mark.browser


def closed_port() -> int:
    """A local port nothing listens on: every connection to it is refused, as offline."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_offline_a_collection_answers_at_once_names_the_reason_and_resumes_with_its_progress_once_online(
    page: Page, coordinator, settings
):
    settings.JOBS_IN_THREADS = True
    settings.WIKIPEDIA_REQUEST_INTERVAL = 0
    port = closed_port()
    settings.WIKIPEDIA_API_URL = f"http://127.0.0.1:{port}/{{wiki}}/w/api.php"
    project = factories.project(coordinator, slug="bar-de", local_language="bar", standard_language="deu")
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/collect/")
    page.locator("textarea[name=titles]").fill("Weißwurscht\nMünchn")

    started = time.monotonic()
    page.get_by_role("button", name="Start collecting").click()
    page.wait_for_url(re.compile(r"/collections/\d+/$"))
    answered = time.monotonic() - started
    error = page.locator("#collection-error")
    expect(error).to_contain_text(f"network error reaching 127.0.0.1:{port} for 'Weißwurscht'")
    reason_shown = time.monotonic() - started

    # In the request the first title's retries kept the page waiting 16 s; now it answers and polls.
    assert answered < 3, f"the start answered after {answered:.1f} s"
    assert reason_shown < 6, f"the reason showed after {reason_shown:.1f} s"
    expect(error).to_contain_text("Connection refused")
    expect(error).to_contain_text("resume the collection once the server is online")
    expect(page.locator("#collection-state")).to_have_text("Failed")
    expect(page.locator("#collection-status")).to_contain_text("0 of 2 titles")

    with ReplayServer(Replay("bar_to_de", "bar_redirect")) as wikipedia:
        settings.WIKIPEDIA_API_URL = wikipedia.api_url
        settings.JOB_STEP_DELAY = 3.0  # each title stays on the page long enough for a poll (every 2 s) to show it
        page.get_by_role("button", name="Resume").click()

        status = page.locator("#collection-status")
        expect(status).to_contain_text("1 of 2 titles · kept 1")
        expect(status.locator("progress")).to_have_attribute("value", "50")
        expect(page.locator("#collection-state")).to_have_text("Done", timeout=15_000)
        expect(status).to_contain_text("2 of 2 titles · kept 2 (2 new pairs)")
        expect(error).to_have_count(0)
