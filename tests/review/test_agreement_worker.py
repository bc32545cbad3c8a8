"""Agreement reports in a real Celery worker: queued by the API and by a burst of reviews, computed, shown."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services.projects import project_update
from review import judging as review_judging
from review import queue as review_queue
from review.models import AgreementReport
from tests.conftest import api_as
from tests.review.conftest import all_pass, flag, submitted_pair


def review(user, item, judgments):
    slot = review_queue.review_claim(item=item, user=user)
    review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)


@pytest.mark.worker
def test_a_report_queued_through_the_api_is_computed_by_the_worker_and_shown(
    live_worker, client, project, coordinator, annotator, reviewer, second_reviewer
):
    project_update(project=project, reviewers_per_item=2)
    _, items = submitted_pair(project, annotator)
    review(reviewer, items[0], all_pass(project))
    review(second_reviewer, items[0], flag(project, "fluency", "stilted"))

    queued = api_as(coordinator).post(f"/api/projects/{project.slug}/agreement/reports/")
    assert queued.status_code == 202

    live_worker.wait_for(lambda: AgreementReport.objects.get(pk=queued.data["id"]).status == "done", timeout=60)
    report = AgreementReport.objects.get(pk=queued.data["id"])
    assert (report.attempts, report.progress) == (1, 100)
    assert report.result["scopes"]["review:fluency"]["summary"]["n_units"] == 1
    assert "review.agreement_report_compute" in live_worker.log()
    client.force_login(coordinator)
    page = client.get(reverse("agreement", args=[project.slug])).content.decode()
    assert f"Report {report.pk}" in page and 'class="heatmap"' in page


@pytest.mark.worker
def test_a_burst_of_reviews_is_computed_once_by_the_worker(live_worker, settings, project, annotator, reviewer):
    # The report is queued after 6 judgments and waits 3 s for the rest of the burst.
    settings.AGREEMENT_AUTO_JUDGMENTS = 6
    settings.AGREEMENT_AUTO_COUNTDOWN = 3
    _, first = submitted_pair(project, annotator)
    _, second = submitted_pair(project, annotator)
    for item in first + second:  # 12 judgments, one report
        review(reviewer, item, all_pass(project))

    live_worker.wait_for(lambda: AgreementReport.objects.filter(status="done").exists(), timeout=60)
    report = AgreementReport.objects.get()
    assert report.trigger == "auto"
