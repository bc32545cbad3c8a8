"""Validation releases asked and judged: a generated run sends each item's question (in its own language, through a
named template the run records, since the release ships none) to an OpenAI-compatible endpoint (the stub server) and
scores the answers against the validated answer; the LLM judge compares each answer with the validated answer."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from django.urls import reverse

from common.errors import InvalidInput
from evaluation import judging, services
from evaluation.gold import VALIDATION_TEMPLATE, VALIDATION_TEMPLATES
from evaluation.models import EvaluationRun, Prediction
from tests.conftest import api_as
from tests.endpoints.conftest import make_endpoint
from tests.evaluation import test_validation
from tests.validation.conftest import second_reviewer, vproject  # noqa: F401
from tests.validation.test_release import validated  # noqa: F401

validation_release = test_validation.validation_release  # the validation tests' release, a fixture

QUESTION = re.compile(r"Question: (.*)\Z", re.S)


def question_of(prompt: str) -> str:
    found = QUESTION.search(prompt)
    assert found, prompt
    return found[1]


@pytest.fixture
def answering(validation_release, model_stub):
    """The stub answers each question with its validated answer in answer tags."""
    _, records = validation_release
    gold = {r["question"]: r["answer"] for r in records}
    model_stub.answer(lambda request: f"Sure. <answer>{gold[question_of(request.prompt_text)]}</answer>")
    return gold


def test_a_validation_release_is_asked_through_the_named_template_and_scored_against_the_validated_answer(
    validation_release, answering, coordinator, model_stub, django_capture_on_commit_callbacks
):
    release, records = validation_release
    endpoint = make_endpoint(release.project, coordinator, model_stub, concurrency=2)
    api = api_as(coordinator)

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/projects/{release.project.slug}/evaluation/runs/generate/",
            {"release": release.version, "endpoint": endpoint.pk, "scenarios": ["question_only"]},
            format="json",
        )

    assert response.status_code == 202, response.json()
    assert response.json()["prompt_template"] == VALIDATION_TEMPLATE
    run = EvaluationRun.objects.get(pk=response.json()["id"])
    assert run.status == "done", run.error
    assert len(model_stub.requests) == len(records)
    prompts = sorted(request.prompt_text for request in model_stub.requests)
    template = VALIDATION_TEMPLATES[VALIDATION_TEMPLATE]
    assert prompts == sorted(
        template.replace("{language}", "English").replace("{question}", r["question"]) for r in records
    )  # the question as the release has it, in its own language (every item of this release is English)
    assert run.release_files == [
        {"name": "validation_qa.jsonl", "sha256": release.file_entry("validation_qa.jsonl")["sha256"]}
    ]
    rows = {
        row["metric"]: row
        for row in run.results
        if (row["stratum"], row["scenario"], row["mode"]) == ("all", "question_only", "recommended")
    }
    assert rows["exact_match"]["mean"] == 1.0 and rows["exact_match"]["n"] == len(records)
    edited = next(r for r in records if r["answer_edited"])
    assert answering[edited["question"]] == "The Arabian oryx (Oryx leucoryx)."  # the validator's edit is the gold

    detail = api.get(f"/api/projects/{release.project.slug}/evaluation/runs/{run.pk}/").json()
    recorded = detail["provenance"]["prompt_template"]
    assert recorded == {
        "name": VALIDATION_TEMPLATE,
        "text": template,
        "sha256": hashlib.sha256(template.encode()).hexdigest(),
    }
    document = json.loads(services.evaluation_run_results_download(run, "json"))
    assert document["provenance"]["prompt_template"]["name"] == VALIDATION_TEMPLATE


def test_a_validation_release_asks_only_the_question_alone(validation_release, coordinator, model_stub):
    release, _ = validation_release
    endpoint = make_endpoint(release.project, coordinator, model_stub)
    with pytest.raises(InvalidInput) as refused:
        services.evaluation_run_generate(
            project=release.project,
            release=release,
            endpoint=endpoint,
            user=coordinator,
            scenarios=["local_lead"],
            enqueue=False,
        )
    assert refused.value.field == "scenarios" and "question_only" in refused.value.message
    assert not model_stub.requests


def test_the_page_offers_question_only_and_shows_the_template(
    validation_release, answering, coordinator, model_stub, client, django_capture_on_commit_callbacks
):
    release, records = validation_release
    endpoint = make_endpoint(release.project, coordinator, model_stub)
    client.force_login(coordinator)
    page = client.get(reverse("evaluation_runs", args=[release.project.slug])).content.decode()
    assert 'id="evaluation-generate"' in page and page.count('id="evaluation-generate"') == 1
    assert 'value="question_only"' in page and 'value="local_lead"' not in page
    assert "<title>Evaluation · " in page and "<title>Evaluation · Qatar validation · localqa</title>" in page

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("evaluation_run_generate", args=[release.project.slug]),
            {"release": release.version, "endpoint": endpoint.pk, "scenarios": ["question_only"], "item_limit": 2},
        )

    run = EvaluationRun.objects.get(source="endpoint")
    assert response["Location"] == run.get_absolute_url()
    assert run.status == "done", run.error
    assert len(model_stub.requests) == 2
    assert run.counts["missing"]["stub chat · question_only"]["count"] == len(records) - 2
    html = client.get(run.get_absolute_url()).content.decode()
    assert 'id="prompt-template"' in html and VALIDATION_TEMPLATE in html


def test_the_judge_compares_each_answer_with_the_validated_answer(
    validation_release, coordinator, model_stub, django_capture_on_commit_callbacks
):
    release, records = validation_release
    gold = {r["question"]: r["answer"] for r in records}
    edited = next(r for r in records if r["answer_edited"])
    # the model answers everything with the validated answer except the edited item, where it gives the original
    data = "".join(
        json.dumps(
            {
                "id": r["id"],
                "scenario": "question_only",
                "prediction": r["original_answer"] if r is edited else r["answer"],
                "model": "m",
            }
        )
        + "\n"
        for r in records
    ).encode()
    run = services.evaluation_run_create(
        project=release.project, release=release, user=coordinator, data=data, enqueue=False
    )
    run = services.evaluation_run_score(run_id=run.pk)
    assert run is not None and run.status == "done", run and run.error

    def judge(request):
        prompt = request.prompt_text
        question = re.search(r"Question: (.*)\n", prompt)[1]
        truth = re.search(r"Ground truth: (.*)\n", prompt)[1]
        answer = re.search(r"Generated answer: (.*)\n", prompt)[1]
        assert truth == gold[question]  # the validated answer is the judge's reference
        return "YES" if answer == truth else "NO"

    model_stub.answer(judge)
    endpoint = make_endpoint(release.project, coordinator, model_stub, name="judge")
    judgment = judging.judgment_start(run=run, endpoint=endpoint, user=coordinator, enqueue=False)
    assert judgment.progress_total == len(records)
    judging.judgment_run(judgment_id=judgment.pk)

    judgment.refresh_from_db()
    assert judgment.status == "done", judgment.error
    (row,) = judging.judgment_results(judgment)
    assert (row["kind"], row["yes"], row["no"], row["unscored"]) == ("validation", len(records) - 1, 1, 0)
    wrong = judgment.items.get(verdict="no")
    assert wrong.prediction.item_id == edited["id"]
    assert len(model_stub.requests) == len(records)


def test_other_kinds_are_still_refused_by_the_judge(validation_release, coordinator, model_stub, monkeypatch):
    release, records = validation_release
    data = "".join(
        json.dumps({"id": r["id"], "scenario": "question_only", "prediction": r["answer"], "model": "m"}) + "\n"
        for r in records
    ).encode()
    run = services.evaluation_run_create(
        project=release.project, release=release, user=coordinator, data=data, enqueue=False
    )
    services.evaluation_run_score(run_id=run.pk)
    run.refresh_from_db()
    endpoint = make_endpoint(release.project, coordinator, model_stub)
    monkeypatch.setattr(run.project, "kind", "trivia")
    with pytest.raises(InvalidInput, match="Wikipedia QA and validation"):
        judging.judgment_start(run=run, endpoint=endpoint, user=coordinator, enqueue=False)
    assert Prediction.objects.filter(run=run).count() == len(records)
