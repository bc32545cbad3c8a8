"""The validator screen in Chromium: compact 1–5 rows with number keys, nothing wiped on an error, messages
in words, Skip, how many are left; Arabic right to left at 1440×900 and 390 px."""

from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import Page, expect

from annotation.importers.sources import ImportSource
from annotation.services.members import membership_set
from exports.services import release_build_now, release_file_path
from tests.browser.conftest import log_in
from tests.validation.conftest import TSV_HEADER
from validation import services
from validation.models import ValidationJudgment

pytestmark = pytest.mark.browser
SHOTS = os.environ.get("SCREENSHOTS_DIR")  # set it to look at the screens

CRITERIA = ("clarity", "faithfulness", "informativeness", "plausibility")
ALL_TASKS = ["question", "answer_edit", "location", "domain", "better_answer", "likert"]
ROWS = TSV_HEADER.replace("\tengine", "\talternative_answer\tengine") + "".join(
    f"{i}\tfood\tأكلات الدوحة\t{question}\t{answer}\tfactoid\thttps://kaleijy.com/ar/{i}\t{other}\tgoogle\n"
    for i, (question, answer, other) in enumerate(
        [
            ("ما هو الطبق الوطني في قطر؟", "المجبوس، أرز بالبهارات واللحم.", "الهريس."),
            ("أين يقع سوق واقف؟", "في وسط مدينة الدوحة.", "في الوكرة."),
            ("متى يحتفل القطريون باليوم الوطني؟", "في الثامن عشر من ديسمبر.", "في السادس من فبراير."),
        ]
    )
)


def shot(page: Page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


@pytest.fixture
def arabic_project(coordinator, reviewer):
    project = services.validation_project_create(
        name="تحقق الدوحة", slug="val-ar", language="arb", location="قطر", created_by=coordinator
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    services.validation_settings_update(project=project, tasks=ALL_TASKS)
    services.validation_items_import(
        project=project, source=ImportSource("c.tsv", data=ROWS.encode()), user=coordinator
    )
    return project


def test_a_validator_scores_by_keys_keeps_everything_on_an_error_skips_and_sees_what_is_left(
    page: Page, arabic_project, reviewer, coordinator, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, "reviewer")
    page.goto("/projects/val-ar/validation/")
    page.locator("#validation-next").click()
    expect(page.locator("#validation-form")).to_be_visible()
    expect(page.locator("#validation-left")).to_have_text("3 left")
    assert page.locator("#question").evaluate("e => getComputedStyle(e).direction") == "rtl"
    # Before: 2,471 px high at 1440×900 (four Likert blocks of five stacked radios with their rubrics).
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height <= 1100, height
    shot(page, "validate-1440")

    # Keys 1–5 score the first row not scored, then the next.
    page.wait_for_load_state("load")  # the key handler is a script that runs once the page has loaded
    for key in "4532":
        page.keyboard.press(key)
    scores = {k: page.locator(f"input[name=likert_{k}]:checked").get_attribute("value") for k in CRITERIA}
    assert scores == dict(zip(CRITERIA, "4532", strict=True))
    page.locator("textarea[name=answer]").press("2")  # typing in the answer is typing, not a score
    assert page.locator("input[name=likert_plausibility]:checked").get_attribute("value") == "2"

    # Saved without the question verdict: the form comes back with every score and choice still there.
    page.locator('input[name=location_relevant][value="yes"]').check()
    page.locator("#validation-save").click()
    errors = page.locator("#form-errors")
    expect(errors).to_contain_text("Question: choose good or bad")
    assert "question:" not in errors.inner_text() and "question_reason" not in errors.inner_text()
    assert {k: page.locator(f"input[name=likert_{k}]:checked").get_attribute("value") for k in CRITERIA} == scores
    expect(page.locator('input[name=location_relevant][value="yes"]')).to_be_checked()
    shot(page, "validate-error-1440")

    page.locator('input[name=question][value="bad"]').check()
    page.locator("#validation-save").click()
    expect(errors).to_contain_text("Why the question is bad: choose a reason from the list")
    page.locator("select[name=question_reason]").select_option("opinion_seeking")
    page.locator('input[name=domain_label][value="very_reliable"]').check()
    page.locator('input[name=better][value="1"]').check()
    page.locator("#validation-save").click()
    expect(page.locator(".message.success")).to_contain_text("Saved")
    expect(page.locator("#validation-left")).to_have_text("2 left")
    first = ValidationJudgment.objects.get()
    assert first.likert == {"clarity": 4, "faithfulness": 5, "informativeness": 3, "plausibility": 2}
    assert first.question_reason == "opinion_seeking"

    skipped = page.locator("#qa-pair #question").inner_text()
    page.locator("#validation-skip").click()
    expect(page.locator(".message.success")).to_contain_text("skipped")
    expect(page.locator("#validation-left")).to_have_text("1 left")
    assert page.locator("#qa-pair #question").inner_text() != skipped

    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.locator("#answer").evaluate("e => getComputedStyle(e).direction") == "rtl"
    shot(page, "validate-390")

    # The third item, by touch-sized rows at 390 px; then the release leaves the opinion-seeking one out.
    page.locator('input[name=question][value="good"]').check()
    page.locator('input[name=location_relevant][value="yes"]').check()
    page.locator('input[name=better][value="2"]').check()
    for key in CRITERIA:
        page.locator(f".likert-row[data-criterion={key}] label").nth(4).click()
    page.locator("#validation-save").click()
    expect(page.locator(".message.success")).to_contain_text("Saved")

    release = release_build_now(project=arabic_project, user=coordinator, seed=7)
    assert release.status == "done", release.error
    lines = [json.loads(line) for line in release_file_path(release, "validation_qa.jsonl").read_text().splitlines()]
    assert [line["data_id"] for line in lines] == ["2"]
    assert lines[0]["split"] == "train" and release.counts["validation_qa_by_split"] == {
        "train": 1,
        "dev": 0,
        "test": 0,
    }
    card = release_file_path(release, "README.md").read_text(encoding="utf-8")
    assert "1 validated item left out of this release:" in card
    assert "(the validators' reason: opinion-seeking 1)" in card
    assert 'language:\n- "arb"\n' in card


def test_enter_on_the_reason_menu_saves_and_opens_the_next_item(page: Page, arabic_project, reviewer):
    """B puts the focus on the reason's menu; a letter picks a reason there and Enter saves, as the screen's keys
    say (before, Enter on the menu did nothing)."""
    services.validation_settings_update(project=arabic_project, tasks=["question"])
    log_in(page, "reviewer")
    page.goto("/projects/val-ar/validation/")
    page.locator("#validation-next").click()
    expect(page.locator("#validation-form[data-keys-ready]")).to_be_attached()
    expect(page.locator("#validation-left")).to_have_text("3 left")
    page.locator("h1").click()
    page.keyboard.press("b")
    expect(page.locator("select[name=question_reason]")).to_be_focused()
    page.keyboard.press("o")
    expect(page.locator("select[name=question_reason]")).to_have_value("opinion_seeking")
    page.keyboard.press("Enter")
    expect(page.locator(".message.success")).to_contain_text("Saved")
    expect(page.locator("#validation-left")).to_have_text("2 left")
    judgment = ValidationJudgment.objects.get()
    assert (judgment.question_good, judgment.question_reason) == (False, "opinion_seeking")
