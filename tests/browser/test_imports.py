"""The coordinator uploads a file in the browser and watches the import finish without reloading (htmx polling)."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from annotation.models import ImportJob, PagePair
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser


def test_an_upload_shows_its_report_and_a_running_job_updates_in_place(
    page: Page, project, coordinator, tmp_path, settings
):
    settings.MEDIA_ROOT = tmp_path / "media"
    row = {
        "local_title": "唐樓",
        "standard_title": "唐楼",
        "local_url": "https://zh-yue.wikipedia.org/wiki/T",
        "standard_url": "https://zh.wikipedia.org/wiki/T",
        "local_lead": "唐樓係舊式樓宇。",
        "standard_lead": "唐楼。",
    }
    upload = tmp_path / "pairs.jsonl"
    upload.write_text(json.dumps(row, ensure_ascii=False) + "\n{broken\n", encoding="utf-8")
    log_in(page, "coordinator")

    page.goto(f"/projects/{project.slug}/import/")
    page.get_by_label("Files").set_input_files(str(upload))
    page.get_by_role("button", name="Import", exact=True).click()

    # Tests run tasks eagerly: the report is there when the page opens, every problem by line.
    expect(page.locator(".import-report")).to_contain_text("Import refused: 1 problem in 2 lines")
    expect(page.locator(".import-report")).to_contain_text("line 2")
    assert not PagePair.objects.filter(project=project).exists()

    running = ImportJob.objects.create(project=project, status="running", bytes_total=100, bytes_done=40)
    page.goto(f"/projects/{project.slug}/imports/{running.pk}/")
    expect(page.locator("#job-status progress")).to_have_attribute("value", "40")
    ImportJob.objects.filter(pk=running.pk).update(
        status="done", report={"ok": True, "summary": "5 pairs created, 0 already present.", "counts": {}}
    )
    expect(page.locator("#job-status")).to_contain_text("5 pairs created", timeout=6_000)
    expect(page.locator("#job-status progress")).to_have_count(0)
