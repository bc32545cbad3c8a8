"""A new team's first hour, one flow per project kind, from demo_setup's data, in Chromium, on whichever engine
the suite runs on: each person starts from the project page, where their next step and its counts are."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

import demo as demo_package
from annotation.models import EvidenceSpan, PagePair, QAItem
from exports.models import Release
from exports.services import release_file_path
from multichoice import entities
from multichoice.models import EntityQuestion, TriviaItem
from tests.browser.conftest import log_in, nav_to
from tests.browser.test_authoring import add_item, card, fill_item, select_text, wait_saved
from tests.multichoice.conftest import FIXTURES

# Every workflow of every kind: the one browser walk that runs on PostgreSQL (the production shape) too.
pytestmark = [pytest.mark.browser, pytest.mark.every_engine]

DEMO = Path(demo_package.__file__).resolve().parent / "data"
PASSWORD = "localqa-demo"
BERTAQA = FIXTURES / "both_correct_examples.csv"


@pytest.fixture(autouse=True)
def demo(_live_database):
    call_command("demo_setup", stdout=open("/dev/null", "w"))  # noqa: SIM115 -- closed with the process


def as_user(page: Page, username: str) -> None:
    page.context.clear_cookies()
    log_in(page, username, PASSWORD)


def open_project(page: Page, name: str) -> None:
    """From the list of projects, as a person would after logging in."""
    page.goto("/")
    page.get_by_role("link", name=name, exact=True).click()


def step(page: Page, key: str):
    return page.locator(f"#step-{key}")


def build_release(page: Page, version: int, group: str | None = "Data") -> None:
    nav_to(page, "Releases", group)
    page.locator("#build-release").click()  # "Build release", or "Build anyway (N unfinished)" with a readiness list
    expect(page.locator("h1")).to_have_text(f"Release v{version}")
    expect(page.locator("#release-state")).to_have_text("Published")


def test_wikipedia_qa_screen_two_items_with_evidence_submit_review_release(page: Page):
    as_user(page, "annotator1")
    open_project(page, "Cantonese–Mandarin")
    expect(step(page, "next-pair")).to_contain_text("4 pairs waiting for you")
    expect(step(page, "next-pair")).to_contain_text("1 item of yours needs a rewrite")
    expect(step(page, "next-pair")).to_contain_text("Which dish?")
    page.locator("#next-pair").click()
    expect(page).to_have_url(re.compile(r"/pairs/\d+/$"))
    page.locator("#screen-submit").click()  # "Annotate this pair", the first of the decision buttons
    expect(page.locator("#add-item")).to_be_visible()

    first = add_item(page)
    select_text(page, "四至八層高")
    card(page, first).locator(".add-evidence").click()
    expect(card(page, first).locator(".chip-text")).to_have_text(["四至八層高"])
    fill_item(page, first, "唐楼通常有几层高？", "四至八层", "四至八層")
    wait_saved(page, first)
    second = add_item(page)
    select_text(page, "地下做舖頭")
    card(page, second).locator(".add-evidence").click()
    fill_item(page, second, "唐楼的地下一般做什么用？", "开店铺", "做舖頭")
    page.locator("#submit-pair").click()
    expect(page.locator(".message.success")).to_contain_text("Submitted for review")
    pair = PagePair.objects.get(local_title="唐樓")
    assert pair.status == PagePair.Status.SUBMITTED
    evidence = set(EvidenceSpan.objects.filter(item__pair=pair).values_list("text", flat=True))
    assert evidence == {"四至八層高", "地下做舖頭"}

    as_user(page, "reviewer")
    open_project(page, "Cantonese–Mandarin")
    expect(step(page, "review-next")).to_contain_text("2 items waiting for you")
    for left in (1, 0):
        page.locator("#review-next").click()
        for fieldset in page.locator("fieldset[data-criterion]").all():
            fieldset.locator('input[value="pass"]').check()
        page.locator("#judgment-submit").click()
        expect(page.locator(".message.success")).to_contain_text("Review recorded")
        page.goto("/projects/yue-cmn/")
        expect(step(page, "review-next")).to_contain_text(f"{left} item")
    assert set(QAItem.objects.filter(pair=pair).values_list("status", flat=True)) == {"accepted"}

    as_user(page, "coordinator")
    open_project(page, "Cantonese–Mandarin")
    expect(step(page, "open-dashboard")).to_be_visible()
    build_release(page, 2)  # demo_setup published v1
    release = Release.objects.get(project__slug="yue-cmn", version=2)
    assert release.status == Release.Status.DONE
    assert QAItem.objects.filter(project__slug="yue-cmn", status="accepted").count() == 3


def test_validation_import_judge_release(page: Page):
    as_user(page, "coordinator")
    open_project(page, "Doha questions (validation)")
    nav_to(page, "Import", "Data")
    page.locator("input[name=file]").set_input_files(str(DEMO / "doha-val-more.jsonl"))
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#job-status")).to_contain_text("2 created")

    as_user(page, "reviewer")
    open_project(page, "Doha questions (validation)")
    expect(page).to_have_url(re.compile(r"/projects/doha-val/validation/$"))
    expect(step(page, "validation-next")).to_contain_text("6 items left")
    page.locator("#validation-next").click()
    page.locator('input[name=question][value="good"]').check()
    page.locator('input[name=location_relevant][value="yes"]').check()
    page.locator("#validation-save").click()
    expect(page.locator(".message.success")).to_contain_text("Saved")
    page.goto("/projects/doha-val/")
    expect(step(page, "validation-next")).to_contain_text("5 items left")
    assert QAItem.objects.filter(project__slug="doha-val", status="accepted").count() == 3

    as_user(page, "coordinator")
    open_project(page, "Doha questions (validation)")
    expect(step(page, "validation-release-step")).to_contain_text("3 validated")
    build_release(page, 2)


def test_trivia_write_review_translate_release(page: Page):
    as_user(page, "annotator1")
    open_project(page, "Bavarian trivia")
    expect(page.locator("body")).not_to_contain_text("Next pair")
    page.locator("#trivia-write").click()
    page.get_by_label("Question").fill("Wie heißt das größte Volksfest in München?")
    for index, text in enumerate(["Oktoberfest", "Gäubodenvolksfest", "Cannstatter Wasen"], start=1):
        page.get_by_label(f"Candidate {index}", exact=True).fill(text)
    page.get_by_label("Candidate 1 is correct").check()
    page.get_by_label("Category").select_option("Bräuche")
    page.get_by_label("Subset").select_option("local")
    page.get_by_label("Difficulty").select_option("easy")
    page.get_by_role("button", name="Send to review").click()
    expect(page.locator(".message.success")).to_contain_text("Item sent to review")
    ours = TriviaItem.objects.get(item__question="Wie heißt das größte Volksfest in München?")

    as_user(page, "reviewer")
    open_project(page, "Bavarian trivia")
    expect(step(page, "trivia-review-next")).to_contain_text("3 items waiting for you")
    for _ in range(3):  # the demo's two items in review come first
        page.locator("#trivia-review-next").click()
        for checkbox in page.locator("input[name=criteria]").all():
            checkbox.check()
        page.get_by_role("button", name="Save the review").click()
        expect(page.locator(".message.success")).to_contain_text("Accepted")
        page.goto("/projects/bavaria-trivia/")
    ours.refresh_from_db()
    assert ours.item.status == "accepted"

    as_user(page, "annotator2")
    open_project(page, "Bavarian trivia")
    for _ in range(4):  # annotator1's accepted items, oldest first, until ours is done
        page.locator("#trivia-translate-next").click()
        page.get_by_label("Translated question").fill("What is it in English?")
        for index in range(page.locator("input[aria-label^='Translated candidate']").count()):
            page.get_by_label(f"Translated candidate {index + 1}").fill(f"Candidate {index}")
        page.get_by_role("button", name="Save the translation").click()
        expect(page.locator(".message.success")).to_contain_text("Translation saved")
        ours.refresh_from_db()
        if ours.translation_status == TriviaItem.Translation.DONE:
            break
        page.goto("/projects/bavaria-trivia/")
    assert ours.translation_status == TriviaItem.Translation.DONE

    as_user(page, "coordinator")
    open_project(page, "Bavarian trivia")
    page.goto("/projects/bavaria-trivia/trivia/import/")
    for _ in range(2):  # the same BertaQA file twice: the second time it is recognised and nothing is imported
        page.goto("/projects/bavaria-trivia/trivia/import/")
        page.get_by_label("File").set_input_files(str(BERTAQA))
        page.get_by_label("Subset of the CSV's rows").select_option("local")
        page.get_by_role("button", name="Import", exact=True).click()
    expect(page.locator("#job-summary")).to_contain_text("was imported already")
    assert TriviaItem.objects.filter(project__slug="bavaria-trivia", external_id="1").count() == 1
    page.goto("/projects/bavaria-trivia/trivia/balance/?view=translated")
    expect(page.locator("#balance td.low").first).to_be_visible()
    build_release(page, 2)
    release = Release.objects.get(project__slug="bavaria-trivia", version=2)
    records = [json.loads(line) for line in release_file_path(release, "trivia.jsonl").read_text().splitlines()]
    mine = next(r for r in records if r["deu"]["question"] == "Wie heißt das größte Volksfest in München?")
    assert mine["eng"]["candidates"][mine["answer"]] == "Candidate 0" and mine["subset"] == "local"
    assert {r["id"] for r in records}.isdisjoint({"1", "2"})  # imported, not yet translated: not released


def test_entity_questions_import_generate_verify_release(page: Page):
    as_user(page, "coordinator")
    open_project(page, "Bavarian companies")
    page.get_by_label("File").set_input_files(str(DEMO / "companies-more.csv"))
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#job-summary")).to_contain_text("3 entities imported")
    open_project(page, "Bavarian companies")
    page.locator("#entity-generate").click()
    expect(page.locator("#job-summary")).to_contain_text("questions generated")
    waiting = EntityQuestion.objects.filter(project__slug="bavaria-companies", item__status="submitted").count()
    assert waiting > 10  # the demo's ten and the new entities' questions

    as_user(page, "reviewer")
    open_project(page, "Bavarian companies")
    expect(step(page, "entity-verify-next")).to_contain_text(f"{waiting} questions waiting for you")
    page.locator("#entity-verify-next").click()
    first = page.url
    expect(page.locator("#entity-verify-form[data-keys-ready]")).to_be_attached()
    page.keyboard.press("a")  # accept and next: one key, and the next question opens
    expect(page.locator(".message.success")).to_contain_text("Question verified")
    expect(page).not_to_have_url(first)
    expect(page.locator("#entity-verify-form")).to_be_visible()
    open_project(page, "Bavarian companies")
    # one verified, and the next one opened is held by this verifier
    expect(step(page, "entity-verify-next")).to_contain_text(f"{waiting - 2} questions waiting for you")
    expect(step(page, "entity-verify-next")).to_contain_text("1 held by you")

    as_user(page, "coordinator")
    open_project(page, "Bavarian companies")
    expect(step(page, "entity-release-step")).to_contain_text("2 verified")
    people = EntityQuestion.objects.filter(project__slug="bavaria-companies", attribute="key_people")
    assert set(people.filter(entity__name="Siemens").values_list("correct_value", flat=True)) == {
        "Roland Busch",
        "Jim Hagemann Snabe",
    }
    question = people.get(entity__name="Siemens", direction="deductive", correct_value="Jim Hagemann Snabe")
    page.goto(f"/projects/bavaria-companies/entities/questions/{question.item_id}/")  # the coordinator reads it
    expect(page.locator("#question-text")).to_have_text("At which company is Jim Hagemann Snabe a key person?")
    expect(page.locator("#question-contexts")).to_contain_text("Jim Hagemann Snabe is a key person at Siemens.")
    build_release(page, 2, group=None)  # the only link of its group: a plain link
    release = Release.objects.get(project__slug="bavaria-companies", version=2)
    lines = release_file_path(release, "entity_questions.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 2 and all(set(r["contexts"]) == set(entities.CONTEXTS) for r in records)
    for record in records:
        assert not any(";" in option for option in record["options"])
        assert record["contexts"]["perfect"] and record["misleading_option"] != record["answer"]
    # Each question once, naming its split (no copy per split); every split counted, empty ones too.
    assert not [entry["name"] for entry in release.files if entry["name"].startswith("entity_questions/")]
    by_split = release.counts["entity_questions_by_split"]
    assert set(by_split) == set(release.splits) and sum(by_split.values()) == 2
    assert {split: n for split, n in by_split.items() if n} == Counter(record["split"] for record in records)
