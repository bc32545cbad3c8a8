"""Evaluation pages in Chromium at a phone's width: the annotator stratum of a Wikipedia QA run, the geo-bias odds
ratios of an entity run, and a validation project's generation form and generated run."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Locator, Page, expect

from evaluation import annotators, services
from evaluation.gold import VALIDATION_TEMPLATE
from tests.browser.conftest import log_in
from tests.endpoints.conftest import make_endpoint
from tests.evaluation import test_geobias, test_validation
from tests.evaluation.conftest import predictions
from tests.evaluation.test_annotator_stratum import authors_release  # noqa: F401  (a fixture)
from tests.evaluation.test_geobias import records
from tests.validation.conftest import second_reviewer, vproject  # noqa: F401
from tests.validation.test_release import validated  # noqa: F401

pytestmark = pytest.mark.browser

entity_release = test_geobias.entity_release
validation_release = test_validation.validation_release


def narrow(page: Page, name: str, part: Locator | None = None) -> None:
    """At a phone's width nothing scrolls sideways; the page (and the part this test is about) photographed."""
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=f"/tmp/{name}-390.png", full_page=True)
    if part is not None:
        part.screenshot(path=f"/tmp/{name}-part-390.png")


def test_the_annotator_stratum_names_people_and_the_unknown_cell(page: Page, authors_release, researcher):  # noqa: F811
    data = predictions(authors_release, lambda line: f"<answer>{line['answer_standard']}</answer>")
    run = services.evaluation_run_create(
        project=authors_release.project, release=authors_release, user=researcher, data=data, enqueue=False
    )
    services.evaluation_run_score(run_id=run.pk)
    log_in(page, "researcher")
    page.goto(run.get_absolute_url())
    table = page.locator("table[data-stratum='annotator']").first
    expect(table.locator("caption")).to_contain_text("By annotator")
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(table).to_contain_text("Mei Chan")
    expect(table).to_contain_text(annotators.UNKNOWN)
    expect(page.locator("#annotator-provenance")).to_contain_text("2 item(s)")
    assert "lee@example.org" not in page.content()
    narrow(page, "evaluation-annotator", table)


def test_the_entity_run_shows_odds_ratios_with_their_method(page: Page, entity_release, researcher):
    lines = records(entity_release)
    data = "".join(
        json.dumps({"id": r["id"], "scenario": c, "prediction": reply, "model": "geo"}) + "\n"
        for n, r in enumerate(lines)
        for c in ("none", "misleading")
        for reply in [json.dumps({"response": "ABCD"[r["answer"]] if n % 3 else "A"}) if n != 5 else "no JSON"]
    ).encode()
    run = services.evaluation_run_create(
        project=entity_release.project, release=entity_release, user=researcher, data=data, enqueue=False
    )
    services.evaluation_run_score(run_id=run.pk)
    log_in(page, "researcher")
    page.goto(run.get_absolute_url())
    table = page.locator("table.odds-ratios").first
    expect(table.locator("tbody tr")).to_have_count(3)  # no context, misleading, all conditions
    expect(table).to_contain_text("All conditions")
    expect(page.locator(".results-caption", has_text="Woolf").first).to_be_visible()
    narrow(page, "evaluation-odds-ratios", table.locator("xpath=.."))


def test_a_validation_project_asks_a_model_its_questions_from_the_page(
    page: Page, validation_release, coordinator, model_stub
):
    release, records_ = validation_release
    gold = {r["question"]: r["answer"] for r in records_}
    model_stub.answer(lambda request: f"<answer>{gold[request.prompt_text.rsplit('Question: ', 1)[1]]}</answer>")
    make_endpoint(release.project, coordinator, model_stub)
    log_in(page, "coordinator")
    page.goto(f"/projects/{release.project.slug}/evaluation/")
    form = page.locator("#evaluation-generate")
    expect(form.locator("input[name='scenarios']")).to_have_count(1)
    expect(form.locator("input[name='scenarios']")).to_have_value("question_only")
    narrow(page, "evaluation-validation-generate", form)
    page.set_viewport_size({"width": 1400, "height": 1000})
    form.get_by_role("button", name="Ask and score").click()
    expect(page.locator("#run-state")).to_have_text("Scored", timeout=30_000)
    page.reload()
    expect(page.locator("#prompt-template")).to_contain_text(VALIDATION_TEMPLATE)
    expect(page.locator(".results").first).to_contain_text("100.0")
    narrow(page, "evaluation-validation-run", page.locator("#provenance"))
