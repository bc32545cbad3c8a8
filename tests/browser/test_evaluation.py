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


def test_a_coordinator_samples_a_three_way_judgment_a_reviewer_checks_it_by_keyboard_at_phone_width(
    page: Page, project, annotator, coordinator, researcher, reviewer, settings, tmp_path, model_stub
):
    """Three-way judge → Sample k per scenario → a reviewer at 390 px checks the sampled items with c / i / a (one
    key from an Arabic layout) → the coordinator reads the agreement beside the judge column."""
    from evaluation.models import JudgedItem
    from tests.endpoints.conftest import make_endpoint
    from tests.evaluation.test_judge import scored_run

    settings.MEDIA_ROOT = tmp_path / "media"
    authored_pair(project, annotator)
    authored_pair(project, annotator, evidence=("深水埗", "六十幾年"))
    release = releases.release_build_now(project=project, user=coordinator, seed=1)
    run = scored_run(release, researcher)
    make_endpoint(project, coordinator, model_stub, name="judge")
    questions = [line["question"] for line in prompt_lines(release, "question_only")]
    replies = {questions[0]: "INCORRECT", questions[1]: "NOT_ATTEMPTED"}
    model_stub.answer(
        lambda request: next((r for q, r in replies.items() if f"Question: {q}\n" in request.prompt_text), "CORRECT")
    )

    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/evaluation/{run.pk}/judge/")
    page.get_by_label("Judge (a model endpoint of the project)").select_option(label="judge (qwen2.5-7b-instruct)")
    page.locator("#judge-rubric").get_by_label("Correct / incorrect / not attempted", exact=False).check()
    page.locator("#judge-start-button").click()
    expect(page.locator("#judgment-state")).to_have_text("Judged")
    page.reload()
    expect(page.locator("#judgment-rubric")).to_contain_text("Correct / incorrect / not attempted")
    expect(page.locator("#judgment-results")).to_contain_text("Correct given attempted")
    page.get_by_label("Items per scenario (k)").fill("3")
    page.get_by_label("Seed").fill("42")
    page.locator("#sample-button").click()
    expect(page.locator(".message").first).to_contain_text("Sampled 3 items (3 per scenario, seed 42)")
    expect(page.locator("#sample-progress")).to_contain_text("Checked 0 of 3 sampled")
    sampled = set(JudgedItem.objects.filter(judgment__run=run, check_sample__isnull=False).values_list("id", flat=True))
    assert len(sampled) == 3

    # A reviewer (a native speaker) at phone width, from the project bar, by keyboard only
    page.context.clear_cookies()
    page.set_viewport_size({"width": 390, "height": 800})
    log_in(page, "reviewer")
    page.goto(f"/projects/{project.slug}/")
    nav_to(page, "Judge checks", "Review")
    expect(page.locator("#judge-check-list")).to_contain_text("0 of 3 sampled")
    page.locator("#judge-check-list").get_by_role("link", name="Check").click()
    expect(page.locator("body[data-judge-keys-ready]")).to_have_count(1)
    expect(page.locator("#check-progress")).to_contain_text("Checked 0 of 3 sampled")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path="/tmp/judge-three-way-check-390.png", full_page=True)
    for number, key in enumerate(("c", "i", "a")):
        shown = page.locator("#check-item").get_attribute("data-item")
        assert int(shown or 0) in sampled and page.locator("#check-item").get_attribute("data-sampled") == "yes"
        if key == "a":  # an Arabic layout: the key printed A gives "ش"; only event.code names the key
            page.evaluate(
                "document.body.dispatchEvent(new KeyboardEvent('keydown', {key: 'ش', code: 'KeyA', bubbles: true}))"
            )
        else:
            page.keyboard.press(key)
        expect(page.locator("#check-progress")).to_contain_text(f"Checked {number + 1} of 3 sampled")
    assert sorted(JudgedItem.objects.filter(pk__in=sampled).values_list("human", flat=True)) == [
        "correct", "incorrect", "not_attempted"
    ]  # fmt: skip
    expect(page.locator("#judge-agreement")).to_have_count(0)  # a reviewer checks; the report is the researchers'

    # The coordinator reads the agreement beside the judge column
    page.context.clear_cookies()
    page.set_viewport_size({"width": 1280, "height": 900})
    log_in(page, "coordinator")
    page.goto(
        f"/projects/{project.slug}/evaluation/{run.pk}/judge/{JudgedItem.objects.get(pk=min(sampled)).judgment_id}/"
    )
    cell = page.locator("#judgment-results-table tbody tr").first.locator(".agreement-cell")
    expect(cell).to_contain_text("checked 3 of 3 sampled")
    expect(cell).to_contain_text("small n")
    expect(cell).to_contain_text("AC1")
    expect(page.locator("#agreement-confusion thead")).to_contain_text("Person NOT_ATTEMPTED")
    page.screenshot(path="/tmp/judge-three-way-agreement.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path="/tmp/judge-three-way-agreement-390.png", full_page=True)
