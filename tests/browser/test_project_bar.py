"""The project bar in Chromium: one row for a coordinator of each kind at 1440 px, two rows on a phone; the task
menus open and close from the keyboard; and the new-project forms' slug check works under the `v` flag."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from playwright.sync_api import Browser, Page, expect

from annotation.models import Project
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.one_engine]  # the bar's layout: no query changes it

HOMES = [
    "/projects/yue-cmn/",
    "/projects/doha-val/validation/",
    "/projects/bavaria-trivia/trivia/",
    "/projects/bavaria-companies/entities/",
]


@pytest.fixture
def demo(_live_database):
    call_command("demo_setup", stdout=open("/dev/null", "w"))  # noqa: SIM115 -- closed with the process


def bar_heights(browser: Browser, live_server, width: int, height: int) -> dict[str, float]:
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": height})
    page = context.new_page()
    log_in(page, "coordinator", "localqa-demo")
    heights = {}
    for url in HOMES:
        page.goto(url)
        box = page.locator("header.topbar").bounding_box()
        assert box is not None
        heights[url] = box["height"]
        # nothing of the bar sticks out of the window
        assert page.evaluate("document.querySelector('header.topbar').scrollWidth") <= width
    context.close()
    return heights


def test_a_coordinators_bar_is_one_row_at_1440_px_and_two_on_a_phone(browser: Browser, live_server, demo):
    wide = bar_heights(browser, live_server, 1440, 900)
    phone = bar_heights(browser, live_server, 390, 844)

    row = min(wide.values())
    assert all(h == row for h in wide.values()), wide  # the same single row on every kind's page
    assert row < 50, wide
    # two rows at most: brand, project and account menu; then the task groups
    assert all(h < 1.8 * row for h in phone.values()), phone


def test_the_task_menus_work_from_the_keyboard(page: Page, demo):
    log_in(page, "coordinator", "localqa-demo")
    page.goto("/projects/yue-cmn/")
    data = page.locator(".crumbs details.navgroup", has_text="Data")
    members = page.locator(".crumbs").get_by_role("link", name="Members")
    expect(members).to_be_hidden()

    page.locator(".crumbs summary", has_text="Settings").focus()
    page.keyboard.press("Enter")
    expect(members).to_be_visible()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(members).to_be_focused()
    page.keyboard.press("Escape")  # closes the menu, focus back on its summary
    expect(members).to_be_hidden()
    expect(page.locator(".crumbs summary", has_text="Settings")).to_be_focused()

    page.locator(".crumbs summary", has_text="Data").focus()
    page.keyboard.press("Space")
    expect(data).to_have_attribute("open", "")
    page.locator(".crumbs summary", has_text="Review").click()  # one menu open at a time
    expect(data).not_to_have_attribute("open", "")
    page.locator("main h1").click()  # a click elsewhere closes it
    expect(page.locator(".crumbs details[open]")).to_have_count(0)
    page.locator(".crumbs summary", has_text="Data").click()
    page.locator(".crumbs").get_by_role("link", name="Pairs").click()
    expect(page).to_have_url(f"{page.url.split('/projects/')[0]}/projects/yue-cmn/pairs/")
    expect(page.locator(".crumbs summary", has_text="Data")).to_have_css("font-weight", "600")  # its group


@pytest.mark.parametrize("form", ["/validation/new/", "/trivia/new/", "/entities/new/"])
def test_the_browser_refuses_a_bad_slug_and_the_server_too(page: Page, coordinator, form):
    coordinator.user_permissions.add(Permission.objects.get_by_natural_key("add_project", "annotation", "project"))
    log_in(page, "coordinator")
    page.goto(form)
    slug = page.locator("#id_slug")
    # exact: the entity form's attribute rows have labels of their own ("Attribute 1 name")
    page.get_by_label("Name", exact=True).fill("Doha validation")

    # The pattern compiles under the `v` flag (an invalid one is ignored: every value would match).
    slug.fill("Doha Val!")
    assert slug.evaluate("e => e.validity.patternMismatch") is True
    slug.fill("doha-val_2")
    assert slug.evaluate("e => e.validity.patternMismatch") is False
    slug.fill("Doha Val!")
    page.get_by_role("button", name="Create").click()
    assert page.url.endswith(form)  # the browser kept the form back
    assert not Project.all_objects.exists()

    # Past the browser's check (as a script or an old browser would be), the server says what is wrong. (The
    # entity form pre-fills no attribute: one is given, so the slug is the one thing wrong.)
    slug.evaluate("e => e.removeAttribute('pattern')")
    if form == "/entities/new/":
        page.get_by_label("Attribute 1 name").fill("Founding year")
        page.get_by_label("Attribute 1 question about the entity").fill("When was {entity} founded?")
        page.get_by_label("Attribute 1 question about the value").fill("Which company was founded in {value}?")
        page.get_by_label("Attribute 1 statement of the fact").fill("{entity} was founded in {value}.")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#id_slug_error")).to_contain_text("is not a slug")
    expect(page.locator("#id_slug")).to_have_value("Doha Val!")
    expect(page.get_by_label("Name", exact=True)).to_have_value("Doha validation")
    assert not Project.all_objects.exists()
    page.goto("/")
    expect(page.locator("h1")).to_have_text("Your projects")
