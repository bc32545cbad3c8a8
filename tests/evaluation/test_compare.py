"""A run compared item by item with a baseline run of the same release: flips, regressions first, a paired
difference with its interval; under a judge's verdicts too."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation import judging
from tests.conftest import api_as
from tests.endpoints.conftest import make_endpoint
from tests.evaluation.conftest import prompt_lines
from tests.evaluation.test_judge import scored_run

MEASURE = "recommended:exact_match"


@pytest.fixture
def two_runs(yue_release, researcher):
    lines = prompt_lines(yue_release, "question_only")
    ids = [line["id"] for line in lines]

    def answers(wrong: set[str]):
        return lambda line: (
            "<answer>wrong</answer>" if line["id"] in wrong else f"<answer>{line['answer_standard']}</answer>"
        )

    baseline = scored_run(yue_release, researcher, answer=answers({ids[0]}))
    run = scored_run(yue_release, researcher, answer=answers({ids[1], ids[2]}))
    return {"baseline": baseline, "run": run, "ids": ids}


def test_regressions_come_first_then_improvements_with_the_paired_difference(two_runs, researcher):
    api = api_as(researcher)
    run, baseline, ids = two_runs["run"], two_runs["baseline"], two_runs["ids"]

    response = api.get(
        f"/api/projects/yue-cmn/evaluation/runs/{run.pk}/compare/", {"baseline": baseline.pk, "measure": MEASURE}
    )

    assert response.status_code == 200, response.json()
    found = response.json()
    statuses = [row["status"] for row in found["rows"]]
    assert statuses[:3] == ["regression", "regression", "improvement"]
    assert {row["item_id"] for row in found["rows"][:2]} == {ids[1], ids[2]}
    assert found["rows"][2]["item_id"] == ids[0]
    assert found["counts"] == {
        "regression": 2, "improvement": 1, "not_comparable": 0, "both_incorrect": 0, "both_correct": 3
    }  # fmt: skip
    assert found["paired"]["n"] == 6
    assert found["paired"]["delta"] == pytest.approx(-1 / 6)
    assert found["paired"]["ci_low"] <= -1 / 6 <= found["paired"]["ci_high"]
    assert found["paired"]["p"] == pytest.approx(1.0)  # exact McNemar, 2 against 1 discordant pairs


def test_the_compare_page_links_each_row_to_its_item(two_runs, researcher, client):
    client.force_login(researcher)
    run, baseline, ids = two_runs["run"], two_runs["baseline"], two_runs["ids"]

    page = client.get(
        reverse("evaluation_compare", args=["yue-cmn", run.pk]), {"baseline": baseline.pk, "measure": MEASURE}
    )

    assert page.status_code == 200
    content = page.content.decode()
    first_row = content.index('class="change-regression"')
    assert first_row < content.index('class="change-improvement"') < content.index('class="change-both-correct"')
    item_link = reverse("evaluation_items", args=["yue-cmn", run.pk]) + f"?item={ids[1]}"
    assert item_link in content
    items = client.get(reverse("evaluation_items", args=["yue-cmn", run.pk]), {"item": ids[1]})
    assert items.context["page"].paginator.count == 1


def test_a_judge_measure_needs_a_judgment_of_both_runs(two_runs, researcher, coordinator, model_stub):
    model_stub.answer(lambda request: "YES")
    endpoint = make_endpoint(two_runs["run"].project, coordinator, model_stub, name="judge")
    judgment = judging.judgment_start(run=two_runs["run"], endpoint=endpoint, user=researcher, enqueue=False)
    judging.judgment_run(judgment_id=judgment.pk)
    api = api_as(researcher)
    url = f"/api/projects/yue-cmn/evaluation/runs/{two_runs['run'].pk}/compare/"
    measure = "judge:judge:1"

    refused = api.get(url, {"baseline": two_runs["baseline"].pk, "measure": measure})
    assert refused.status_code == 400 and "judge it first" in refused.json()["detail"]

    other = judging.judgment_start(run=two_runs["baseline"], endpoint=endpoint, user=researcher, enqueue=False)
    judging.judgment_run(judgment_id=other.pk)
    found = api.get(url, {"baseline": two_runs["baseline"].pk, "measure": measure}).json()
    # the judge says YES to every answer it is asked about; wrong answers have an answer tag, so it is asked
    assert found["counts"]["both_correct"] == 6 and found["paired"]["delta"] == 0


def test_a_run_is_not_its_own_baseline(two_runs, researcher):
    api = api_as(researcher)
    run = two_runs["run"]
    response = api.get(
        f"/api/projects/yue-cmn/evaluation/runs/{run.pk}/compare/", {"baseline": run.pk, "measure": MEASURE}
    )
    assert response.status_code == 400 and response.json()["field"] == "baseline"
