"""Release readiness: what is unfinished before a build, on the Releases page and through the API, and what a
release built anyway records (its row, its card, its manifest)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import PagePair, Project, QAItem
from exports import services
from exports.readiness import TINY_SPLIT
from review.models import AgreementReport, FinalLabel, Judgment, Verification
from tests import factories
from tests.conftest import api_as
from tests.exports.conftest import authored_pair

pytestmark = pytest.mark.django_db


def _unfinished(readiness) -> dict[str, int]:
    return {check.code: check.count for check in readiness.unfinished}


def _finish_everything(project: Project, user) -> None:
    """Final labels for every pair, a verification for every lead item."""
    for pair in PagePair.objects.filter(project=project):
        FinalLabel.objects.create(project=pair.project, pair=pair, kind="topic", value="food", method="adjudicated")
        FinalLabel.objects.create(project=pair.project, pair=pair, kind="region", value="local", method="adjudicated")
    for number, item in enumerate(QAItem.objects.filter(project=project, kind="lead"), start=1):
        Verification.objects.create(item=item, number=1, result="found", verifier=user)
        assert number


def test_a_project_half_done_shows_each_unfinished_thing_with_its_count_and_a_link(
    released_project, client, coordinator
):
    QAItem.objects.filter(project=released_project, status="accepted").order_by("id").filter(
        pk__in=QAItem.objects.filter(project=released_project, status="accepted").order_by("-id").values("pk")[:1]
    ).update(status=QAItem.Status.SUBMITTED)
    client.force_login(coordinator)

    response = client.get(reverse("release_list", args=[released_project.slug]))

    assert response.status_code == 200
    readiness = response.context["readiness"]
    unfinished = _unfinished(readiness)
    assert unfinished["pairs_not_labelled"] == 3  # every pair with accepted items
    assert unfinished["items_not_verified"] == 5  # the accepted lead QAs (one is in review now)
    assert unfinished["items_in_review"] == 1
    assert unfinished["items_rejected"] == 2
    assert unfinished["splits_small"] >= 1  # 6 items cannot fill three splits
    assert "items_needing_rewrite" not in unfinished and "items_needing_rewrite" in readiness.checked
    html = response.content.decode()
    assert 'id="readiness-unfinished"' in html
    assert reverse("item_list", args=[released_project.slug]) + "?status=submitted" in html
    assert reverse("label_list", args=[released_project.slug]) + "?todo=1" in html
    assert "Build anyway (" in html
    assert "pairs_not_labelled" not in html.replace('data-check="pairs_not_labelled"', "")  # codes stay out of sight


def test_the_api_returns_the_same_checks_and_refuses_bad_statuses(released_project, coordinator):
    api = api_as(coordinator)
    url = f"/api/projects/{released_project.slug}/releases/readiness/"

    body = api.get(url).json()
    page = services.release_readiness_get(project=released_project)

    assert body["ready"] is False
    assert {c["code"]: c["count"] for c in body["unfinished"]} == _unfinished(page)
    assert all(c["url"].startswith("/projects/") for c in body["unfinished"])
    with_rejected = api.get(url, {"item_statuses": ["accepted", "rejected"]}).json()
    assert {c["code"]: c["count"] for c in with_rejected["unfinished"]}["items_not_verified"] == 8
    assert api.get(url, {"item_statuses": ["finished"]}).status_code == 400


def test_a_finished_project_is_ready(project, annotator, coordinator):
    for _ in range(3):
        authored_pair(project, annotator)
    _finish_everything(project, coordinator)

    readiness = services.release_readiness_get(project=project, splits={})

    assert readiness.ready, readiness.unfinished
    assert set(readiness.checked) >= {"pairs_not_labelled", "items_not_verified", "items_in_review", "splits_small"}


def test_splits_from_the_seed_of_the_release_count_exactly(project, annotator, coordinator):
    for _ in range(3):
        authored_pair(project, annotator)  # 6 items on 3 pairs: with three splits, at least one is empty

    readiness = services.release_readiness_get(project=project, seed=7)

    check = next(c for c in readiness.unfinished if c.code == "splits_small")
    assert "of 6 items, 3 page pairs" in check.detail
    assert TINY_SPLIT > 6


def test_agreement_not_computed_counts_judgments_since_the_latest_report(released_project, coordinator, reviewer):
    item = QAItem.objects.filter(project=released_project, status="accepted").first()
    from review.models import ReviewSlot

    slot = ReviewSlot.objects.filter(item=item).first()
    ReviewSlot.objects.filter(pk=slot.pk).update(status="done", reviewer=reviewer)
    revision = slot.revision
    judgment = Judgment.objects.create(
        project=released_project,
        slot=slot,
        item=item,
        revision=revision,
        reviewer=reviewer,
        criterion="fluency",
        verdict="pass",
    )

    assert _unfinished(services.release_readiness_get(project=released_project))["agreement_not_computed"] == 1
    from django.utils import timezone

    AgreementReport.objects.create(
        project=released_project, status="done", finished_at=timezone.now(), judgment_watermark=judgment.pk
    )
    assert "agreement_not_computed" not in _unfinished(services.release_readiness_get(project=released_project))


def test_building_anyway_records_what_was_unfinished_in_the_row_card_and_manifest(
    released_project, coordinator, client
):
    release = services.release_build_now(project=released_project, user=coordinator, seed=5)

    assert release.status == "done", release.error
    codes = {check["check"] for check in release.readiness["unfinished"]}
    assert {"pairs_not_labelled", "items_not_verified", "items_rejected"} <= codes
    root = Path(services.release_dir(release))
    card = (root / "README.md").read_text()
    assert "## Unfinished when released" in card
    assert card.index("## Unfinished when released") < card.index("## Loading")  # seen first, after the title
    assert "Lead QAs not checked against the full standard page" in card
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["readiness"]["ready"] is False
    assert {c["check"] for c in manifest["readiness"]["unfinished"]} == codes
    api = api_as(coordinator).get(f"/api/projects/{released_project.slug}/releases/{release.version}/").json()
    assert api["readiness"]["unfinished"] == release.readiness["unfinished"]
    client.force_login(coordinator)
    page = client.get(reverse("release_detail", args=[released_project.slug, release.version])).content.decode()
    assert 'id="release-unfinished"' in page
    listing = client.get(reverse("release_list", args=[released_project.slug])).content.decode()
    assert "unfinished</span>" in listing


def test_a_ready_release_card_says_nothing_about_unfinished_work(project, annotator, coordinator):
    for _ in range(3):
        authored_pair(project, annotator)
    _finish_everything(project, coordinator)

    release = services.release_build_now(project=project, user=coordinator, splits={})

    assert release.readiness["ready"] is True
    assert "Unfinished" not in (Path(services.release_dir(release)) / "README.md").read_text()


def test_a_validation_project_gets_only_the_checks_of_its_kind(coordinator):
    project = factories.project(coordinator, slug="val-kind")
    Project.objects.filter(pk=project.pk).update(kind=Project.Kind.VALIDATION)
    project.refresh_from_db()

    readiness = services.release_readiness_get(project=project)

    assert "pairs_not_labelled" not in readiness.checked
    assert "items_not_verified" not in readiness.checked
    assert {"items_in_review", "items_needing_rewrite", "items_rejected", "splits_small"} <= set(readiness.checked)


def test_the_panel_is_for_coordinators_only(released_project, client, annotator):
    client.force_login(annotator)

    response = client.get(reverse("release_list", args=[released_project.slug]))

    assert response.context["readiness"] is None
    assert 'id="readiness"' not in response.content.decode()


def test_each_verification_count_links_to_the_list_of_exactly_those_items(released_project, client, coordinator):
    """The readiness links open the item list filtered as the check counts (one rule: items_by_verification):
    not checked, and checked on an answer changed since; the list's own filter offers each."""
    leads = list(QAItem.objects.filter(project=released_project, kind="lead", status="accepted").order_by("id"))
    Verification.objects.create(item=leads[0], number=1, result="found", answer=leads[0].answer_standard)
    Verification.objects.create(item=leads[1], number=1, result="found", answer="an answer since rewritten")
    Verification.objects.create(item=leads[2], number=1, result="not_found", answer=leads[2].answer_standard)
    client.force_login(coordinator)

    readiness = services.release_readiness_get(project=released_project)

    checks = {check.code: check for check in readiness.unfinished}
    not_checked, outdated = checks["items_not_verified"], checks["items_verification_outdated"]
    assert "verification=none" in not_checked.url and "verification=outdated" in outdated.url
    assert outdated.count == 1 and not_checked.count == len(leads) - 3
    for check in (not_checked, outdated):
        page = client.get(check.url)
        assert page.context["page"].paginator.count == check.count, check.code
    listed = client.get(outdated.url).context["page"].object_list
    assert [item.pk for item in listed] == [leads[1].pk]
    found = client.get(reverse("item_list", args=[released_project.slug]) + "?verification=not_found")
    assert [item.pk for item in found.context["page"].object_list] == [leads[2].pk]
    assert 'name="verification"' in found.content.decode()
