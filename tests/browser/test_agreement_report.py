"""The agreement page in a real browser: a running report's progress is polled by htmx, then its figures appear."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from review import reports
from review.models import AgreementReport
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser


def test_the_page_polls_a_queued_report_and_shows_its_figures_when_done(page: Page, project, coordinator, tmp_path):
    waiting, _ = reports.agreement_report_request(project=project, enqueue=False)  # no worker: we compute it below
    log_in(page, coordinator.username)
    page.goto(f"/projects/{project.slug}/agreement/")
    expect(page.locator("#agreement-status")).to_contain_text("Queued")

    AgreementReport.objects.filter(pk=waiting.pk).update(progress_done=40, stage="Computing review:fluency (1 of 6)")
    expect(page.locator("#agreement-status")).to_contain_text("Computing review:fluency")
    reports.agreement_report_compute(report_id=waiting.pk, bootstrap=10)

    expect(page.locator("#agreement-report")).to_contain_text(f"Report {waiting.pk}", timeout=15_000)
    expect(page.locator("#review-fluency")).to_contain_text("Krippendorff's alpha")
    expect(page.locator("#agreement-status")).to_contain_text("No report is being computed.")
    page.screenshot(path=str(tmp_path / "agreement.png"), full_page=True)
