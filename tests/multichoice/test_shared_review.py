"""Trivia review is the review app's: its queue and claims, its reviewer dashboard, its agreement reports,
its item history; a trivia item is never a separate copy of them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services.members import membership_set
from multichoice.services.items import trivia_item_create, trivia_item_rewrite, trivia_items
from multichoice.services.reviews import trivia_review
from multichoice.services.translation import translation_resolve
from review import reports
from review import statistics as review_statistics
from review.models import ReviewSlot
from tests import factories
from tests.multichoice.conftest import item_values


@pytest.fixture
def second_reviewer(trivia):
    user = factories.user("reviewer2")
    membership_set(project=trivia, user=user, roles={"reviewer"})
    return user


@pytest.fixture
def reviewed(trivia, annotator, reviewer, second_reviewer):
    """Four items, each reviewed by two reviewers; they disagree on `plausible` for the second item only."""
    trivia.reviewers_per_item = 2
    trivia.save(update_fields=["reviewers_per_item"])
    items = [
        trivia_item_create(project=trivia, user=annotator, **item_values(question=f"Q{index}?")) for index in range(4)
    ]
    every = {c["key"]: True for c in trivia.review_criteria}
    for index, item in enumerate(items):
        trivia_review(item=item, user=reviewer, criteria=every)
        if index == 1:
            trivia_review(item=item, user=second_reviewer, criteria=every | {"plausible": False}, comment="Too easy")
        else:
            trivia_review(item=item, user=second_reviewer, criteria=every)
    return items


def test_an_agreement_report_of_a_trivia_project_has_a_scope_per_trivia_criterion(trivia, reviewed):
    report, _ = reports.agreement_report_request(project=trivia, enqueue=False)
    report = reports.agreement_report_compute(report_id=report.pk, bootstrap=100)

    assert report.status == "done", report.error
    scopes = report.result["scopes"]
    assert {"review:one_correct", "review:plausible", "review:not_from_wording", "review:not_outdated"} <= set(scopes)
    plausible = scopes["review:plausible"]["summary"]
    assert (plausible["n_units"], plausible["n_raters"]) == (4, 2)
    assert plausible["statistics"]["percent_agreement"]["value"] == pytest.approx(0.75)
    assert [unit["item_id"] for unit in plausible["contested_units"]] == [reviewed[1].item_id]
    by_subset = {row["label"]: row for row in scopes["review:plausible"]["strata"]["subset"]}
    assert set(by_subset) == {"local"}
    assert by_subset["local"]["statistics"]["percent_agreement"]["n_units"] == 4
    assert {"category", "difficulty"} <= set(scopes["review:plausible"]["strata"])


def test_the_reviewer_dashboard_counts_trivia_reviews(trivia, reviewed):
    figures = review_statistics.project_statistics(trivia)

    done = {row["username"]: row["done"] for row in figures["reviewers"]}
    assert done == {"reviewer": 4, "reviewer2": 4}


def test_the_shared_review_queue_lists_trivia_items_and_its_review_screen_sends_to_the_trivia_page(
    client, trivia, annotator, reviewer
):
    item = trivia_item_create(project=trivia, user=annotator, **item_values())
    client.force_login(reviewer)

    queue = client.get(reverse("review_queue", args=[trivia.slug]))
    claimed = client.post(reverse("review_next", args=[trivia.slug]))
    slot = ReviewSlot.objects.get(item_id=item.item_id, reviewer=reviewer)
    screen = client.get(reverse("review_slot", args=[trivia.slug, slot.pk]))

    assert "Where&#x27;s Atxondo?" in queue.content.decode() or "Where's Atxondo?" in queue.content.decode()
    assert claimed.status_code == 302 and slot.status == ReviewSlot.Status.CLAIMED
    assert screen.status_code == 302 and screen.url == reverse("trivia_item", args=[trivia.slug, item.item_id])
    page = client.get(screen.url).content.decode()
    assert 'id="trivia-review-form"' in page


def test_the_item_history_shows_every_revision_of_a_trivia_item(client, trivia, flagged_item, coordinator):
    translation_resolve(
        item=flagged_item, user=coordinator, resolution="fix", source={"question": "Where is Atxondo now?"}
    )
    client.force_login(coordinator)

    page = client.get(reverse("item_history", args=[trivia.slug, flagged_item.item_id])).content.decode()

    assert "Where is Atxondo now?" in page and "Corrected by a coordinator" in page
    assert "Candidates (✓ correct)" in page and "✓ In Biscay" in page


def test_the_item_history_diffs_the_candidates_of_a_rewrite(client, trivia, annotator, reviewer):
    item = trivia_item_create(project=trivia, user=annotator, **item_values())
    trivia_review(item=item, user=reviewer, criteria={}, comment="Gipuzkoa is too easy")
    item = trivia_items(trivia).get(pk=item.pk)
    trivia_item_rewrite(
        item=item,
        user=annotator,
        version=item.item.version,
        **item_values(candidates=["In Biscay", "In Álava", "In Navarre"]),
    )
    client.force_login(reviewer)

    page = client.get(reverse("item_history", args=[trivia.slug, item.item_id])).content.decode()

    assert "<del>Gipuzkoa</del>" in page and "<ins>Álava</ins>" in page


@pytest.mark.parametrize("name", ["reviewers", "agreement", "review_queue"])
def test_the_shared_review_pages_open_for_a_trivia_project(client, trivia, reviewed, coordinator, name):
    client.force_login(coordinator)

    response = client.get(reverse(name, args=[trivia.slug]))

    assert response.status_code == 200
    if name == "reviewers":
        assert "reviewer2" in response.content.decode()


def test_the_wikipedia_dashboard_is_no_part_of_a_trivia_project(client, trivia, coordinator):
    client.force_login(coordinator)

    assert client.get(reverse("dashboard", args=[trivia.slug])).status_code == 404
