"""Generated runs: the release's prompts go to an OpenAI-compatible endpoint (the stub server), the answers are
stored as they arrive and scored; failures are recorded per item; a run taken over after its worker died asks only
what is not stored yet."""

from __future__ import annotations

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from endpoints.models import ModelCall
from evaluation import services
from evaluation.models import EvaluationRun, Prediction
from tests.conftest import api_as
from tests.endpoints.conftest import make_endpoint
from tests.evaluation.conftest import prompt_lines
from tests.model_stub import StubReply

SCENARIOS = ["question_only", "local_lead"]


@pytest.fixture
def oracle(yue_release, model_stub):
    """The stub answers every prompt with its gold in answer tags."""
    gold = {line["prompt"]: line["answer_standard"] for s in SCENARIOS for line in prompt_lines(yue_release, s)}
    model_stub.answer(lambda request: f"Thinking… <answer>{gold[request.prompt_text]}</answer>")
    return gold


def results_row(run: EvaluationRun, metric: str, scenario: str) -> dict:
    return next(
        row
        for row in run.results
        if (row["metric"], row["scenario"], row["stratum"], row["mode"]) == (metric, scenario, "all", "recommended")
    )


def test_a_researcher_asks_a_model_and_the_answers_are_scored(
    yue_release, researcher, coordinator, model_stub, oracle, django_capture_on_commit_callbacks
):
    endpoint = make_endpoint(yue_release.project, coordinator, model_stub, concurrency=2)
    api = api_as(researcher)

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/projects/yue-cmn/evaluation/runs/generate/",
            {"release": 1, "endpoint": endpoint.pk, "scenarios": SCENARIOS},
            format="json",
        )

    assert response.status_code == 202, response.json()
    run = EvaluationRun.objects.get(pk=response.json()["id"])
    assert run.status == "done", run.error
    assert len(model_stub.requests) == 12  # 6 items × 2 scenarios
    assert model_stub.max_in_flight <= 2
    assert ModelCall.objects.filter(endpoint=endpoint, purpose="generation").count() == 12
    assert all(p.call_id for p in Prediction.objects.filter(run=run))
    for scenario in SCENARIOS:
        assert results_row(run, "exact_match", scenario)["mean"] == 1.0
        assert results_row(run, "exact_match", scenario)["n"] == 6
    assert run.endpoint_name == endpoint.name and run.counts["predictions"] == 12


def test_failed_calls_are_recorded_per_item_and_a_rerun_asks_only_them(
    yue_release, researcher, coordinator, model_stub, oracle, settings, client, django_capture_on_commit_callbacks
):
    settings.MODEL_MAX_ATTEMPTS = 2
    endpoint = make_endpoint(yue_release.project, coordinator, model_stub, concurrency=1)
    model_stub.script(StubReply.rate_limited(retry_after=0), StubReply.garbage(), StubReply.garbage())
    run = services.evaluation_run_generate(
        project=yue_release.project,
        release=yue_release,
        endpoint=endpoint,
        user=researcher,
        scenarios=["question_only"],
        enqueue=False,
    )

    services.evaluation_run_score(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == "done", run.error
    failed = Prediction.objects.get(run=run, extraction="error")
    assert failed.error and failed.prediction == ""
    assert run.counts["failed_calls"] == 1
    assert results_row(run, "exact_match", "question_only")["n"] == 6  # the failed item counts, as an empty answer
    assert results_row(run, "exact_match", "question_only")["mean"] == pytest.approx(5 / 6)
    sent = len(model_stub.requests)

    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("evaluation_run_score", args=["yue-cmn", run.pk]))

    run.refresh_from_db()
    assert len(model_stub.requests) == sent + 1  # only the failed prompt is asked again
    assert results_row(run, "exact_match", "question_only")["mean"] == 1.0
    assert run.counts["failed_calls"] == 0


def test_a_run_whose_worker_died_is_taken_over_and_asks_only_what_is_not_stored(
    yue_release, researcher, coordinator, model_stub, oracle
):
    endpoint = make_endpoint(yue_release.project, coordinator, model_stub)
    run = services.evaluation_run_generate(
        project=yue_release.project,
        release=yue_release,
        endpoint=endpoint,
        user=researcher,
        scenarios=["local_lead"],
        enqueue=False,
    )
    # what a worker stored before it was killed: two answers, and a heartbeat that went stale
    for line in prompt_lines(yue_release, "local_lead")[:2]:
        Prediction.objects.create(
            run=run,
            item_id=line["id"],
            item_kind="lead",
            scenario="local_lead",
            model=endpoint.name,
            prediction=f"<answer>{line['answer_standard']}</answer>",
        )
    stale = timezone.now() - datetime.timedelta(seconds=3600)
    EvaluationRun.objects.filter(pk=run.pk).update(status="running", owner="dead", heartbeat_at=stale)

    services.evaluation_run_score(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == "done", run.error
    assert run.attempts == 1
    assert len(model_stub.requests) == 4
    assert Prediction.objects.filter(run=run).count() == 6
    assert results_row(run, "exact_match", "local_lead")["mean"] == 1.0


def test_generation_needs_a_member_with_the_role_and_an_endpoint_of_the_project(
    yue_release, annotator, researcher, coordinator, model_stub, other_project
):
    endpoint = make_endpoint(yue_release.project, coordinator, model_stub)
    foreign = make_endpoint(other_project, other_project.memberships.first().user, model_stub, name="theirs")
    body = {"release": 1, "endpoint": endpoint.pk, "scenarios": ["question_only"]}

    refused = api_as(annotator).post("/api/projects/yue-cmn/evaluation/runs/generate/", body, format="json")
    elsewhere = api_as(researcher).post(
        "/api/projects/yue-cmn/evaluation/runs/generate/", {**body, "endpoint": foreign.pk}, format="json"
    )
    unknown = api_as(researcher).post(
        "/api/projects/yue-cmn/evaluation/runs/generate/", {**body, "scenarios": ["all_of_them"]}, format="json"
    )

    assert refused.status_code == 403
    assert elsewhere.status_code == 404
    assert unknown.status_code == 400 and unknown.json()["field"].startswith("scenarios")
    assert not model_stub.requests
