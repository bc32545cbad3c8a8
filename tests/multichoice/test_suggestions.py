"""A model's suggested translations of trivia items, from the stub OpenAI-compatible server: scripted answers,
garbage, a 500 and a timeout each end in a recorded state; what the translator did is recorded; a release holds
only what a translator saved."""

from __future__ import annotations

import json

import pytest

from common.errors import InvalidInput
from common.jobs import JobStatus
from endpoints import services as endpoints
from exports.services import release_build_now, release_file_path
from multichoice.models import TranslationSuggestion
from multichoice.services.items import trivia_item_create, trivia_items
from multichoice.services.reviews import trivia_review
from multichoice.services.suggestions import translation_suggestion_latest, translation_suggestions_run
from multichoice.services.suggestions import translation_suggestions_start as start
from multichoice.services.translation import translation_claim_next, translation_submit
from tests.conftest import api_as
from tests.model_stub import StubReply
from tests.multichoice.conftest import item_values

QUESTIONS = ["Where's Atxondo?", "Where's Zeanuri?", "Where's Lekeitio?", "Where's Ondarroa?", "Where's Bermeo?"]


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def open_items(trivia, annotator, reviewer):
    for question in QUESTIONS:
        item = trivia_item_create(project=trivia, user=annotator, **item_values(question=question))
        trivia_review(item=item, user=reviewer, criteria={c["key"]: True for c in trivia.review_criteria})
    return trivia


@pytest.fixture
def endpoint(open_items, coordinator, model_stub):
    return endpoints.endpoint_create(
        project=open_items, user=coordinator, name="stub", base_url=model_stub.base_url, model="m", timeout_seconds=1
    )


def translated(question: str) -> str:
    return json.dumps({"question": f"EN {question}", "candidates": ["In Bizkaia", "In Gipuzkoa", "In Nafarroa"]})


def run(project, endpoint, coordinator):
    job = start(project=project, endpoint_id=endpoint.pk, user=coordinator)
    result = translation_suggestions_run(job_id=job.pk)
    assert result is not None
    return result


def test_scripted_garbage_a_500_and_a_timeout_each_end_in_a_recorded_state(
    open_items, endpoint, coordinator, model_stub, settings
):
    settings.MODEL_MAX_ATTEMPTS = 2
    replies = {
        "Atxondo": translated("Atxondo"),
        "Zeanuri": "<html>not json</html>",
        "Lekeitio": json.dumps({"question": "EN", "candidates": ["only one"]}),
        "Ondarroa": StubReply.server_error(),
        "Bermeo": StubReply.slow(3, translated("Bermeo")),
    }
    model_stub.answer(lambda request: next((r for k, r in replies.items() if k in request.prompt_text), None))

    job = run(open_items, endpoint, coordinator)

    assert job.status == JobStatus.DONE, job.error
    assert (job.answered, job.failed) == (1, 4)
    errors = {s.trivia.question: s.error for s in TranslationSuggestion.objects.filter(ok=False)}
    assert errors["Where's Zeanuri?"].startswith("Reply not understood (no JSON object in the reply)")
    assert errors["Where's Lekeitio?"].startswith("Reply not understood (1 candidates translated, not 3)")
    assert errors["Where's Ondarroa?"].startswith("server: 500")
    assert errors["Where's Bermeo?"].startswith("timeout: No answer within 1 s.")
    good = TranslationSuggestion.objects.get(ok=True)
    assert good.target_question == "EN Atxondo" and good.target_candidates[0] == "In Bizkaia"
    prompt = model_stub.requests[0].prompt_text
    assert "from Basque into English" in prompt and "0. In Biscay" in prompt
    data = api_as(coordinator).get(f"/api/projects/{open_items.slug}/trivia/suggestions/{job.pk}/").json()
    assert data["failed"] == 4 and len(data["failed_items"]) == 4


def test_the_translator_takes_changes_or_ignores_and_the_release_holds_only_what_they_saved(
    open_items, endpoint, coordinator, second_annotator, model_stub
):
    model_stub.answer(lambda request: translated(request.prompt_text.split("Question: ")[1].split("?")[0]))
    run(open_items, endpoint, coordinator)
    outcomes = []
    for plan in ("accept", "change", "ignore", "ignore", "ignore"):
        item = translation_claim_next(project=open_items, user=second_annotator)
        suggestion = translation_suggestion_latest(item)
        assert suggestion is not None
        question, candidates = suggestion.target_question, list(suggestion.target_candidates)
        if plan == "change":
            question = question + " (fixed)"
        if plan == "ignore":
            question, candidates = f"Own {item.question}", ["Bizkaian", "Gipuzkoan", "Nafarroan"]
        translation_submit(
            item=item,
            user=second_annotator,
            target_question=question,
            target_candidates=candidates,
            suggestion=suggestion.pk,
            suggestion_taken=plan != "ignore",
        )
        suggestion.refresh_from_db()
        outcomes.append(suggestion.outcome)
    assert outcomes == ["accepted", "changed", "ignored", "ignored", "ignored"]

    release = release_build_now(project=open_items, user=coordinator, seed=1)

    assert release.status == "done", release.error
    text = "\n".join(release_file_path(release, e["name"]).read_text(encoding="utf-8") for e in release.files)
    assert "EN Where's Atxondo" in text  # accepted: the translator saved it
    assert "(fixed)" in text  # changed: as the translator saved it
    for question in QUESTIONS[2:]:
        assert f"EN {question[:-1]}" not in text  # ignored suggestions never reach the release


def test_a_suggestion_of_another_item_is_refused(open_items, endpoint, coordinator, second_annotator, model_stub):
    model_stub.default_text = translated("x")
    run(open_items, endpoint, coordinator)
    item = translation_claim_next(project=open_items, user=second_annotator)
    other = TranslationSuggestion.objects.exclude(trivia=item).first()

    with pytest.raises(InvalidInput):
        translation_submit(
            item=item,
            user=second_annotator,
            target_question="Q",
            target_candidates=["a", "b", "c"],
            suggestion=other.pk,
            suggestion_taken=True,
        )

    assert trivia_items(open_items).get(pk=item.pk).translation_status == "claimed"  # nothing saved
