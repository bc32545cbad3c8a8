"""The agreement page, its downloads, the API and `manage.py agreement_compute SLUG`, through their interfaces."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.services.projects import project_update
from review import judging as review_judging
from review import queue as review_queue
from review import reports
from review.models import AgreementReport
from review.views.agreement import heat_class, history_chart
from tests.conftest import api_as
from tests.review.conftest import all_pass, flag, submitted_pair


def review(user, item, judgments):
    slot = review_queue.review_claim(item=item, user=user)
    review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)


@pytest.fixture
def reviewed(project, annotator, reviewer, second_reviewer):
    """Two items, both reviewed by two reviewers who disagree on the fluency of the second."""
    project_update(project=project, reviewers_per_item=2)
    _, items = submitted_pair(project, annotator)
    review(reviewer, items[0], all_pass(project))
    review(second_reviewer, items[0], all_pass(project))
    review(reviewer, items[1], all_pass(project))
    review(second_reviewer, items[1], flag(project, "fluency", "stilted"))
    return items


def compute(project, bootstrap=50):
    report, _ = reports.agreement_report_request(project=project, enqueue=False)
    return reports.agreement_report_compute(report_id=report.pk, bootstrap=bootstrap)


def test_coordinator_sees_every_statistic_the_heat_map_the_chart_and_the_contested_item(
    client, project, coordinator, reviewed
):
    compute(project)
    client.force_login(coordinator)

    response = client.get(reverse("agreement", args=[project.slug]))

    page = response.content.decode()
    assert response.status_code == 200
    for label in ("Krippendorff&#x27;s alpha", "Percent agreement", "Fleiss&#x27; kappa", "Gwet&#x27;s AC1"):
        assert label in page
    assert 'class="heatmap"' in page and "reviewer2" in page
    assert "<svg" in page and "<polyline" in page
    assert reverse("item_history", args=[project.slug, reviewed[1].pk]) in page
    assert reviewed[1].question in page
    assert "<script" not in page.split("</head>")[1]  # no inline script (CSP)
    # In the order computed, whatever order PostgreSQL's jsonb keeps keys in.
    assert page.index('id="review-fluency"') < page.index('id="label-topic"') < page.index('id="screening"')
    table = page[page.index('id="review-fluency"') :]
    assert table.index("Krippendorff") < table.index("Percent agreement") < table.index("Gwet")


def test_a_reviewer_sees_the_figures_but_not_who_agrees_with_whom(client, project, reviewer, reviewed):
    compute(project)
    client.force_login(reviewer)

    page = client.get(reverse("agreement", args=[project.slug])).content.decode()

    assert "Percent agreement" in page
    assert 'class="heatmap"' not in page
    assert "By annotator" not in page and "By topic" in page
    assert "Compute a report now" not in page
    assert "Per-rater figures are shown to coordinators only." in page


def test_the_compute_button_queues_one_report_and_the_page_polls_it(client, project, coordinator, monkeypatch):
    sent = []
    monkeypatch.setattr("review.tasks.agreement_report_task.apply_async", lambda args, countdown: sent.append(args))
    client.force_login(coordinator)

    with_commit = client.post(reverse("agreement_compute", args=[project.slug]), follow=True)
    again = client.post(reverse("agreement_compute", args=[project.slug]), follow=True)

    report = AgreementReport.objects.get()
    assert report.status == "pending" and report.trigger == "page" and report.requested_by == coordinator
    assert "queued" in with_commit.content.decode() and "already queued" in again.content.decode()
    assert 'hx-trigger="every 2s"' in again.content.decode()
    polled = client.get(reverse("agreement", args=[project.slug]), {"status": "1"}, headers={"HX-Request": "true"})
    assert polled.status_code == 200 and "HX-Refresh" not in polled
    assert "<html" not in polled.content.decode() and "Queued" in polled.content.decode()

    reports.agreement_report_compute(report_id=report.pk, bootstrap=10)
    finished = client.get(reverse("agreement", args=[project.slug]), {"status": "1"}, headers={"HX-Request": "true"})
    assert finished["HX-Refresh"] == "true"


def test_a_project_without_reports_says_so(client, project, coordinator):
    client.force_login(coordinator)
    page = client.get(reverse("agreement", args=[project.slug])).content.decode()
    assert "No agreement report yet." in page


def test_downloads_are_the_stored_result_as_json_and_csv(client, project, coordinator, reviewed):
    report = compute(project)
    client.force_login(coordinator)

    as_json = client.get(reverse("agreement_download", args=[project.slug, report.pk, "json"]))
    as_csv = client.get(reverse("agreement_download", args=[project.slug, report.pk, "csv"]))

    assert json.loads(as_json.content)["scopes"] == report.result["scopes"]
    rows = list(csv.reader(io.StringIO(as_csv.content.decode())))
    assert rows == [[str(cell) for cell in row] for row in reports.report_csv_rows(report.result)]
    assert client.get(reverse("agreement_download", args=[project.slug, report.pk, "xml"])).status_code == 404


def test_the_download_of_a_report_not_done_is_404(client, project, coordinator):
    report, _ = reports.agreement_report_request(project=project, enqueue=False)
    client.force_login(coordinator)
    assert client.get(reverse("agreement_download", args=[project.slug, report.pk, "json"])).status_code == 404


def test_the_page_reads_a_fixed_number_of_queries(
    client, project, coordinator, reviewed, django_assert_max_num_queries
):
    for _ in range(3):
        report = compute(project)
        AgreementReport.objects.filter(pk=report.pk).update(fingerprint="sha256:older")  # force a real recompute
    client.force_login(coordinator)
    with django_assert_max_num_queries(12):
        assert client.get(reverse("agreement", args=[project.slug])).status_code == 200


def test_rater_names_with_markup_are_escaped(client, project, coordinator, reviewed, reviewer):
    reviewer.username = "<b>bold</b>"
    reviewer.save(update_fields=["username"])
    compute(project)
    client.force_login(coordinator)

    page = client.get(reverse("agreement", args=[project.slug])).content.decode()

    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page


# Drawing


def test_heat_classes_cover_the_kappa_range():
    assert [heat_class(v) for v in (None, -0.2, 0.0, 0.55, 0.99, 1.0)] == [
        "heat-na",
        "heat-neg",
        "heat-0",
        "heat-5",
        "heat-9",
        "heat-10",
    ]


def test_the_chart_puts_one_point_per_report_and_skips_undefined_alphas():
    headline = {"review:fluency": {"label": "Fluency", "alpha": 1.0}, "screening": {"label": "S", "alpha": None}}
    later = {"review:fluency": {"label": "Fluency", "alpha": 0.0}}

    chart = history_chart([(1, None, headline), (2, None, later)])

    (series,) = chart["series"]
    assert [dot["y"] for dot in series["dots"]] == [chart["top"], chart["plot_bottom"]]
    assert len(series["points"].split()) == 2
    assert history_chart([(1, None, {"screening": {"label": "S", "alpha": None}})]) is None


# API


def test_the_api_lists_queues_and_returns_every_statistic(project, coordinator, reviewed, monkeypatch):
    monkeypatch.setattr("review.tasks.agreement_report_task.apply_async", lambda args, countdown: None)
    client = api_as(coordinator)
    base = f"/api/projects/{project.slug}/agreement/reports/"

    queued = client.post(base)
    assert queued.status_code == 202 and queued.data["status"] == "pending"
    assert client.post(base).status_code == 200  # the same waiting report
    reports.agreement_report_compute(report_id=queued.data["id"], bootstrap=20)

    listed = client.get(base)
    detail = client.get(queued.data["url"])

    assert [row["id"] for row in listed.data] == [queued.data["id"]]
    assert listed.data[0]["headline"]["review:fluency"]["n_units"] == 2
    stored = AgreementReport.objects.get(pk=queued.data["id"])
    assert detail.data["result"] == stored.result
    assert detail.data["status"] == "done" and detail.data["fingerprint"] == stored.fingerprint


def test_reviewers_get_the_api_result_without_per_rater_figures(project, reviewer, reviewed):
    report = compute(project)

    detail = api_as(reviewer).get(f"/api/projects/{project.slug}/agreement/reports/{report.pk}/")

    fluency = detail.data["result"]["scopes"]["review:fluency"]
    assert fluency["summary"]["pairs"] == [] and "annotator" not in fluency["strata"]
    assert fluency["summary"]["statistics"] == report.result["scopes"]["review:fluency"]["summary"]["statistics"]


# The command


def test_the_command_computes_and_stores_the_report_with_progress(project, reviewed):
    out = io.StringIO()

    call_command("agreement_compute", project.slug, "--bootstrap", "20", stdout=out)

    report = AgreementReport.objects.get()
    text = out.getvalue()
    assert report.status == "done" and report.trigger == "command"
    assert "Computing Grammaticality / fluency" in text and "100%" in text
    assert "Grammaticality / fluency: alpha" in text and report.fingerprint in text

    call_command("agreement_compute", project.slug, "--bootstrap", "20", stdout=out)
    assert f"Data unchanged since report {report.pk}" in out.getvalue()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-project"], "No project with the slug 'no-such-project'"),
        ([], "Give either a project SLUG or --ratings"),
        (["--ratings", "x.csv"], "--ratings needs --level"),
    ],
)
def test_the_command_refuses_bad_arguments(db, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("agreement_compute", *args)
