"""Validation projects: model answers scored against the validated answer of each released item."""

from __future__ import annotations

import json

import pytest

from exports.services import release_build_now, release_file_path
from tests.conftest import api_as
from tests.evaluation.test_runs import overall, scored
from tests.validation.conftest import second_reviewer, vproject  # noqa: F401
from tests.validation.test_release import validated  # noqa: F401


@pytest.fixture
def validation_release(validated, coordinator):  # noqa: F811
    release = release_build_now(project=validated, user=coordinator, seed=1)
    assert release.status == "done", release.error
    lines = release_file_path(release, "validation_qa.jsonl").read_text(encoding="utf-8").splitlines()
    return release, [json.loads(line) for line in lines if line.strip()]


def answers(records, answer, model):
    lines = [{"id": r["id"], "scenario": "question_only", "prediction": answer(r), "model": model} for r in records]
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode() + b"\n"


def test_the_validated_answer_scores_100_an_empty_answer_0_and_a_wrong_one_low(
    validation_release, coordinator, django_capture_on_commit_callbacks
):
    release, records = validation_release
    assert len(records) >= 3
    edited = next(r for r in records if r["answer_edited"])
    assert edited["answer"] == "The Arabian oryx (Oryx leucoryx)."  # the validator's edit is the gold
    shuffled = {r["id"]: records[(n + 1) % len(records)]["answer"] for n, r in enumerate(records)}
    data = (
        answers(records, lambda r: r["answer"], "oracle")
        + answers(records, lambda r: "", "empty")
        + answers(records, lambda r: shuffled[r["id"]], "shuffled")
        + answers(records, lambda r: f"Thinking…<answer>{r['answer']}</answer>", "tagged")
        + answers(records, lambda r: r["original_answer"], "original")
    )

    run = scored(api_as(coordinator), release.project.slug, data, django_capture_on_commit_callbacks)

    assert {(row["mode"], row["metric"]) for row in run["results"]} == {
        ("recommended", "rouge_l"),
        ("recommended", "chrf"),
        ("recommended", "chrf_pp"),
        ("recommended", "exact_match"),
    }  # NativQA scores no model: no paper-parity convention to keep
    assert {row["kind"] for row in run["results"]} == {"validation"}
    for metric in ("rouge_l", "chrf", "exact_match"):
        assert overall(run, metric, "recommended", model="oracle")["mean"] == 1.0
        assert overall(run, metric, "recommended", model="tagged")["mean"] == 1.0  # an answer tag is read
        assert overall(run, metric, "recommended", model="empty")["mean"] == 0.0
    assert overall(run, "rouge_l", "recommended", model="shuffled")["mean"] < 0.5
    # The model-edited gold differs from the collected answer: the original scores below 100 on exact match.
    original = overall(run, "exact_match", "recommended", model="original")
    assert original["mean"] == pytest.approx((len(records) - 1) / len(records))
    assert original["n"] == len(records)
    strata = {row["stratum"] for row in run["results"]}
    assert {"location", "language", "topic", "split"} <= strata
    assert run["counts"]["extraction"]["empty · question_only"]["empty"] == len(records)
