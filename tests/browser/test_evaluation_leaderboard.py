"""The leaderboard in Chromium: a researcher goes from the evaluation runs to the project's leaderboard, reads the
table and its chart, changes the metric from the keyboard, and opens a model's run with its own chart; the pages
fit a phone."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from evaluation import services
from exports import services as releases
from tests.browser.conftest import log_in, nav_to
from tests.exports.conftest import authored_pair
from tests.exports.loading import prompt_lines

pytestmark = pytest.mark.browser


def _scored(release, user, model: str, answer) -> None:
    lines = []
    for scenario in ("question_only", "local_lead"):
        for line in prompt_lines(release, scenario):
            text = f"<answer>{answer(scenario, line)}</answer>"
            lines.append({"id": line["id"], "scenario": scenario, "prediction": text, "model": model})
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    run = services.evaluation_run_create(
        project=release.project, release=release, user=user, data=data, bootstrap_draws=200, enqueue=False
    )
    scored = services.evaluation_run_score(run_id=run.pk)
    assert scored is not None and scored.status == "done"


def test_a_researcher_reads_the_leaderboard_and_its_chart_on_a_wide_screen_and_a_phone(
    page: Page, project, annotator, coordinator, researcher, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"
    authored_pair(project, annotator)
    authored_pair(project, annotator)
    release = releases.release_build_now(project=project, user=coordinator, seed=1)
    _scored(release, researcher, "oracle", lambda scenario, line: line["answer_standard"])
    _scored(
        release,
        researcher,
        "qwen",
        lambda scenario, line: line["answer_standard"] if scenario == "local_lead" else "不知道",
    )

    log_in(page, "researcher")
    page.goto(f"/projects/{project.slug}/releases/")
    nav_to(page, "Evaluation", "Data")
    page.get_by_role("link", name="Leaderboard").click()
    expect(page.locator("h1")).to_have_text("Leaderboard")
    table = page.locator("#leaderboard-table")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("tbody tr").first).to_contain_text("oracle")  # ranked first
    expect(table.locator("thead")).to_contain_text("With the local lead")
    expect(page.locator("#leaderboard-convention")).to_contain_text("percentile bootstrap 95% interval")
    expect(page.locator("#leaderboard-chart svg g.bar")).to_have_count(4)
    page.screenshot(path="/tmp/evaluation-leaderboard-1440.png", full_page=True)

    # another metric, from the keyboard: exact match, with Wilson intervals
    page.get_by_label("Metric").select_option("recommended:exact_match")
    page.get_by_label("Metric").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#leaderboard-convention")).to_contain_text("Exact match, recommended")
    expect(page.locator("#leaderboard-convention")).to_contain_text("Wilson 95% interval")
    expect(page.locator("#leaderboard-chart")).to_contain_text("n=")

    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path="/tmp/evaluation-leaderboard-390.png", full_page=True)

    # a model's run, with the chart of its primary metric
    table.locator("tbody tr", has_text="qwen").get_by_role("link").click()
    expect(page.locator(".results").first.locator("figure.chart svg g.bar")).to_have_count(2)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path="/tmp/evaluation-run-chart-390.png", full_page=True)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.screenshot(path="/tmp/evaluation-run-chart-1440.png", full_page=True)
