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

    running = ImportJob.objects.create(project=project, status="running", progress_total=100, progress_done=40)
    page.goto(f"/projects/{project.slug}/imports/{running.pk}/")
    expect(page.locator("#job-status progress")).to_have_attribute("value", "40")
    ImportJob.objects.filter(pk=running.pk).update(
        status="done", report={"ok": True, "summary": "5 pairs created, 0 already present.", "counts": {}}
    )
    expect(page.locator("#job-status")).to_contain_text("5 pairs created", timeout=6_000)
    expect(page.locator("#job-status progress")).to_have_count(0)


def test_a_dry_run_asks_for_the_unknown_regions_and_imports_once_they_are_mapped(
    page: Page, coordinator, tmp_path, settings
):
    from tests import factories
    from tests.wikiqa.test_other_studies import nan_release

    settings.MEDIA_ROOT = tmp_path / "media"
    project = factories.project(coordinator, slug="nan-cmn", local_language="nan", standard_language="cmn")
    paths = []
    for name, data in nan_release().items():
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))
    log_in(page, "coordinator")

    page.goto(f"/projects/{project.slug}/import/")
    page.get_by_label("Files").set_input_files(paths)
    page.get_by_role("button", name="Check only (dry run)").click()

    mapping = page.locator("#region-map-form")
    expect(mapping).to_contain_text("Fujian")
    expect(mapping.locator(".region-row", has_text="Fujian")).to_contain_text("2 records")
    expect(mapping.locator(".region-row", has_text="Taiwan")).to_contain_text("1 record")
    expect(page.locator(".import-report")).to_contain_text("2 regions in the review file")
    expect(page.locator(".import-report .problems")).to_have_count(0)  # the mapping says it all
    page.get_by_label("Fujian").select_option("local")
    page.get_by_label("Taiwan").select_option("standard")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.screenshot(path="/tmp/imp-region-map-desktop.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path="/tmp/imp-region-map-phone.png", full_page=True)
    page.set_viewport_size({"width": 1440, "height": 900})
    assert not PagePair.objects.filter(project=project).exists()

    page.get_by_role("button", name="Save the mapping and import").click()

    expect(page.locator(".import-report")).to_contain_text("4 pairs created, 0 already present.")
    expect(page.locator("#region-map-form")).to_have_count(0)
    page.screenshot(path="/tmp/imp-region-map-imported.png", full_page=True)
    project.refresh_from_db()
    assert (project.region_vocabulary["Fujian"], project.region_vocabulary["Taiwan"]) == ("local", "standard")
    pair = PagePair.objects.get(project=project, standard_title="茶餐厅3")
    assert (pair.metadata["wilova"]["labels"]["region"], pair.metadata["wilova"]["labels"]["region_detail"]) == (
        "standard",
        "Taiwan",
    )


def test_a_dry_run_shows_the_residue_it_keeps_and_imports_the_same_files(page: Page, project, tmp_path, settings):
    from tests.wikiqa.test_other_studies import cantonese_release

    settings.MEDIA_ROOT = tmp_path / "media"
    paths = []
    for name, data in cantonese_release().items():
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))
    log_in(page, "coordinator")

    page.goto(f"/projects/{project.slug}/import/")
    page.get_by_label("Files").set_input_files(paths)
    page.get_by_role("button", name="Check only (dry run)").click()

    warnings = page.locator(".import-report .residue")
    expect(page.locator(".import-report")).to_contain_text("5 pairs would be created")
    expect(warnings).to_contain_text("Answer4")
    expect(warnings).to_contain_text("slot 4 has no question")
    expect(warnings.locator("td[lang=cmn]")).to_have_text("茶餐厅2")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.screenshot(path="/tmp/imp-residue-desktop.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path="/tmp/imp-residue-phone.png", full_page=True)
    assert not PagePair.objects.filter(project=project).exists()

    page.get_by_role("button", name="Import these files").click()

    expect(page.locator(".import-report")).to_contain_text("5 pairs created, 0 already present.")
    assert PagePair.objects.filter(project=project).count() == 5
