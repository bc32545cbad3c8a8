"""A flag needs a reason (project setting `flag_needs_reason`, on by default), enforced in the review service so
the page and the API refuse alike; the author reads criterion and reason on the rewrite page, My items and the API."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Project
from common.errors import InvalidInput
from review import judging as review_judging
from review import project_settings as review_project_settings
from review import queue as review_queue
from review.models import ReviewSlot
from tests.conftest import api_as
from tests.review.conftest import STANDARD_TEXT, all_pass, flag, submitted_pair

pytestmark = pytest.mark.django_db


@pytest.fixture
def claimed(project, annotator, reviewer):
    _, items = submitted_pair(project, annotator, standard_text=STANDARD_TEXT)
    return review_queue.review_claim(item=items[0], user=reviewer)


def test_a_flag_without_a_reason_is_refused_by_the_service(project, claimed, reviewer):
    assert project.flag_needs_reason is True  # the default

    with pytest.raises(InvalidInput) as refused:
        review_judging.review_submit(
            slot=claimed, user=reviewer, version=claimed.version, judgments=flag(project, "standalone", "  ")
        )

    assert refused.value.field == "judgments.standalone.comment"
    assert "needs a reason" in refused.value.message
    claimed.refresh_from_db()
    assert claimed.status == ReviewSlot.Status.CLAIMED  # nothing recorded


def test_with_the_setting_off_a_flag_may_come_without_a_reason(project, claimed, reviewer, coordinator):
    review_project_settings.project_review_settings_update(project=project, actor=coordinator, flag_needs_reason=False)
    project.refresh_from_db()

    slot = review_judging.review_submit(
        slot=claimed, user=reviewer, version=claimed.version, judgments=flag(project, "standalone", "")
    )

    assert slot.status == ReviewSlot.Status.DONE


def test_the_review_page_refuses_a_bare_flag_in_place_and_keeps_what_was_chosen(project, claimed, reviewer, client):
    client.force_login(reviewer)
    data = {
        "version": claimed.version,
        "verdict-fluency": "pass",
        "verdict-standalone": "flag",
        "verdict-appropriateness": "pass",
        "then": "next",
    }

    response = client.post(reverse("review_slot", args=[project.slug, claimed.pk]), data)

    assert response.status_code == 400
    html = response.content.decode()
    assert "a flag needs a reason" in html
    assert 'fieldset class="criterion has-error" data-criterion="standalone"' in html
    assert html.count("checked") >= 3  # the three verdicts chosen are still chosen


def test_the_api_refuses_a_bare_flag_and_the_settings_api_turns_it_off(project, claimed, reviewer, coordinator):
    url = f"/api/projects/{project.slug}/review/slots/{claimed.pk}/"
    judgments = flag(project, "appropriateness", "")

    refused = api_as(reviewer).post(url, {"version": claimed.version, "judgments": judgments}, format="json")
    assert refused.status_code == 400
    assert refused.json()["field"] == "judgments.appropriateness.comment"

    settings = api_as(coordinator).patch(
        f"/api/projects/{project.slug}/review/settings/", {"flag_needs_reason": False}, format="json"
    )
    assert settings.status_code == 200 and settings.json()["flag_needs_reason"] is False
    accepted = api_as(reviewer).post(url, {"version": claimed.version, "judgments": judgments}, format="json")
    assert accepted.status_code == 200


def test_the_review_settings_page_has_the_setting(project, coordinator, client):
    client.force_login(coordinator)
    page = client.get(reverse("review_settings", args=[project.slug])).content.decode()
    assert 'name="flag_needs_reason"' in page and "A flag needs a reason" in page


def test_the_author_reads_criterion_and_reason_on_my_items_the_rewrite_page_and_the_api(
    project, annotator, reviewer, client, django_assert_max_num_queries
):
    for evidences in (("深水埗", "姓陳"), ("菠蘿油", "星期三")):
        _, items = submitted_pair(project, annotator, evidences=evidences, standard_text=STANDARD_TEXT)
        for item in items:
            slot = review_queue.review_claim(item=item, user=reviewer)
            review_judging.review_submit(
                slot=slot,
                user=reviewer,
                version=slot.version,
                judgments=flag(project, "appropriateness", f"答非所问 {item.pk}"),
            )
    client.force_login(annotator)

    with django_assert_max_num_queries(12):
        page = client.get(reverse("my_items", args=[project.slug])).content.decode()
    assert page.count("Answer appropriateness") == 4
    assert f"答非所问 {items[0].pk}" in page
    rewrite = client.get(reverse("item_rewrite", args=[project.slug, items[0].pk])).content.decode()
    assert "Answer appropriateness" in rewrite and f"答非所问 {items[0].pk}" in rewrite

    body = api_as(annotator).get(f"/api/projects/{project.slug}/my-items/").json()
    mine = {row["id"]: row for row in body}
    assert mine[items[0].pk]["status"] == "needs_rewrite"
    assert mine[items[0].pk]["flags"] == [
        {
            "criterion": "appropriateness",
            "criterion_label": "Answer appropriateness",
            "reason": f"答非所问 {items[0].pk}",
        }
    ]


def test_an_item_that_passed_has_no_flags_in_the_api(project, claimed, reviewer, annotator):
    review_judging.review_submit(
        slot=claimed, user=reviewer, version=claimed.version, judgments=all_pass(Project.objects.get(pk=project.pk))
    )

    body = api_as(annotator).get(f"/api/projects/{project.slug}/my-items/").json()

    assert all(row["flags"] == [] for row in body)
