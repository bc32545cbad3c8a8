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

    AgreementReport.objects.filter(pk=waiting.pk).update(progress_done=40, stage="Computing Grammaticality / fluency")
    expect(page.locator("#agreement-status")).to_contain_text("Computing Grammaticality / fluency")
    reports.agreement_report_compute(report_id=waiting.pk, bootstrap=10)

    expect(page.locator("#agreement-report")).to_contain_text(f"Report {waiting.pk}", timeout=15_000)
    expect(page.locator("#review-fluency")).to_contain_text("Krippendorff's alpha")
    expect(page.locator("#agreement-status")).to_contain_text("No report is being computed.")
    page.screenshot(path=str(tmp_path / "agreement.png"), full_page=True)


def test_a_report_in_three_scripts_reads_right_at_desktop_and_phone_width(
    page: Page, project, coordinator, annotator, tmp_path
):
    """The coordinator's walk of a streamed report: strata labelled in Cantonese (with a character outside the BMP),
    Egyptian Arabic and Bavarian, reviewers named in those scripts; each label right to left where it is Arabic,
    opened by keyboard alone, and nothing wider than a phone."""
    from annotation.services.members import membership_set
    from annotation.services.projects import project_update
    from review import judging as review_judging
    from review import queue as review_queue
    from review.models import FinalLabel
    from tests import factories
    from tests.review.conftest import all_pass, flag, submitted_pair

    project_update(project=project, reviewers_per_item=2)
    reviewers = [factories.user(name) for name in ("林𠮶", "منى", "Sepp")]
    for reviewer in reviewers:
        membership_set(project=project, user=reviewer, roles={"reviewer"})
    labels = [("食物 𠮶", "مصر"), ("Brauchtum in Bayern", "Oberbayern")]
    for (topic, region), evidences in zip(labels, [("深水埗", "姓陳"), ("深水埗", "姓陳")], strict=True):
        pair, items = submitted_pair(project, annotator, evidences=evidences)
        FinalLabel.objects.create(project=project, pair=pair, kind="topic", value=topic, method="agreement")
        FinalLabel.objects.create(project=project, pair=pair, kind="region", value=region, method="agreement")
        for number, item in enumerate(items):
            for position, reviewer in enumerate(reviewers[:2] if number == 0 else reviewers[1:]):
                slot = review_queue.review_claim(item=item, user=reviewer)
                verdicts = flag(project, "fluency", "holprig") if position == 1 and number == 0 else all_pass(project)
                review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=verdicts)
    report, _ = reports.agreement_report_request(project=project, enqueue=False)
    reports.agreement_report_compute(report_id=report.pk, bootstrap=50)

    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, coordinator.username)
    page.goto(f"/projects/{project.slug}/agreement/")
    fluency = page.locator("#review-fluency")
    expect(fluency).to_contain_text("Krippendorff's alpha")
    # By keyboard alone: focus the "By region" summary and open it with Enter.
    summary = fluency.locator("details.strata summary", has_text="By region")
    summary.focus()
    page.keyboard.press("Enter")
    arabic = fluency.locator("details.strata h4", has_text="مصر")
    expect(arabic).to_be_visible()
    assert arabic.evaluate("element => getComputedStyle(element).direction") == "rtl"
    fluency.locator("details.strata summary", has_text="By topic").click()
    expect(fluency.locator("details.strata h4", has_text="食物 𠮶")).to_be_visible()
    expect(fluency.locator("details.strata h4", has_text="Brauchtum in Bayern")).to_be_visible()
    header = fluency.locator(".heatmap thead th", has_text="منى")
    assert header.evaluate("element => getComputedStyle(element).direction") == "rtl"
    page.screenshot(path=str(tmp_path / "agreement-1440.png"), full_page=True)
    fluency.locator("details.strata", has_text="By region").screenshot(path=str(tmp_path / "regions-1440.png"))

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(page.locator("#review-fluency")).to_contain_text("Krippendorff's alpha")
    for details in page.locator("details.strata").all():
        details.evaluate("element => { element.open = true; }")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow} px at 390 px"
    page.screenshot(path=str(tmp_path / "agreement-390.png"), full_page=True)
    page.locator("#review-fluency").screenshot(path=str(tmp_path / "fluency-390.png"))
