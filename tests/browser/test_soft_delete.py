"""In Chromium: a coordinator deletes a pair, finds it in Deleted, restores it; the audit log says so."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import log_in, nav_to
from tests.exports.conftest import authored_pair

pytestmark = pytest.mark.browser


def test_a_coordinator_deletes_a_pair_and_restores_it(page: Page, project, annotator, coordinator):
    pair = authored_pair(project, annotator)

    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/pairs/{pair.pk}/")
    page.get_by_role("button", name="Delete pair").click()

    expect(page.locator(".messages")).to_contain_text(f"Pair {pair.pk} deleted")
    expect(page.locator("table.table")).not_to_contain_text(pair.local_title)
    nav_to(page, "Deleted", "Data")
    row = page.locator("#deleted-pairs tr", has_text=pair.local_title)
    expect(row).to_contain_text("coordinator")
    row.get_by_role("button", name="Restore").click()

    expect(page.locator(".messages")).to_contain_text(f"Pair {pair.pk} restored with its items")
    expect(page.locator("#deleted-pairs")).to_contain_text("No deleted pairs.")
    nav_to(page, "Pairs", "Data")
    expect(page.locator("table.table")).to_contain_text(pair.local_title)
    nav_to(page, "Audit log", "Settings")
    expect(page.locator("#audit-events")).to_contain_text("Item: submitted for review")
    page.get_by_label("Object", exact=True).select_option("pair")  # htmx swaps the list in place

    expect(page).to_have_url(re.compile(r"object_type=pair"))
    expect(page.locator("#audit-events")).not_to_contain_text("Item: submitted for review")
    expect(page.locator("#audit-events tbody tr").first).to_contain_text("Pair restored")
    expect(page.locator("#audit-events")).to_contain_text("Pair deleted")
