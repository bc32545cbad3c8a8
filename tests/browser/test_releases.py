"""Releases in Chromium: a coordinator cuts a release, downloads a file, cuts another and compares the two."""

from __future__ import annotations

import hashlib

import pytest
from playwright.sync_api import Page, expect

from annotation.models import QAItem
from exports.models import Release
from tests.browser.conftest import log_in, nav_to
from tests.exports.conftest import authored_pair

pytestmark = pytest.mark.browser


def test_a_coordinator_cuts_downloads_and_compares_releases(
    page: Page, project, annotator, coordinator, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    authored_pair(project, annotator)
    authored_pair(project, annotator)

    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/")
    nav_to(page, "Releases", "Data")
    # The split preview is what the build writes (the seed the release will take, the same function).
    preview = page.locator("#readiness-splits").inner_text()
    page.set_viewport_size({"width": 390, "height": 900})
    page.screenshot(path=str(tmp_path / "releases-390.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_label("Changelog note").fill("First release")
    page.locator("#build-release").click()

    expect(page.locator("h1")).to_have_text("Release v1")
    expect(page.locator("#release-state")).to_have_text("Published")
    built = Release.objects.get(project=project, version=1).counts["lead_qa_by_split"]
    # (in the splits' own order: PostgreSQL's jsonb keeps keys in an order of its own)
    sizes = ", ".join(f"{split} {built[split]}" for split in ("train", "dev", "test") if split in built)
    assert sizes + " (of 4 items, 2 page pairs)" in preview
    row = page.locator("#release-files tr", has_text="lead_qa.jsonl").first
    expected_sha = row.locator("code.hash").inner_text()
    with page.expect_download() as download_info:
        row.get_by_role("link", name="lead_qa.jsonl").click()
    path = download_info.value.path()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == expected_sha
    with page.expect_download() as archive_info:
        page.locator("#download-archive").click()
    assert archive_info.value.suggested_filename == f"{project.slug}-v1.zip"

    item = QAItem.objects.filter(project=project).order_by("id").first()
    assert item is not None
    QAItem.objects.filter(pk=item.pk).update(question="改过的问题？")
    page.goto(f"/projects/{project.slug}/releases/")
    page.locator("#build-release").click()
    expect(page.locator("#release-state")).to_have_text("Published")

    page.get_by_role("link", name="Compare releases").click()
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#diff-changed")).to_have_text("1")
    expect(page.locator("#diff-added")).to_have_text("0")
    expect(page.locator("#diff")).to_contain_text(f"{project.slug}-q{item.pk}")
    changes = page.locator("#diff-changes")  # the values before and after, the field in words
    expect(changes.locator("ins")).to_have_text("改过的问题？")
    expect(changes.locator("del")).to_have_text(item.question)
    expect(changes).to_contain_text("Question")
