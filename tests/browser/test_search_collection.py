"""A coordinator collects from a search engine in Chromium: the status updates in place (htmx polling), the
Arabic QA pairs arrive right to left, and a second collection started by keyboard shows no call sent."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import log_in, nav_to
from tests.validation.test_search import KEY
from validation import search, services
from validation.models import SearchCollection

pytestmark = pytest.mark.browser

DISH = "ما هو الطبق الوطني في قطر؟"


@pytest.fixture
def arabic_project(coordinator):
    project = services.validation_project_create(
        name="أسئلة قطر", slug="qa-ara", language="ara", location="Doha, Qatar", created_by=coordinator
    )
    services.seed_queries_add(project=project, rows=[("food", "أكلات شعبية في الدوحة", "الدوحة", "")], user=coordinator)
    return project


def test_a_coordinator_watches_arabic_pairs_arrive_and_a_second_collection_costs_no_call(
    page: Page, serpapi_stub, arabic_project, coordinator
):
    log_in(page, "coordinator")
    page.goto(f"/projects/{arabic_project.slug}/validation/")
    nav_to(page, "Search collection", "Data")
    expect(page.locator("#key-hint")).to_have_text("Key: not set")
    page.get_by_label("New key").fill(KEY)
    page.get_by_label("New key").press("Enter")
    expect(page.locator("#key-hint")).to_have_text("Key: set, ends in …cdef")
    expect(page.get_by_label("Language code (hl)")).to_have_value("ar")  # from the project's language

    # A collection waiting for a worker: the page polls; the worker's progress arrives without a reload.
    waiting = search.search_collection_start(
        project=arabic_project, user=coordinator, budget=5, location="Doha, Qatar", gl="qa", hl="ar", enqueue=False
    )
    page.goto(f"/projects/{arabic_project.slug}/validation/search/{waiting.pk}/")
    expect(page.locator("#search-state")).to_have_text("Waiting for a worker")
    expect(page.locator("#search-items")).to_contain_text("No QA pairs yet.")
    search.search_collection_run(collection_id=waiting.pk)
    expect(page.locator("#search-state")).to_have_text("Done", timeout=8_000)
    cell = page.locator("#search-items td", has_text=DISH)
    expect(cell).to_have_attribute("dir", "rtl")
    expect(cell).to_have_attribute("lang", "ara")
    expect(page.locator("#search-counts")).to_contain_text("1 of 5 calls sent")
    expect(page.locator("#search-queries")).to_contain_text("Answered by the search engine")
    page.screenshot(path="/tmp/search-detail-1400.png", full_page=True)

    # A second collection, started from the keyboard: everything is answered from the stored responses.
    page.goto(f"/projects/{arabic_project.slug}/validation/search/")
    page.get_by_label("Country code (gl)").fill("qa")
    page.get_by_label("Budget (calls)").fill("5")
    page.get_by_label("Budget (calls)").press("Enter")
    expect(page.locator("#search-state")).to_have_text("Done")
    expect(page.locator("#search-counts")).to_contain_text("0 of 5 calls sent")
    expect(page.locator("#search-counts")).to_contain_text("1 answered from stored responses")
    assert len(serpapi_stub.requests) == 1
    assert SearchCollection.objects.filter(project=arabic_project).count() == 2

    page.set_viewport_size({"width": 390, "height": 844})
    for path in ("", f"{waiting.pk}/"):
        page.goto(f"/projects/{arabic_project.slug}/validation/search/{path}")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        page.screenshot(path=f"/tmp/search-390-{path.strip('/') or 'start'}.png", full_page=True)
        assert overflow <= 0, f"the page scrolls sideways by {overflow}px at 390px"
        page.screenshot(path=f"/tmp/search-390-{path.strip('/') or 'start'}.png", full_page=True)
