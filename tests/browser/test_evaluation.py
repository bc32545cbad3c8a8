"""Evaluation in Chromium: a researcher goes from the releases to an upload, a results table and its download."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from annotation.models import ItemEvent, QAItem
from exports import services as releases
from tests.browser.conftest import log_in, nav_to
from tests.exports.conftest import authored_pair
from tests.exports.loading import prompt_lines

pytestmark = pytest.mark.browser


def test_a_researcher_uploads_predictions_and_reads_the_tables(
    page: Page, project, annotator, coordinator, researcher, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    authored_pair(project, annotator)
    authored_pair(project, annotator)
    release = releases.release_build_now(project=project, user=coordinator, seed=1)
    lines = []
    for scenario in ("question_only", "local_lead"):
        for line in prompt_lines(release, scenario):
            answer = line["answer_standard"] if scenario == "local_lead" else "不知道"
            lines.append(
                {"id": line["id"], "scenario": scenario, "prediction": f"<answer>{answer}</answer>", "model": "qwen"}
            )
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines), encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "nope", "scenario": "question_only", "prediction": "", "model": "m"}\n{oops\n')

    log_in(page, "researcher")
    page.goto(f"/projects/{project.slug}/releases/")
    nav_to(page, "Evaluation", "Data")
    expect(page.locator("h1")).to_have_text("Evaluation runs")

    # a bad file: refused whole, every line named
    page.get_by_label("Predictions file").set_input_files(str(bad))
    page.get_by_role("button", name="Upload and score").click()
    expect(page.locator("#run-state")).to_have_text("Refused (nothing changed)")
    expect(page.locator("#refused-lines tbody tr")).to_have_count(2)
    expect(page.locator("#refused-lines")).to_contain_text("'nope' is not an item in this release")

    # the good file, submitted from the keyboard
    nav_to(page, "Evaluation", "Data")
    page.get_by_label("Predictions file").set_input_files(str(predictions))
    page.get_by_label("Predictions file").focus()
    page.keyboard.press("Tab")  # model
    page.keyboard.press("Tab")  # scenario
    page.keyboard.press("Tab")  # the button
    page.keyboard.press("Enter")
    expect(page.locator("#run-state")).to_have_text("Scored")
    page.reload()
    table = page.locator(".results").first
    expect(table.locator("h2")).to_contain_text("Lead-section QA")
    row = table.locator("tbody tr", has_text="With the local lead").first
    expect(row).to_contain_text("100.0")
    expect(table.locator("table[data-stratum='topic']")).to_be_visible()
    expect(table.locator(".results-caption")).to_contain_text("paper parity")
    width = page.evaluate("document.documentElement.scrollWidth")
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, width
    page.screenshot(path="/tmp/evaluation-run-390.png", full_page=True)
    with page.expect_download() as download:
        page.locator("#download-csv").click()
    assert download.value.suggested_filename.endswith("-results.csv")
    with page.expect_download() as download:
        page.locator("#download-md").click()
    assert download.value.suggested_filename.endswith("-results.md")
    markdown = download.value.path().read_text(encoding="utf-8")
    assert "| With the local lead | 100.0" in markdown and "Wilson" in markdown

    # the drill-down: every item's answer and scores, filtered from the keyboard
    page.locator("#run-items-link").click()
    expect(page.locator("#run-items tbody tr")).to_have_count(8)
    page.get_by_label("Scenario").select_option("question_only")
    page.get_by_label("Answer extraction").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#run-items tbody tr")).to_have_count(4)
    expect(page.locator("#run-items tbody tr").first).to_contain_text("不知道")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path="/tmp/evaluation-items-390.png", full_page=True)

    # one item's drill-down: question, gold, every answer; its gold looks wrong → back to review, shown flagged
    page.set_viewport_size({"width": 1440, "height": 900})
    page.locator("#run-items tbody tr").first.locator("a").first.click()
    expect(page.locator("h1")).to_contain_text("item")
    expect(page.locator("#item-answers tbody tr")).to_have_count(2)  # question only and the local lead
    expect(page.locator("#item-status")).to_have_text("Accepted")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440
    page.get_by_label("What looks wrong").fill("The gold names the district, the question asks for the street")
    page.get_by_role("button", name="Gold looks wrong: send to review").click()
    expect(page.locator("#gold-flag-done")).to_be_visible()  # swapped in place by htmx
    expect(page.locator("#item-status")).to_have_text("In review")
    expect(page.locator("#gold-flags")).to_contain_text("asks for the street")
    flagged = QAItem.objects.get(events__action=ItemEvent.Action.GOLD_FLAGGED)
    assert flagged.status == QAItem.Status.SUBMITTED and flagged.review_slots.filter(status="open").exists()
    page.reload()
    expect(page.locator("#gold-flags li")).to_have_count(1)
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path="/tmp/evaluation-item-390.png", full_page=True)


def test_a_researcher_has_a_run_judged_checks_the_judge_by_keyboard_and_reads_the_agreement(
    page: Page, project, annotator, coordinator, researcher, settings, tmp_path, model_stub
):
    """Judge → check y / n (one key pressed with an Arabic layout: only event.code says N) → agreement shown."""
    from evaluation.models import JudgedItem
    from tests.endpoints.conftest import make_endpoint
    from tests.evaluation.test_judge import scored_run

    settings.MEDIA_ROOT = tmp_path / "media"
    authored_pair(project, annotator)
    authored_pair(project, annotator, evidence=("深水埗", "六十幾年"))
    release = releases.release_build_now(project=project, user=coordinator, seed=1)
    run = scored_run(release, researcher)
    make_endpoint(project, coordinator, model_stub, name="judge")
    first_question = prompt_lines(release, "question_only")[0]["question"]
    model_stub.answer(lambda request: "NO" if f"Question: {first_question}\n" in request.prompt_text else "YES")

    log_in(page, "researcher")
    page.goto(f"/projects/{project.slug}/evaluation/{run.pk}/")
    page.locator("#run-judge-link").click()
    page.get_by_label("Judge (a model endpoint of the project)").select_option(label="judge (qwen2.5-7b-instruct)")
    page.locator("#judge-start-button").click()
    expect(page.locator("#judgment-state")).to_have_text("Judged")
    page.reload()
    expect(page.locator("#judgment-results")).to_contain_text("Unscored")
    expect(page.locator("#agreement-empty")).to_be_visible()  # nobody checked yet: empty, not 0
    items = JudgedItem.objects.filter(judgment__run=run).count()
    assert items == 4

    page.locator("#judge-check-link").click()
    expect(page.locator("body[data-judge-keys-ready]")).to_have_count(1)
    for number in range(items):
        shown = page.locator("#check-item").get_attribute("data-item")
        if number == 1:  # an Arabic layout: the key printed N gives "ى"; only event.code names the key
            page.evaluate(
                "document.body.dispatchEvent(new KeyboardEvent('keydown', {key: 'ى', code: 'KeyN', bubbles: true}))"
            )
        else:
            page.keyboard.press("y")
        if number < items - 1:
            expect(page.locator("#check-item")).not_to_have_attribute("data-item", shown or "")
    expect(page.locator("#check-done")).to_be_visible()
    expect(page.locator("#agreement-n")).to_contain_text("n = 4")
    expect(page.locator("#agreement-confusion")).to_be_visible()
    expect(page.locator("#judge-agreement")).to_contain_text("irrCAC")
    assert JudgedItem.objects.filter(judgment__run=run, human="no").count() == 1
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(tmp_path / "judge-check-390.png"), full_page=True)

    # the judgment page at phone width: an override in place, and a second click restores the judge's verdict
    page.get_by_role("link", name="Back to judgment").click()
    row = page.locator("#judged-table tbody tr").first
    row.get_by_role("button", name="Incorrect").click()
    expect(
        page.locator("#judged-table tbody tr").first.get_by_role("button", name="Incorrect ✓ (restore)")
    ).to_be_visible()
    assert JudgedItem.objects.filter(judgment__run=run).exclude(override="").count() == 1
    page.locator("#judged-table tbody tr").first.get_by_role("button", name="Incorrect ✓ (restore)").click()
    expect(
        page.locator("#judged-table tbody tr").first.get_by_role("button", name="Incorrect", exact=True)
    ).to_be_visible()
    assert not JudgedItem.objects.filter(judgment__run=run).exclude(override="").exists()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(tmp_path / "judgment-390.png"), full_page=True)
