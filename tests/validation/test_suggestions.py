"""A model's suggestions for validators and its drafted seed queries, driven by the stub OpenAI-compatible server.

Scripted answers, garbage, a 500 and a timeout: each ends in a state the job and the item record in words.
Validators take a suggestion, change it or answer without it, and that is recorded per field; the model-vs-people
agreement comes from the review app's statistics; a suggestion reaches a release only through a person.
"""

from __future__ import annotations

import json
import re

import pytest

from annotation.importers.sources import ImportSource
from annotation.models import QAItem
from common.errors import InvalidInput, InvalidState
from common.jobs import JobStatus
from endpoints import services as endpoints
from endpoints.models import ModelCall
from exports.services import release_build_now, release_file_path
from tests.conftest import api_as
from tests.model_stub import StubReply
from validation import search, services, suggestions
from validation.agreement import TAKEN, validation_scopes
from validation.models import Location, ModelJob, SeedDraft, SeedQuery, Suggestion, SuggestionUse

QUESTIONS = ["Q1 oryx?", "Q2 dish?", "Q3 stadium?", "Q4 souq?", "Q5 pearl?"]


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def five(vproject, coordinator):
    lines = "".join(
        json.dumps({"question": q, "answer": f"Answer {n}.", "source_url": f"https://site{n}.org/page"}) + "\n"
        for n, q in enumerate(QUESTIONS, 1)
    )
    services.validation_items_import(
        project=vproject, source=ImportSource("five.jsonl", data=lines.encode()), user=None
    )
    services.validation_settings_update(project=vproject, tasks=["question", "answer_edit", "location"])
    return vproject


@pytest.fixture
def endpoint(five, coordinator, model_stub):
    return endpoints.endpoint_create(
        project=five,
        user=coordinator,
        name="stub",
        base_url=model_stub.base_url,
        model="stub-7b",
        timeout_seconds=1,
    )


def verdict(good: bool = True, answer: str = "Edited.", relevant: bool = True, reason: str = "") -> str:
    return json.dumps(
        {"question_good": good, "question_reason": reason, "edited_answer": answer, "location_relevant": relevant}
    )


def by_question(replies: dict[str, object]):
    def responder(request):
        for key, reply in replies.items():
            if f"Question: {key}" in request.prompt_text:
                return reply
        return None

    return responder


def run(job: ModelJob) -> ModelJob:
    result = suggestions.model_job_run(job_id=job.pk)
    assert result is not None
    return result


def suggest(project, endpoint, coordinator) -> ModelJob:
    return run(suggestions.suggestions_start(project=project, endpoint_id=endpoint.pk, user=coordinator))


def test_scripted_answers_become_suggestions_beside_the_items(five, endpoint, coordinator, model_stub):
    model_stub.answer(
        by_question(
            {
                "Q1": verdict(answer="The Arabian oryx (Oryx leucoryx)."),
                "Q2": "```json\n" + verdict(good=False, reason="ambiguous", answer="Answer 2.") + "\n```",
            }
        )
    )
    model_stub.default_text = verdict(relevant=False)

    job = suggest(five, endpoint, coordinator)

    assert job.status == JobStatus.DONE, job.error
    assert (job.answered, job.failed, job.progress_done) == (5, 0, 5)
    assert job.stage == "Finished: 5 items answered."
    first = Suggestion.objects.get(item__question="Q1 oryx?")
    assert (first.ok, first.question_good, first.answer, first.location_relevant) == (
        True,
        True,
        "The Arabian oryx (Oryx leucoryx).",
        True,
    )
    second = Suggestion.objects.get(item__question="Q2 dish?")
    # Fenced JSON is read; an "edit" that repeats the answer suggests no edit.
    assert (second.question_good, second.question_reason, second.answer) == (False, "ambiguous", "")
    assert Suggestion.objects.get(item__question="Q3 stadium?").location_relevant is False
    assert ModelCall.objects.filter(project=five, purpose="suggestion", status="ok").count() == 5
    prompt = model_stub.requests[0].prompt_text
    assert "Location: Qatar" in prompt and "Language: English" in prompt and "Source: https://site" in prompt
    # Items already suggested for are not asked again; asking again comes from the cache.
    with pytest.raises(InvalidState):
        suggestions.suggestions_start(project=five, endpoint_id=endpoint.pk, user=coordinator)
    sent = len(model_stub.requests)
    again = run(suggestions.suggestions_start(project=five, endpoint_id=endpoint.pk, user=coordinator, redo=True))
    assert again.answered == 5 and len(model_stub.requests) == sent
    assert ModelCall.objects.filter(project=five, purpose="suggestion", cached=True).count() == 5


def test_garbage_a_500_and_a_timeout_each_end_in_a_failed_suggestion_that_says_why(
    five, endpoint, coordinator, model_stub, settings
):
    settings.MODEL_MAX_ATTEMPTS = 2
    model_stub.answer(
        by_question(
            {
                "Q1": verdict(),
                "Q2": "The question looks fine to me.",
                "Q3": json.dumps({"question_good": "yes", "edited_answer": "x", "location_relevant": True}),
                "Q4": StubReply.server_error(),
                "Q5": StubReply.slow(3, verdict()),
            }
        )
    )

    job = suggest(five, endpoint, coordinator)

    assert job.status == JobStatus.DONE, job.error
    assert (job.answered, job.failed) == (1, 4)
    assert "4 failed or not understood" in job.stage
    errors = {s.item.question: s.error for s in Suggestion.objects.select_related("item").filter(ok=False)}
    assert errors["Q2 dish?"].startswith("Reply not understood (no JSON object in the reply): The question")
    assert errors["Q3 stadium?"].startswith("Reply not understood (question_good is not true or false)")
    assert errors["Q4 souq?"].startswith("server: 500: The server had an error (after 2 attempts)")
    assert errors["Q5 pearl?"].startswith("timeout: No answer within 1 s.")
    # A failed suggestion suggests nothing: the validator's screen shows none for those items.
    assert suggestions.item_suggestion(QAItem.objects.get(question="Q4 souq?")) is None
    assert suggestions.item_suggestion(QAItem.objects.get(question="Q1 oryx?")) is not None
    assert set(ModelCall.objects.filter(status="failed").values_list("error_kind", flat=True)) == {"server", "timeout"}
    data = api_as(coordinator).get(f"/api/projects/{five.slug}/validation/model-jobs/{job.pk}/").json()
    assert data["failed"] == 4 and len(data["failed_items"]) == 4


def test_a_job_whose_endpoint_was_deleted_fails_with_words(five, endpoint, coordinator):
    job = suggestions.suggestions_start(project=five, endpoint_id=endpoint.pk, user=coordinator)
    endpoints.endpoint_delete(endpoint=endpoint, user=coordinator)

    job = run(job)

    assert job.status == JobStatus.FAILED
    assert job.error == "The endpoint 'stub' was deleted; start again with another one."


def test_another_projects_endpoint_is_refused(five, coordinator, project, model_stub):
    foreign = endpoints.endpoint_create(
        project=project, user=coordinator, name="x", base_url=model_stub.base_url, model="m"
    )

    with pytest.raises(InvalidInput) as error:
        suggestions.suggestions_start(project=five, endpoint_id=foreign.pk, user=coordinator)

    assert error.value.field == "endpoint"


def claim(project, user):
    slot = services.validation_claim_next(project=project, user=user)
    assert slot is not None
    return slot


def test_what_the_validator_did_with_each_suggested_field_is_recorded(
    five, endpoint, coordinator, reviewer, model_stub
):
    model_stub.default_text = verdict(good=False, reason="ambiguous", answer="Model answer.", relevant=True)
    suggest(five, endpoint, coordinator)
    slot = claim(five, reviewer)
    suggestion = suggestions.item_suggestion(slot.item_id)
    assert services.task_context(slot, services.validation_settings(five))["suggestion"] == suggestion

    # Took all three; kept the question verdict and the answer, changed the location.
    data = {
        "question": "bad",
        "question_reason": "ambiguous",
        "answer": "Model answer.",
        "location_relevant": "no",
        "suggestion": suggestion.pk,
        "suggestion_taken": ["question", "answer", "location"],
    }
    judgment = services.validation_submit(slot=slot, user=reviewer, version=slot.version, data=data)

    uses = dict(SuggestionUse.objects.filter(judgment=judgment).values_list("field", "outcome"))
    assert uses == {"question": "accepted", "answer": "accepted", "location": "changed"}
    item = QAItem.objects.get(pk=slot.item_id)
    assert item.answer_standard == "Model answer." and item.revisions.latest("number").author == reviewer

    # The next item: nothing taken, the validator answers alone (the same verdict by chance is still "ignored").
    slot = claim(five, reviewer)
    suggestion = suggestions.item_suggestion(slot.item_id)
    data = {"question": "bad", "question_reason": "ambiguous", "location_relevant": "yes", "suggestion": suggestion.pk}
    judgment = services.validation_submit(slot=slot, user=reviewer, version=slot.version, data=data)
    uses = dict(SuggestionUse.objects.filter(judgment=judgment).values_list("field", "outcome"))
    assert uses == {"question": "ignored", "answer": "ignored", "location": "ignored"}


def test_a_suggestion_of_another_item_is_refused(five, endpoint, coordinator, reviewer, model_stub):
    model_stub.default_text = verdict()
    suggest(five, endpoint, coordinator)
    slot = claim(five, reviewer)
    other = Suggestion.objects.exclude(item_id=slot.item_id).first()

    with pytest.raises(InvalidInput) as error:
        services.validation_submit(
            slot=slot,
            user=reviewer,
            version=slot.version,
            data={"question": "good", "location_relevant": "yes", "suggestion": other.pk},
        )

    assert error.value.field == "suggestion"


def test_the_better_answer_comparison_takes_the_model_edited_answer_as_candidate_b(
    five, endpoint, coordinator, reviewer, model_stub
):
    services.validation_settings_update(project=five, tasks=["question", "better_answer"])
    services.validation_settings_update(project=five, tasks=["question", "answer_edit", "better_answer"])
    model_stub.default_text = verdict(answer="Model answer.")
    suggest(five, endpoint, coordinator)
    slot = claim(five, reviewer)

    options = services.better_answer_options(slot)

    assert sorted(options) == [("model", "Model answer."), ("original", slot.item.validation.original_answer)]
    position = 1 + [key for key, _ in options].index("model")
    judgment = services.validation_submit(
        slot=slot, user=reviewer, version=slot.version, data={"question": "good", "better": str(position)}
    )
    assert judgment.better_choice == "model"


def test_model_vs_validators_agreement_gives_kappa_and_ac1_with_n(five, endpoint, coordinator, reviewer, model_stub):
    # The model: good, good, bad, bad; the validator: good, good, bad, good (one validator per item).
    model_stub.answer(
        by_question({"Q3": verdict(good=False, reason="ambiguous"), "Q4": verdict(good=False, reason="ambiguous")})
    )
    model_stub.default_text = verdict()
    suggest(five, endpoint, coordinator)
    people = {"Q1 oryx?": "good", "Q2 dish?": "good", "Q3 stadium?": "bad", "Q4 souq?": "good"}
    for _ in range(4):
        slot = claim(five, reviewer)
        if slot.item.question not in people:
            services.validation_skip(slot=slot, user=reviewer)
            slot = services.validation_claim_next(project=five, user=reviewer, skipped=[slot.item_id])
        said = people[slot.item.question]
        data = {"question": said, "question_reason": "ambiguous" if said == "bad" else "", "location_relevant": "yes"}
        data["suggestion"] = suggestions.item_suggestion(slot.item_id).pk
        if slot.item.question == "Q1 oryx?":
            data["suggestion_taken"] = ["question"]
        services.validation_submit(slot=slot, user=reviewer, version=slot.version, data=data)

    model = services.validation_agreement(five)["model"]

    question, question_without = model["rows"][0], model["rows"][1]
    assert question["label"] == "Question good/bad" and question["items"] == 4
    assert question["observed"]["value"] == pytest.approx(0.75)
    assert question["cohen_kappa"]["value"] == pytest.approx(0.5)  # (0.75 - 0.5) / (1 - 0.5)
    assert question["gwet_ac1"]["value"] == pytest.approx(0.28125 / 0.53125)  # pe = 2 × 0.625 × 0.375
    assert question_without["items"] == 3  # Q1's suggestion was taken: left out of the fair measure
    location = model["rows"][2]
    assert location["items"] == 4 and location["observed"]["value"] == 1.0
    uses = {u["field"]: u for u in model["uses"]}
    assert (uses["question"]["accepted"], uses["question"]["ignored"]) == (1, 3)
    # The same scopes feed the project's agreement report, with the suggestion's use as a stratum.
    scopes = {scope.key: scope for scope in validation_scopes(five)}
    assert {"validation:model:question", "validation:model:location"} <= set(scopes)
    assert sorted(scopes["validation:model:question"].strata["suggestion"].values()).count(TAKEN) == 1


def test_a_suggestion_never_enters_a_release_unless_a_person_accepted_it(
    five, endpoint, coordinator, reviewer, model_stub
):
    model_stub.answer(by_question({q[:2]: verdict(answer=f"MODEL EDIT {q[:2]}") for q in QUESTIONS}))
    suggest(five, endpoint, coordinator)
    accepted = None
    while (slot := services.validation_claim_next(project=five, user=reviewer)) is not None:
        suggestion = suggestions.item_suggestion(slot.item_id)
        data = {"question": "good", "location_relevant": "yes", "suggestion": suggestion.pk}
        if accepted is None:  # the first validator takes the model's answer; every other answers alone
            accepted = suggestion.answer
            data |= {"answer": suggestion.answer, "suggestion_taken": ["answer"]}
        services.validation_submit(slot=slot, user=reviewer, version=slot.version, data=data)

    release = release_build_now(project=five, user=coordinator, seed=3)

    assert release.status == "done", release.error
    text = "\n".join(release_file_path(release, entry["name"]).read_text(encoding="utf-8") for entry in release.files)
    assert accepted in text
    for question in QUESTIONS:
        if f"MODEL EDIT {question[:2]}" != accepted:
            assert f"MODEL EDIT {question[:2]}" not in text
    assert "question_good" not in text  # no model reply either


# Drafted seed queries


def test_drafted_seed_queries_wait_for_review_and_only_accepted_ones_become_seed_queries(
    five, endpoint, coordinator, model_stub
):
    Location.objects.create(project=five, name="الدوحة", language="ara")
    model_stub.answer(
        lambda request: (
            json.dumps({"queries": ["أفضل مطاعم الدوحة", "أكلات قطرية في الدوحة", "أفضل مطاعم الدوحة"]})
            if "food" in request.prompt_text
            else "Sorry, I cannot help with that."
        )
    )
    job = suggestions.seed_drafts_start(
        project=five, endpoint_id=endpoint.pk, locations=["الدوحة"], topics=["food", "sport"], count=5, user=coordinator
    )
    job = run(job)

    assert job.status == JobStatus.DONE, job.error
    assert (job.answered, job.failed) == (1, 1)
    assert job.failures == [
        {
            "what": "الدوحة · sport",
            "error": "Reply not understood (no JSON object in the reply): Sorry, I cannot help with that.",
        }
    ]
    assert "in Arabic" in model_stub.requests[0].prompt_text
    drafts = list(SeedDraft.objects.filter(project=five).order_by("id"))
    assert [(d.query, d.language, d.status) for d in drafts] == [
        ("أفضل مطاعم الدوحة", "ara", "draft"),
        ("أكلات قطرية في الدوحة", "ara", "draft"),
    ]
    # Nothing is searched with a draft: the project has no seed query yet.
    search.search_key_set(project=five, key="k" * 20, user=coordinator)
    with pytest.raises(InvalidState):
        search.search_collection_start(project=five, user=coordinator, budget=5, enqueue=False)

    edited = suggestions.seed_draft_review(draft=drafts[0], user=coordinator, action="accept", query="مطاعم الدوحة")
    rejected = suggestions.seed_draft_review(draft=drafts[1], user=coordinator, action="reject")

    assert edited.status == "accepted" and edited.drafted == "أفضل مطاعم الدوحة" and edited.seed is not None
    assert rejected.status == "rejected" and rejected.seed is None
    assert list(SeedQuery.objects.filter(project=five).values_list("query", "topic", "location")) == [
        ("مطاعم الدوحة", "food", "الدوحة")
    ]
    with pytest.raises(InvalidState):
        suggestions.seed_draft_review(draft=drafts[1], user=coordinator, action="accept")


def test_drafting_through_the_api_and_a_500_recorded_per_location_and_topic(
    five, endpoint, coordinator, model_stub, settings
):
    settings.MODEL_MAX_ATTEMPTS = 1
    model_stub.answer(
        lambda request: StubReply.server_error() if "sport" in request.prompt_text else json.dumps({"queries": ["a"]})
    )
    client = api_as(coordinator)
    url = f"/api/projects/{five.slug}/validation/seeds/drafts/"
    answer = client.post(
        url, {"endpoint": endpoint.pk, "locations": ["Doha"], "topics": ["food", "sport"]}, format="json"
    )
    assert answer.status_code == 202, answer.content
    run(ModelJob.objects.get(pk=answer.json()["id"]))

    job = client.get(f"/api/projects/{five.slug}/validation/model-jobs/{answer.json()['id']}/").json()
    assert job["status"] == "done" and job["failed"] == 1
    assert job["failures"][0]["what"] == "Doha · sport" and job["failures"][0]["error"].startswith("server: 500")
    drafts = client.get(url + "?status=draft").json()["results"]
    assert [d["query"] for d in drafts] == ["a"] and drafts[0]["language"] == "eng"
    reviewed = client.post(url + f"{drafts[0]['id']}/", {"action": "accept"}, format="json")
    assert reviewed.status_code == 200 and reviewed.json()["seed"] is not None
    assert client.post(url + f"{drafts[0]['id']}/", {"action": "reject"}, format="json").status_code == 409


def test_the_pages_start_a_job_show_its_failures_and_review_a_draft_in_place(
    client, five, endpoint, coordinator, model_stub
):
    model_stub.default_text = "no JSON here"
    client.force_login(coordinator)
    base = f"/projects/{five.slug}/validation/"

    started = client.post(base + "suggestions/", {"endpoint": endpoint.pk})
    job = ModelJob.objects.get(purpose="suggest")
    assert started.status_code == 302 and started["Location"] == f"{base}model-jobs/{job.pk}/"
    run(job)
    page = client.get(started["Location"]).content.decode()
    assert "Finished: 0 items answered, 5 failed or not understood" in page
    assert "Reply not understood (no JSON object in the reply): no JSON here" in page
    again = client.post(base + "suggestions/", {"endpoint": "nope"})
    assert again.status_code == 400 and "choose one of the project" in again.content.decode()

    refused = client.post(
        base + "seeds/drafts/", {"endpoint": endpoint.pk, "locations": "Doha", "topics": "", "count": 5}
    )
    assert refused.status_code == 400 and "topics: give at least one topic." in refused.content.decode()
    model_stub.default_text = json.dumps({"queries": ["Doha food"]})
    client.post(base + "seeds/drafts/", {"endpoint": endpoint.pk, "locations": "Doha", "topics": "food", "count": 1})
    run(ModelJob.objects.get(purpose="seed_drafts"))
    draft = SeedDraft.objects.get()
    row = client.post(
        base + f"seeds/drafts/{draft.pk}/", {"action": "accept", "query": "Doha food"}, HTTP_HX_REQUEST="true"
    )
    assert (
        row.status_code == 200
        and f'id="draft-{draft.pk}"' in row.content.decode()
        and "Accepted" in row.content.decode()
    )
    assert SeedQuery.objects.filter(project=five, query="Doha food").exists()


def test_a_job_whose_worker_died_is_taken_over_and_asks_only_the_items_not_stored(
    five, endpoint, coordinator, model_stub
):
    import datetime

    from django.utils import timezone

    model_stub.default_text = verdict()
    job = suggestions.suggestions_start(project=five, endpoint_id=endpoint.pk, user=coordinator)
    # what a worker stored before it was killed: two suggestions, and a heartbeat that went stale
    stored = list(QAItem.objects.filter(project=five).order_by("id")[:2])
    for item in stored:
        Suggestion.objects.create(project=five, item=item, job=job, ok=True, question_good=True, reply=verdict())
    stale = timezone.now() - datetime.timedelta(hours=1)
    ModelJob.objects.filter(pk=job.pk).update(
        status="running", owner="dead", heartbeat_at=stale, attempts=1, progress_done=2, answered=2
    )

    done = run(job)

    assert done.status == JobStatus.DONE, done.error
    assert done.attempts == 2
    assert len(model_stub.requests) == 3  # only the three items without a stored suggestion
    assert not any(item.question in request.prompt_text for item in stored for request in model_stub.requests)
    item_ids = list(Suggestion.objects.filter(job=job).values_list("item_id", flat=True))
    assert len(item_ids) == len(set(item_ids)) == 5
    assert (done.progress_done, done.answered, done.failed) == (5, 5, 0)


def test_the_command_asks_for_suggestions_and_drafts_in_its_own_process(five, endpoint, coordinator, model_stub):
    from io import StringIO

    from django.core.management import CommandError, call_command

    model_stub.answer(by_question({"Q2": "not JSON at all"}))
    model_stub.default_text = verdict()
    out = StringIO()
    call_command("model_suggest", five.slug, "--endpoint", "stub", stdout=out)
    printed = out.getvalue()
    assert "Suggestions for validators" in printed and "stub (stub-7b)" in printed
    assert re.search(r"answered +4\n", printed) and re.search(r"failed +1\n", printed)
    assert Suggestion.objects.filter(item__project=five, ok=True).count() == 4
    assert Suggestion.objects.get(item__question="Q2 dish?").error.startswith("Reply not understood")

    model_stub.answer(lambda request: json.dumps({"queries": ["Souq Waqif food", "Souq Waqif opening hours"]}))
    out = StringIO()
    call_command(
        "model_suggest", five.slug, "--endpoint", "stub", "--draft-seeds", "--location", "Doha", "--topic", "Food",
        "--count", "2", stdout=out,
    )  # fmt: skip
    assert "Drafted seed queries" in out.getvalue()
    assert SeedDraft.objects.filter(project=five).count() == 2
    assert not SeedQuery.objects.filter(project=five).exists()  # drafts wait for the coordinator

    with pytest.raises(CommandError, match="no model endpoint named 'nope'"):
        call_command("model_suggest", five.slug, "--endpoint", "nope")
