"""The calculator page in a real browser: the upload swaps in the results through htmx (strict CSP, no JS errors)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import log_in
from tests.review.test_agreement_calculator import krippendorff_csv

pytestmark = [pytest.mark.browser, pytest.mark.one_engine]  # statistics from an uploaded file: no query


def test_coordinator_uploads_ratings_and_sees_alpha_with_its_interval_without_a_reload(
    page: Page,
    coordinator,
    tmp_path,
):
    ratings = tmp_path / "ratings.csv"
    ratings.write_text(krippendorff_csv())
    log_in(page, coordinator.username)
    page.locator(".account summary").click()  # the account menu
    page.get_by_role("link", name="Agreement calculator").click()
    page.evaluate("window.notReloaded = true")

    page.get_by_label("Ratings CSV").set_input_files(str(ratings))
    page.get_by_label("Level of measurement").select_option("interval")
    page.get_by_role("button", name="Compute").click()

    alpha_row = page.locator("#agreement-result tr", has=page.get_by_role("rowheader", name="Krippendorff's alpha"))
    expect(alpha_row.first).to_contain_text("0.849")
    expect(alpha_row.first).to_contain_text("[0.")  # the interval
    assert page.evaluate("window.notReloaded") is True
    page.screenshot(path=str(tmp_path / "calculator.png"), full_page=True)


def test_a_bad_file_shows_the_line_and_column_in_place(page: Page, annotator, tmp_path):
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("unit,rater,value\nq1,a,1\nq1,b,high\n")
    log_in(page, annotator.username)
    page.goto("/agreement/calculator/")

    page.get_by_label("Ratings CSV").set_input_files(str(ratings))
    page.get_by_label("Level of measurement").select_option("ordinal")
    page.get_by_role("button", name="Compute").click()

    expect(page.locator(".field.has-error")).to_contain_text("line 3, column 'value': 'high' is not a number")
