"""The leaderboard: each model's newest scored run on a release, models × scenarios under one metric, every cell
the run's own result (n, interval) with the convention stated; the page draws the same numbers as a chart."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from statsmodels.stats.proportion import proportion_confint

from evaluation import services
from evaluation.models import EvaluationRun
from tests.conftest import api_as
from tests.evaluation.conftest import predictions, prompt_lines

SCENARIOS = ("question_only", "local_lead")


def scored(release, user, answer, model) -> EvaluationRun:
    data = predictions(release, answer, model=model, scenarios=SCENARIOS)
    run = services.evaluation_run_create(
        project=release.project, release=release, user=user, data=data, bootstrap_draws=200, enqueue=False
    )
    services.evaluation_run_score(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


@pytest.fixture
def board_world(yue_release, researcher):
    gold = {line["id"]: line["answer_standard"] for line in prompt_lines(yue_release, "question_only")}
    first_two = sorted(gold)[:2]
    scored(yue_release, researcher, lambda line: "<answer>不知道</answer>", "oracle")  # superseded below
    oracle = scored(yue_release, researcher, lambda line: f"<answer>{line['answer_standard']}</answer>", "oracle")
    half = scored(
        yue_release,
        researcher,
        lambda line: f"<answer>{line['answer_standard'] if line['id'] in first_two else '不知道'}</answer>",
        "two right",
    )
    return {"oracle": oracle, "half": half, "n": len(gold)}


def result(run: EvaluationRun, scenario: str, mode: str, metric: str) -> dict:
    return next(
        row
        for row in run.results
        if (row["scenario"], row["mode"], row["metric"], row["stratum"]) == (scenario, mode, metric, "all")
    )


def test_the_leaderboard_holds_each_models_newest_run_with_its_own_cells(board_world, researcher):
    api = api_as(researcher)

    board = api.get("/api/projects/yue-cmn/evaluation/leaderboard/").json()

    assert (board["release_version"], board["kind"], board["mode"], board["metric"]) == (
        1,
        "lead",
        "recommended",
        "rouge_l",
    )
    assert board["scenarios"] == list(SCENARIOS)
    assert [(row["model"], row["run"]) for row in board["rows"]] == [
        ("oracle", board_world["oracle"].pk),
        ("two right", board_world["half"].pk),
    ]
    for row, run in zip(board["rows"], (board_world["oracle"], board_world["half"]), strict=True):
        for cell, scenario in zip(row["cells"], SCENARIOS, strict=True):
            own = result(run, scenario, "recommended", "rouge_l")
            assert {key: cell[key] for key in ("n", "mean", "ci_low", "ci_high", "interval")} == {
                key: own[key] for key in ("n", "mean", "ci_low", "ci_high", "interval")
            }
    assert board["rows"][0]["cells"][0]["mean"] == 1.0
    assert "percentile bootstrap 95% interval, resampled by page pair" in board["convention"]


def test_a_proportion_on_the_leaderboard_has_statsmodels_wilson_interval(board_world, researcher):
    api = api_as(researcher)

    board = api.get("/api/projects/yue-cmn/evaluation/leaderboard/?metric=recommended:exact_match").json()

    n = board_world["n"]
    half = board["rows"][1]["cells"][0]
    low, high = proportion_confint(2, n, method="wilson")
    assert (half["n"], half["mean"]) == (n, pytest.approx(2 / n))
    assert (half["ci_low"], half["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert board["convention"].startswith("Exact match, recommended (language-aware): mean × 100 with its Wilson 95%")


def test_the_leaderboard_page_shows_words_the_convention_and_a_chart_of_the_same_numbers(
    board_world, researcher, client
):
    client.force_login(researcher)

    page = client.get(reverse("evaluation_leaderboard", args=["yue-cmn"]) + "?metric=recommended:exact_match")

    html = page.content.decode()
    assert page.status_code == 200
    assert "With the local lead" in html and ">question_only<" not in html
    assert "Wilson 95% interval and n per cell" in html
    n = board_world["n"]
    mean = f"{100 * 2 / n:.1f}"
    low, high = (f"{100 * v:.1f}" for v in proportion_confint(2, n, method="wilson"))
    assert f">{mean} [{low}–{high}], n={n} ⚠<" in html  # the chart's bar says what the table's cell says
    assert len(re.findall(r'<g class="bar">', html)) == 4  # two models × two scenarios
    assert f'href="{reverse("evaluation_run", args=["yue-cmn", board_world["half"].pk])}"' in html


def test_a_project_without_scored_runs_has_an_empty_leaderboard(yue_release, researcher, client):
    client.force_login(researcher)

    page = client.get(reverse("evaluation_leaderboard", args=["yue-cmn"]))

    assert "No scored run yet" in page.content.decode()
    assert api_as(researcher).get("/api/projects/yue-cmn/evaluation/leaderboard/").json()["rows"] == []


def test_the_run_page_draws_its_primary_metric_as_bars_with_intervals(board_world, researcher, client):
    client.force_login(researcher)
    run = board_world["half"]

    html = client.get(run.get_absolute_url()).content.decode()

    own = result(run, "local_lead", "recommended", "rouge_l")
    label = f">{100 * own['mean']:.1f} [{100 * own['ci_low']:.1f}–{100 * own['ci_high']:.1f}], n={own['n']} ⚠<"
    assert label in html and ">With the local lead<" in html
    assert 'role="img"' in html and "whiskers: the 95% interval" in html
