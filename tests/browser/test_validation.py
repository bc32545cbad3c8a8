"""Validation tasks in Chromium, one flow per task; the answer edit runs in Arabic (right to left)."""

from __future__ import annotations

import pytest
from playwright.sync_api import FilePayload, Page, expect

from annotation.importers.sources import ImportSource
from annotation.models import QAItem
from annotation.services.members import membership_set
from tests.browser.conftest import log_in
from tests.validation.conftest import ARABIC_TSV, COLLECTED_TSV
from validation import services
from validation.models import SourceDomain, ValidationJudgment

pytestmark = pytest.mark.browser


def validation_project(coordinator, reviewer, *, tasks: list[str], tsv: str = COLLECTED_TSV, language: str = "eng"):
    project = services.validation_project_create(
        name="Validation", slug="val", language=language, location="Qatar", created_by=coordinator
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    services.validation_settings_update(project=project, tasks=tasks)
    data = tsv.encode()
    services.validation_items_import(project=project, source=ImportSource("c.tsv", data=data), user=coordinator)
    return project


def start(page: Page) -> None:
    log_in(page, "reviewer")
    page.goto("/projects/val/validation/")
    page.locator("#validation-next").click()
    expect(page.locator("#validation-form")).to_be_visible()


def save(page: Page) -> None:
    page.locator("#validation-save").click()


def test_question_validation_needs_a_reason_for_bad(page: Page, coordinator, reviewer):
    validation_project(coordinator, reviewer, tasks=["question"])
    start(page)
    expect(page.locator("#question")).to_have_text("What is the national animal of Qatar?")

    page.locator('input[name=question][value="bad"]').check()
    save(page)
    expect(page.locator("#form-errors")).to_contain_text("Why the question is bad: choose a reason from the list")
    page.locator('input[name=question][value="bad"]').check()
    page.locator("select[name=question_reason]").select_option("false_presupposition")
    save(page)

    expect(page.locator(".message.success")).to_contain_text("Saved")
    judgment = ValidationJudgment.objects.get()
    assert (judgment.question_good, judgment.question_reason) == (False, "false_presupposition")


def test_answer_editing_in_arabic_runs_right_to_left_and_keeps_a_revision(page: Page, coordinator, reviewer):
    project = validation_project(coordinator, reviewer, tasks=["answer_edit"], tsv=ARABIC_TSV, language="arb")
    start(page)

    question, answer = page.locator("#question"), page.locator("#edited-answer")
    expect(question).to_have_text("ما هو الطبق الوطني في قطر؟")
    assert question.evaluate("e => getComputedStyle(e).direction") == "rtl"
    assert answer.evaluate("e => getComputedStyle(e).direction") == "rtl"
    expect(page.locator(".source-link")).to_have_attribute("href", "https://kaleijy.com/ar/food")
    answer.fill("")
    answer.press_sequentially("المجبوس، أرز متبل باللحم أو الدجاج.")
    save(page)

    expect(page.locator(".message.success")).to_contain_text("Saved")
    item = QAItem.objects.get(project=project)
    assert item.answer_standard == "المجبوس، أرز متبل باللحم أو الدجاج."
    assert list(item.revisions.values_list("number", "reason")) == [(1, "imported"), (2, "reviewer_rewrite")]
    page.context.clear_cookies()
    log_in(page, "coordinator")
    page.goto(f"/projects/val/validation/items/{item.pk}/")
    expect(page.locator(".diff ins").first).to_be_visible()
    expect(page.locator("#final-answer")).to_have_text("المجبوس، أرز متبل باللحم أو الدجاج.")


def test_location_relevance(page: Page, coordinator, reviewer):
    validation_project(coordinator, reviewer, tasks=["location"])
    start(page)
    expect(page.locator("#task-location legend")).to_contain_text("Relevant to Qatar?")

    page.locator('input[name=location_relevant][value="no"]').check()
    save(page)

    expect(page.locator(".message.success")).to_contain_text("Saved")
    assert ValidationJudgment.objects.get().location_relevant is False


def test_domain_reliability_is_asked_once_per_domain(page: Page, coordinator, reviewer):
    validation_project(coordinator, reviewer, tasks=["domain"])
    start(page)
    expect(page.locator("#task-domain legend")).to_contain_text("qatarday.com")

    page.locator('input[name=domain_label][value="partially_reliable"]').check()
    save(page)

    expect(page.locator(".message.success")).to_contain_text("Saved")
    assert SourceDomain.objects.get(domain="qatarday.com").label == "partially_reliable"
    # The next item comes from kaleijy.com, not labelled yet: asked again; a labelled domain is only shown.
    expect(page.locator("#task-domain legend")).to_contain_text("kaleijy.com")


def test_better_answer_neither_needs_a_comment(page: Page, coordinator, reviewer):
    tsv = COLLECTED_TSV.replace("\tengine\n", "\talternative_answer\n").replace(
        "\tgoogle\n", "\tThe oryx, a desert antelope.\n"
    )
    tsv = tsv.replace("\tbing\n", "\tMachboos rice.\n")
    validation_project(coordinator, reviewer, tasks=["better_answer"], tsv=tsv)
    start(page)
    boxes = page.locator(".better-answers .better-text")
    expect(boxes).to_have_count(2)
    shown = sorted(boxes.all_inner_texts())
    assert shown == sorted(["The Arabian oryx.", "The oryx, a desert antelope."])

    page.locator('input[name=better][value="neither"]').check()
    save(page)
    expect(page.locator("#form-errors")).to_contain_text("say why neither answer is better")
    page.locator('input[name=better][value="neither"]').check()
    page.locator("input[name=better_comment]").fill("Both miss the scientific name.")
    save(page)

    expect(page.locator(".message.success")).to_contain_text("Saved")
    judgment = ValidationJudgment.objects.get()
    assert judgment.better_choice == "neither" and sorted(judgment.better_order) == ["alternative", "original"]


def test_likert_scores_show_their_rubric(page: Page, coordinator, reviewer):
    validation_project(coordinator, reviewer, tasks=["likert"])
    start(page)
    expect(page.locator('[data-criterion="faithfulness"] .rubric')).to_contain_text("source page")

    for key, score in (("clarity", "5"), ("faithfulness", "4"), ("informativeness", "2"), ("plausibility", "5")):
        page.locator(f'input[name="likert_{key}"][value="{score}"]').check()
    save(page)

    expect(page.locator(".message.success")).to_contain_text("Saved")
    assert ValidationJudgment.objects.get().likert == {
        "clarity": 5,
        "faithfulness": 4,
        "informativeness": 2,
        "plausibility": 5,
    }


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_a_coordinator_imports_a_file_and_the_job_page_shows_the_report(page: Page, coordinator, reviewer, media):
    project = services.validation_project_create(
        name="Validation", slug="val", language="eng", location="Qatar", created_by=coordinator
    )
    log_in(page, "coordinator")
    page.goto("/projects/val/validation/import/")

    collected: FilePayload = {
        "name": "collected.tsv",
        "mimeType": "text/tab-separated-values",
        "buffer": COLLECTED_TSV.encode(),
    }
    page.locator("input[name=file]").set_input_files(files=[collected])
    page.get_by_role("button", name="Import").click()

    # In tests the task runs in-process once the job is committed; with a worker the partial polls until then.
    expect(page.locator("#job-status")).to_contain_text("4 created")
    expect(page.locator("#job-status")).to_contain_text("duplicates: exact 1")
    assert QAItem.objects.filter(project=project).count() == 4
    page.get_by_role("link", name="Import another file").click()
    expect(page.locator("#import-jobs")).to_contain_text("collected.tsv")


def test_the_coordinator_chooses_the_original_answer_as_the_final_answer(page: Page, coordinator, reviewer):
    project = validation_project(coordinator, reviewer, tasks=["answer_edit"])
    slot = services.validation_claim_next(project=project, user=reviewer)
    assert slot is not None
    services.validation_submit(slot=slot, user=reviewer, version=slot.version, data={"answer": "An oryx, surely."})
    log_in(page, "coordinator")
    page.goto(f"/projects/val/validation/items/{slot.item_id}/")
    expect(page.locator("#final-answer")).to_have_text("An oryx, surely.")

    page.locator("#revision-1").get_by_role("button", name="Use this answer as the final answer").click()

    expect(page.locator(".message.success")).to_contain_text("revision 1 is now the final answer")
    expect(page.locator("#final-answer")).to_have_text("The Arabian oryx.")
    expect(page.locator("#revisions")).to_contain_text("revision 1, chosen by coordinator")


def test_a_domain_label_is_never_chosen_by_default_and_can_be_changed(page: Page, coordinator, reviewer):
    validation_project(coordinator, reviewer, tasks=["question"])
    log_in(page, "coordinator")
    page.goto("/projects/val/validation/domains/")
    row = page.locator("#unlabelled-domains tr", has_text="qatarday.com")
    row.get_by_role("button", name="Label").press("Enter")  # one Enter, no label chosen: the browser asks for one
    page.wait_for_timeout(300)
    assert not SourceDomain.objects.exists()

    row.get_by_label("Label for qatarday.com").select_option("very_reliable")
    row.get_by_role("button", name="Label").press("Enter")
    expect(page.locator(".message.success")).to_contain_text("qatarday.com labelled very reliable")

    page.get_by_label("Domain", exact=True).fill("qatarday.com")
    page.get_by_label("New label").select_option("completely_unreliable")
    page.get_by_label("Why (optional)").fill("ads only")
    page.get_by_role("button", name="Change the label").click()
    expect(page.locator(".message.success")).to_contain_text("qatarday.com is now completely unreliable")
    expect(page.locator("#labelled-table")).to_contain_text("Very reliable → Completely unreliable (ads only)")
    page.set_viewport_size({"width": 390, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    page.screenshot(path="/tmp/k/domains.png", full_page=True)


def test_the_validation_screen_is_judged_by_keyboard_one_key_per_choice(page: Page, coordinator, reviewer, tmp_path):
    validation_project(coordinator, reviewer, tasks=["question", "location"])
    start(page)
    first = page.locator("#question").inner_text()
    expect(page.locator("#validation-form[data-keys-ready]")).to_have_count(1)  # the keys are listened to

    page.keyboard.press("g")
    # an Arabic layout: the key printed "y" types "غ"; the physical key still answers "yes"
    page.evaluate("document.body.dispatchEvent(new KeyboardEvent('keydown', {key: 'غ', code: 'KeyY', bubbles: true}))")
    expect(page.locator('input[name=question][value="good"]')).to_be_checked()
    expect(page.locator('input[name=location_relevant][value="yes"]')).to_be_checked()
    page.keyboard.press("Enter")  # save and next

    expect(page.locator(".message.success")).to_contain_text("Saved")
    expect(page.locator("#question")).not_to_have_text(first)
    expect(page.locator("#validation-form[data-keys-ready]")).to_have_count(1)
    judgment = ValidationJudgment.objects.get()
    assert (judgment.question_good, judgment.location_relevant) == (True, True)

    page.keyboard.press("b")  # bad: the reason list takes the focus
    expect(page.locator("select[name=question_reason]")).to_be_focused()
    page.locator("select[name=question_reason]").select_option("opinion_seeking")
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    page.keyboard.press("Enter")
    # The first save's "Saved" is still on the page: wait for the second judgment itself.
    saved = ValidationJudgment.objects.filter(question_good=False, location_relevant=False)
    for _ in range(100):
        if saved.exists():
            break
        page.wait_for_timeout(100)
    assert saved.count() == 1
    expect(page.locator(".message.success")).to_contain_text("Saved")
    page.set_viewport_size({"width": 390, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    page.screenshot(path=str(tmp_path / "validation-keys.png"), full_page=True)
