"""Judging at speed in Chromium: two items judged by keyboard only, submit-and-next on one key, a flag that
needs its reason; the item, its evidence and the judgment on one 1440x900 screen. And the coordinator's
release readiness panel."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from review.models import Judgment, ReviewSlot
from tests.browser.conftest import log_in
from tests.exports.conftest import authored_pair
from tests.review.conftest import STANDARD_TEXT, submitted_pair

pytestmark = pytest.mark.browser


def _in_view(page: Page, selector: str) -> None:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    viewport = page.viewport_size
    assert viewport is not None
    height = viewport["height"]
    assert box["y"] >= 0 and box["y"] + box["height"] <= height, f"{selector} is outside the first screen: {box}"


def test_two_items_judged_by_keyboard_only_with_submit_and_next(page: Page, project, annotator, reviewer):
    _, items = submitted_pair(project, annotator, standard_text=STANDARD_TEXT)
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, "reviewer")
    page.goto(f"/projects/{project.slug}/review/")
    page.get_by_role("button", name="Review the next QA item").focus()
    page.keyboard.press("Enter")

    # First item: everything on one screen, keys on the buttons; A passes every criterion, Enter submits and goes on.
    expect(page.locator("#judgment-form")).to_be_visible()
    page.wait_for_load_state("load")  # the key handler is a module script: it runs once the page has loaded
    first = page.locator(".item-summary .q").inner_text()
    for selector in (
        ".item-summary .q",
        ".evidence-text mark",
        "#judgment-submit-next",
        "fieldset.criterion:last-of-type",
    ):
        _in_view(page, selector)
    assert page.evaluate("document.documentElement.scrollHeight") <= 900 + 1
    expect(page.locator('fieldset[data-criterion="fluency"] label.pass kbd')).to_have_text("1")
    expect(page.locator('fieldset[data-criterion="standalone"] label.flag kbd')).to_have_text("W")
    page.screenshot(path="/tmp/rev-review-1440.png")
    page.keyboard.press("?")
    expect(page.locator("#review-keys")).to_be_visible()
    page.screenshot(path="/tmp/rev-review-keys-1440.png")
    page.keyboard.press("Escape")
    expect(page.locator("#review-keys")).to_be_hidden()
    page.keyboard.press("a")
    expect(page.locator('fieldset[data-criterion="appropriateness"] input[value="pass"]')).to_be_checked()
    page.keyboard.press("Enter")

    # Second item: pass two, flag one. The flag opens its reason box; without a reason it does not go.
    expect(page.locator(".message.success")).to_contain_text("Review recorded")
    expect(page.locator(".item-summary .q")).not_to_have_text(first)
    page.wait_for_load_state("load")
    page.keyboard.press("1")
    page.keyboard.press("3")
    page.keyboard.press("w")
    reason = page.locator('fieldset[data-criterion="standalone"] textarea')
    expect(reason).to_be_visible()
    expect(reason).to_be_focused()
    expect(reason).to_have_value("")  # the key chose the verdict; it typed nothing
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    expect(page.locator("#judgment-form")).to_be_visible()  # refused in the browser: the reason is required
    expect(reason).to_be_focused()  # and the reason box is where the typing goes
    assert ReviewSlot.objects.filter(status="done").count() == 1
    page.keyboard.type("Which restaurant? The question needs the article.")
    page.screenshot(path="/tmp/rev-review-flag-1440.png")
    page.keyboard.press("Control+Enter")

    expect(page.locator(".message.info")).to_contain_text("Nothing is waiting")
    assert ReviewSlot.objects.filter(item__in=items, status="done").count() == 2
    flag = Judgment.objects.get(verdict="flag")
    assert (flag.criterion, flag.comment) == ("standalone", "Which restaurant? The question needs the article.")


@pytest.mark.one_engine  # layout only: judging by keyboard above runs on both engines
def test_the_review_screen_on_a_phone(page: Page, project, annotator, reviewer):
    submitted_pair(project, annotator, standard_text=STANDARD_TEXT)
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, "reviewer")
    page.goto(f"/projects/{project.slug}/review/")
    page.get_by_role("button", name="Review the next QA item").click()
    expect(page.locator("#judgment-form")).to_be_visible()
    page.locator('fieldset[data-criterion="standalone"] label.flag').click()
    expect(page.locator('fieldset[data-criterion="standalone"] textarea')).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing runs off the side
    page.screenshot(path="/tmp/rev-review-390.png", full_page=True)


def test_the_coordinator_sees_what_is_unfinished_before_building(
    page: Page, project, annotator, coordinator, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    authored_pair(project, annotator)
    authored_pair(project, annotator, evidence=("深水埗", "六十幾年"), status="rejected")
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/releases/")

    panel = page.locator("#readiness")
    expect(panel.locator('li[data-check="pairs_not_labelled"] .readiness-count')).to_have_text("1")
    expect(panel.locator('li[data-check="items_not_verified"] .readiness-count')).to_have_text("2")
    expect(panel.locator('li[data-check="items_rejected"] .readiness-count')).to_have_text("2")
    expect(panel.locator('li[data-check="splits_small"]')).to_contain_text("Splits that are empty or tiny")
    expect(page.locator("#build-release")).to_contain_text("Build anyway")
    page.screenshot(path="/tmp/rev-readiness-1440.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path="/tmp/rev-readiness-390.png", full_page=True)

    page.locator('li[data-check="items_rejected"]').get_by_role("link", name="Go to the work").click()
    expect(page).to_have_url(f"/projects/{project.slug}/items/?status=rejected")
    page.go_back()
    page.locator("#build-release").click()
    expect(page.locator("#release-state")).to_have_text("Published")
    expect(page.locator("#release-unfinished")).to_contain_text("Rejected items")


def test_adjudication_by_keyboard_starts_with_nothing_chosen(page: Page, project, annotator, coordinator):
    from review import labels as review_labels
    from review.models import FinalLabel
    from tests import factories

    other = factories.user("coordinator2")
    from annotation.services.members import membership_set

    membership_set(project=project, user=other, roles={"coordinator"})
    pair, _ = submitted_pair(project, annotator, standard_text=STANDARD_TEXT)
    for user, topic in ((coordinator, "science-math-technology"), (other, "history")):
        review_labels.label_set(pair=pair, user=user, kind="topic", value=topic)
        review_labels.label_set(pair=pair, user=user, kind="region", value="local")
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/adjudication/")

    row = page.locator("#adjudication tbody tr").first
    expect(row).to_contain_text("Science, math & technology")
    expect(row.locator("select")).to_have_value("")
    page.screenshot(path="/tmp/rev-adjudication-1440.png")
    row.get_by_role("button", name="Set", exact=True).focus()
    page.keyboard.press("Enter")  # Set with nothing chosen: the browser asks for a choice, nothing is recorded
    expect(row.locator("select")).to_be_focused()
    assert not FinalLabel.objects.filter(pair=pair, kind="topic").exists()
    row.get_by_role("button", name="Use “Science, math & technology”").focus()
    page.keyboard.press("Enter")

    expect(page.locator(".message.success")).to_contain_text("Final label recorded")
    assert FinalLabel.objects.get(pair=pair, kind="topic").value == "science-math-technology"
