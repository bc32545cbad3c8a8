"""A model's suggestions in Chromium: a validator takes one item's suggestions with the A key and overrides one of
them by its own key, answers the next item alone, all by keyboard; the coordinator reads model vs validators on
the agreement page and reviews drafted seed queries in place (htmx). 1440×900 and 390 px, no sideways scroll."""

from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import Page, expect

from annotation.importers.sources import ImportSource
from annotation.services.members import membership_set
from endpoints import services as endpoints
from tests.browser.conftest import log_in, nav_to
from validation import services, suggestions
from validation.models import ModelJob, SeedDraft, SeedQuery, SuggestionUse

pytestmark = pytest.mark.browser
SHOTS = os.environ.get("SCREENSHOTS_DIR")  # set it to look at the screens

ITEMS = [("Which stadium hosted the 2022 final?", "Lusail."), ("What is the national dish of Qatar?", "Machboos.")]


def shot(page: Page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


def no_sideways_scroll(page: Page) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.set_viewport_size({"width": 1440, "height": 900})


@pytest.fixture
def suggested(coordinator, reviewer, model_stub):
    project = services.validation_project_create(
        name="Qatar QA", slug="qa-suggest", language="eng", location="Qatar", created_by=coordinator
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    services.validation_settings_update(project=project, tasks=["question", "answer_edit", "location"])
    lines = "".join(
        json.dumps({"question": q, "answer": a, "source_url": "https://www.qatarday.com/x"}) + "\n" for q, a in ITEMS
    )
    services.validation_items_import(project=project, source=ImportSource("q.jsonl", data=lines.encode()), user=None)
    model_stub.default_text = json.dumps(
        {"question_good": True, "question_reason": "", "edited_answer": "Lusail Stadium.", "location_relevant": False}
    )
    endpoint = endpoints.endpoint_create(
        project=project, user=coordinator, name="stub", base_url=model_stub.base_url, model="stub-7b"
    )
    # Outside a test transaction the job is sent at its commit, and the eager worker of the tests runs it.
    job = suggestions.suggestions_start(project=project, endpoint_id=endpoint.pk, user=coordinator)
    assert ModelJob.objects.get(pk=job.pk).answered == 2
    model_stub.default_text = json.dumps({"queries": ["best machboos in Doha", "Doha street food"]})
    draft_job = suggestions.seed_drafts_start(
        project=project, endpoint_id=endpoint.pk, locations=["Doha"], topics=["food"], count=2, user=coordinator
    )
    assert ModelJob.objects.get(pk=draft_job.pk).answered == 1
    return project


def test_a_validator_takes_and_overrides_suggestions_by_keyboard_and_the_coordinator_reads_the_agreement(
    page: Page, suggested, reviewer
):
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, "reviewer")
    page.goto(f"/projects/{suggested.slug}/validation/")
    page.locator("#validation-next").focus()
    page.keyboard.press("Enter")
    form = page.locator("#validation-form")
    expect(form).to_have_attribute("data-suggestions-ready", "")
    expect(page.locator("#suggestion-question")).to_contain_text("Model suggests Good")
    expect(page.locator("#suggestion-location")).to_contain_text("No")
    shot(page, "suggestions-task-1440")
    no_sideways_scroll(page)

    # A takes every suggestion; Y then overrides the location's "no"; Enter saves.
    page.keyboard.press("a")
    expect(page.locator('input[name=question][value="good"]')).to_be_checked()
    expect(page.locator('input[name=location_relevant][value="no"]')).to_be_checked()
    expect(page.locator("textarea[name=answer]")).to_have_value("Lusail Stadium.")
    page.keyboard.press("y")
    expect(page.locator('input[name=location_relevant][value="yes"]')).to_be_checked()
    page.keyboard.press("Enter")
    expect(page.locator(".message.success")).to_contain_text("Saved")

    # The next item: answered alone (G, Y), the suggestion left aside.
    expect(page.locator("#suggestion-question")).to_be_visible()
    page.wait_for_load_state("load")
    page.keyboard.press("g")
    page.keyboard.press("y")
    # The first save's "Saved" is still on the page: wait for this save's own answer before reading the rows.
    with page.expect_navigation():
        page.keyboard.press("Enter")
    expect(page.locator(".message.success")).to_contain_text("Saved")

    uses = sorted(SuggestionUse.objects.values_list("judgment__item__question", "field", "outcome"))
    stadium, dish = ITEMS[0][0], ITEMS[1][0]
    assert uses == sorted(
        [
            (stadium, "question", "accepted"),
            (stadium, "answer", "accepted"),
            (stadium, "location", "changed"),
            (dish, "question", "ignored"),
            (dish, "answer", "ignored"),
            (dish, "location", "ignored"),
        ]
    )

    # The coordinator: model vs validators on the agreement page.
    page.context.clear_cookies()
    log_in(page, "coordinator")
    page.goto(f"/projects/{suggested.slug}/validation/")
    nav_to(page, "Agreement", "Review")
    table = page.locator("#agreement-model")
    expect(table).to_contain_text("Question good/bad")
    rows = table.locator("tbody tr")
    expect(rows.nth(0).locator("td").nth(1)).to_have_text("2")  # items (n)
    expect(rows.nth(0).locator("td").nth(2)).to_have_text("1.000")  # the model said good, so did the validator
    expect(rows.nth(2).locator("td").nth(2)).to_have_text("0.000")  # location: the model said no, people yes
    expect(page.locator("#suggestion-uses")).to_contain_text("Edited answer")
    shot(page, "suggestions-agreement-1440")
    no_sideways_scroll(page)

    # Drafted seed queries: one accepted as edited, one rejected, in place.
    nav_to(page, "Drafted seed queries", "Data")
    expect(page.locator("#drafts-waiting")).to_have_text("2")
    first = page.locator(".draft-row").nth(0)
    first.locator("input[name=query]").fill("best machboos restaurants in Doha")
    first.get_by_role("button", name="Accept").click()
    expect(page.locator(".draft-row").nth(0)).to_contain_text("Accepted")
    page.locator(".draft-row").nth(1).get_by_role("button", name="Reject").click()
    expect(page.locator(".draft-row").nth(1)).to_contain_text("Rejected")
    shot(page, "seed-drafts-1440")
    no_sideways_scroll(page)
    assert list(SeedQuery.objects.values_list("query", flat=True)) == ["best machboos restaurants in Doha"]
    assert SeedDraft.objects.filter(status="draft").count() == 0


@pytest.fixture
def trivia_suggested(coordinator, annotator, second_annotator, reviewer, model_stub):
    from multichoice.services.items import trivia_item_create
    from multichoice.services.projects import trivia_project_create
    from multichoice.services.reviews import trivia_review
    from multichoice.services.suggestions import translation_suggestions_start
    from tests.multichoice.conftest import CATEGORIES, item_values

    project = trivia_project_create(
        name="Basque trivia",
        slug="basque-suggest",
        source_language="eus",
        target_language="eng",
        categories=CATEGORIES,
        created_by=coordinator,
    )
    membership_set(project=project, user=annotator, roles={"annotator"})
    membership_set(project=project, user=second_annotator, roles={"annotator"})
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    item = trivia_item_create(project=project, user=annotator, **item_values())
    trivia_review(item=item, user=reviewer, criteria={c["key"]: True for c in project.review_criteria})
    model_stub.default_text = json.dumps(
        {"question": "Where is Atxondo?", "candidates": ["In Biscay", "In Gipuzkoa", "In Navarre"]}
    )
    endpoint = endpoints.endpoint_create(
        project=project, user=coordinator, name="stub", base_url=model_stub.base_url, model="stub-7b"
    )
    translation_suggestions_start(project=project, endpoint_id=endpoint.pk, user=coordinator)  # run at commit
    return project


def test_a_translator_takes_a_suggested_translation_with_a_and_changes_one_candidate(page: Page, trivia_suggested):
    from multichoice.models import TranslationSuggestion

    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, "annotator2")
    page.goto(f"/projects/{trivia_suggested.slug}/trivia/")
    page.locator("#trivia-translate-next").click()
    expect(page.locator("#trivia-translate-form")).to_have_attribute("data-suggestions-ready", "")
    expect(page.locator("#suggestion-translation")).to_contain_text("Where is Atxondo?")
    page.keyboard.press("a")
    expect(page.get_by_label("Translated question")).to_have_value("Where is Atxondo?")
    page.get_by_label("Translated candidate 3").fill("In Navarra")
    shot(page, "suggestions-translate-1440")
    no_sideways_scroll(page)
    page.get_by_role("button", name="Save the translation").click()
    expect(page.locator(".message.success")).to_contain_text("Translation saved")
    assert TranslationSuggestion.objects.get().outcome == "changed"

    page.context.clear_cookies()
    log_in(page, "coordinator")
    page.goto(f"/projects/{trivia_suggested.slug}/trivia/")
    nav_to(page, "Suggested translations", "Review")
    expect(page.locator("#suggestion-outcomes")).to_contain_text("1 accepted, then changed")
    expect(page.locator("#trivia-suggestion-jobs")).to_contain_text("Done")
    no_sideways_scroll(page)
