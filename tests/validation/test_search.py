"""Search collections from recorded SerpApi responses (tests/fixtures/serpapi/, served by tests/serpapi_stub.py).

The real `serpapi` client sends every request over HTTP to the stub on 127.0.0.1, so the parameters, the
status codes and the timeouts are the client's own.
"""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command

from annotation.models import QAItem
from common.errors import InvalidInput, InvalidState
from common.jobs import JobStatus
from common.secrets import secret_decrypt
from review.models import ReviewSlot
from tests.serpapi_stub import StubAnswer
from validation import search, services
from validation.models import SearchCollection, SearchKey, SearchQuery, SearchResponse, ValidationItem

SEEDS = [("food", "Food in Doha"), ("sport", "Sport in Doha"), ("museums", "Museums in Doha")]
KEY = "test-serpapi-key-0123456789abcdef"


@pytest.fixture
def seeded(vproject, coordinator):
    services.seed_queries_add(
        project=vproject, rows=[(topic, query, "Doha", "") for topic, query in SEEDS], user=coordinator
    )
    search.search_key_set(project=vproject, key=KEY, user=coordinator)
    return vproject


def collect(project, user, **options: Any) -> SearchCollection:
    values: dict[str, Any] = {
        "engine": "google",
        "iterations": 2,
        "budget": 50,
        "location": "Doha, Qatar",
        "gl": "qa",
        "hl": "en",
    }
    collection = search.search_collection_start(project=project, user=user, enqueue=False, **(values | options))
    result = search.search_collection_run(collection_id=collection.pk)
    assert result is not None
    return result


def test_a_collection_of_3_seed_queries_x_2_iterations_runs_from_recorded_responses_to_validation_items_with_their_sources_a_second_run_sends_no_request(  # noqa: E501
    serpapi_stub, seeded, coordinator
):
    first = collect(seeded, coordinator)
    first_calls = list(serpapi_stub.queries)
    print(f"\nfirst run: {first.calls_sent} calls sent, {first.calls_cached} answered from the cache")
    for number, query in enumerate(first_calls, 1):
        print(f"  {number:2}. {query}")

    assert first.status == JobStatus.DONE, first.error
    # 3 seeds, then the 12 questions and searches their responses suggested (2 repeats left out).
    assert first.calls_sent == len(first_calls) == 15
    assert first_calls[:3] == ["Food in Doha", "Sport in Doha", "Museums in Doha"]
    assert "traditional qatari food" in first_calls and "What's the national dish of Qatar?" not in first_calls
    assert all(
        params["engine"] == "google"
        and params["gl"] == "qa"
        and params["hl"] == "en"
        and params["location"] == "Doha, Qatar"
        and params["api_key"] == KEY
        for params in serpapi_stub.requests
    )
    assert SearchQuery.objects.filter(collection=first, iteration=2).count() == 12

    items = ValidationItem.objects.filter(project=seeded).select_related("item").order_by("id")
    assert first.items_created == items.count() == 10
    assert first.items_left_out == 1  # the national dish again, same answer, from "traditional qatari food"
    dish = items.get(item__question="What is the national dish of Qatar?")
    assert dish.source_urls == ["https://www.qatarday.com/blog/food/machboos-national-dish"]
    assert dish.domain == "qatarday.com"
    assert dish.input_query == "Food in Doha"
    assert dish.topic == "food"
    assert dish.location == "Doha"
    assert dish.question_type == "people_also_ask"
    assert dish.original_answer.startswith("Machboos (also spelled majboos)")
    meta = dish.metadata["search"]
    assert meta["iteration"] == 1 and meta["engine"] == "google" and meta["collection"] == first.pk
    assert meta["raw"]["title"] == "Machboos: the national dish of Qatar - Qatar Day"
    assert SearchResponse.objects.get(pk=meta["response"]).body["search_metadata"]["status"] == "Success"
    breakfast = items.get(item__question="What is a traditional breakfast in Qatar?")
    assert breakfast.original_answer.splitlines()[0].startswith("Balaleet")
    harees = items.get(item__question="What is harees made of?")
    assert harees.metadata["search"]["iteration"] == 2 and harees.input_query == "traditional qatari food"
    near = items.get(item__question="What's the national dish of Qatar?")
    assert near.duplicate_of_id == dish.pk  # the import's near-duplicate rule: added, marked for merging
    assert ReviewSlot.objects.filter(item__project=seeded).count() == items.count()  # each opened for validation

    second = collect(seeded, coordinator)
    print(f"second run: {second.calls_sent} calls sent, {second.calls_cached} answered from the cache")
    assert second.status == JobStatus.DONE, second.error
    assert serpapi_stub.queries == first_calls  # not one request more
    assert second.calls_sent == 0 and second.calls_cached == 15
    assert second.items_created == 0 and ValidationItem.objects.filter(project=seeded).count() == 10


def test_an_arabic_query_for_qatar_sends_gl_and_hl_and_lands_arabic_items(serpapi_stub, coordinator):
    project = services.validation_project_create(
        name="قطر", slug="qa-ara", language="ara", location="Qatar", created_by=coordinator
    )
    services.seed_queries_add(project=project, rows=[("food", "أكلات شعبية في الدوحة", "الدوحة", "")], user=coordinator)
    search.search_key_set(project=project, key=KEY, user=coordinator)
    done = collect(project, coordinator, iterations=1, hl="ar")
    assert done.status == JobStatus.DONE, done.error
    assert serpapi_stub.requests == [
        {
            "engine": "google",
            "q": "أكلات شعبية في الدوحة",
            "location": "Doha, Qatar",
            "gl": "qa",
            "hl": "ar",
            "api_key": KEY,
        }
    ]
    items = {v.item.question: v for v in ValidationItem.objects.filter(project=project).select_related("item")}
    assert set(items) == {"ما هو الطبق الوطني في قطر؟", "ما هي أشهر الحلويات القطرية؟"}
    dish = items["ما هو الطبق الوطني في قطر؟"]
    assert dish.language == "ara" and dish.domain == "aljazeera.net"
    assert items["ما هي أشهر الحلويات القطرية؟"].original_answer == "اللقيمات\nالبلاليط\nالخبيصة"


def test_the_key_is_stored_encrypted_and_never_in_a_stored_response(serpapi_stub, seeded, coordinator):
    row = SearchKey.objects.get(project=seeded)
    assert KEY not in row.token and secret_decrypt(token=row.token) == KEY and row.last_four == "cdef"
    collect(seeded, coordinator, iterations=1)
    assert all("api_key" not in response.params for response in SearchResponse.objects.all())


def test_the_budget_is_never_exceeded_and_a_resume_with_more_sends_only_what_was_left(
    serpapi_stub, seeded, coordinator
):
    done = collect(seeded, coordinator, budget=5)
    assert done.status == JobStatus.DONE
    assert done.calls_sent == len(serpapi_stub.requests) == 5
    assert "Budget used up: 10 queries not sent" in done.stage
    assert search.search_query_counts(done)["over_budget"] == 10
    search.search_collection_resume(collection=done, budget=30, enqueue=False)
    again = search.search_collection_run(collection_id=done.pk)
    assert again.status == JobStatus.DONE and again.calls_sent == len(serpapi_stub.requests) == 15
    assert len(set(serpapi_stub.queries)) == 15  # none sent twice


def test_a_refused_key_stops_the_collection_with_the_reason_and_writes_nothing(serpapi_stub, seeded, coordinator):
    serpapi_stub.script(StubAnswer.error(401, "error_401.json"))
    failed = collect(seeded, coordinator)
    assert failed.status == JobStatus.FAILED
    assert failed.error.startswith("SerpApi refused the project's key (HTTP 401: Invalid API key.")
    assert "Set the key again, then resume." in failed.error
    assert len(serpapi_stub.requests) == 1 and failed.calls_sent == 1
    assert not QAItem.objects.filter(project=seeded).exists()
    assert not SearchResponse.objects.exists()
    first = SearchQuery.objects.get(collection=failed, position=0)
    assert first.status == SearchQuery.Status.PENDING and first.failures == 1 and "401" in first.error
    # The key is set again; the collection resumes where it stopped.
    search.search_collection_resume(collection=failed, enqueue=False)
    resumed = search.search_collection_run(collection_id=failed.pk)
    assert resumed.status == JobStatus.DONE and resumed.items_created == 10
    assert resumed.calls_sent == 16 and serpapi_stub.queries.count("Food in Doha") == 2


def test_a_used_up_quota_stops_the_collection_where_it_was(serpapi_stub, seeded, coordinator):
    serpapi_stub.script(StubAnswer(), StubAnswer.error(429, "error_429.json"))
    failed = collect(seeded, coordinator)
    assert failed.status == JobStatus.FAILED
    assert "searches are used up or its rate limit was reached" in failed.error
    assert "Your account has run out of searches." in failed.error
    counts = search.search_query_counts(failed)
    assert counts["sent"] == 1 and counts["pending"] == 2 + 5  # the two seeds left, the first seed's follow-ups
    assert failed.items_created == 3  # the first query's, written whole; nothing of the refused one
    search.search_collection_resume(collection=failed, enqueue=False)
    resumed = search.search_collection_run(collection_id=failed.pk)
    assert resumed.status == JobStatus.DONE and resumed.items_created == 10
    assert serpapi_stub.queries.count("Food in Doha") == 1  # answered once, never asked again


def test_a_timeout_is_tried_again_then_recorded_on_its_query_and_the_rest_goes_on(serpapi_stub, seeded, coordinator):
    serpapi_stub.script(StubAnswer(delay=2), StubAnswer(delay=2))  # both attempts of the first seed
    done = collect(seeded, coordinator, iterations=1)
    assert done.status == JobStatus.DONE
    assert done.stage == "Finished; 1 queries failed (resume to try them again)."
    food = SearchQuery.objects.get(collection=done, query="Food in Doha")
    assert food.status == SearchQuery.Status.FAILED and food.failures == 2
    assert food.error == "SerpApi did not answer within 0.5 seconds. (2 attempts)"
    assert done.calls_sent == 4 and done.items_created == 5
    search.search_collection_resume(collection=done, enqueue=False)
    resumed = search.search_collection_run(collection_id=done.pk)
    assert resumed.status == JobStatus.DONE and resumed.stage == "Finished."
    assert resumed.items_created == 8 and resumed.calls_sent == 5


def test_a_run_that_dies_after_a_response_arrived_resumes_from_the_cache_without_duplicates(
    serpapi_stub, seeded, coordinator, monkeypatch
):
    real = search.collected_pairs_store
    calls = {"n": 0}

    def dies_on_the_second(**kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("worker killed")
        return real(**kwargs)

    monkeypatch.setattr(search, "collected_pairs_store", dies_on_the_second)
    collection = search.search_collection_start(
        project=seeded, user=coordinator, iterations=1, budget=10, gl="qa", hl="en", enqueue=False
    )
    with pytest.raises(RuntimeError):
        search.search_collection_run(collection_id=collection.pk)
    collection.refresh_from_db()
    assert collection.status == JobStatus.FAILED and collection.items_created == 3
    assert SearchQuery.objects.get(collection=collection, query="Sport in Doha").status == "pending"
    search.search_collection_resume(collection=collection, enqueue=False)
    resumed = search.search_collection_run(collection_id=collection.pk)
    assert resumed.status == JobStatus.DONE
    assert serpapi_stub.queries == ["Food in Doha", "Sport in Doha", "Museums in Doha"]  # Sport once: cached
    assert resumed.calls_cached == 1 and resumed.calls_sent == 3
    questions = list(ValidationItem.objects.filter(project=seeded).values_list("item__question", flat=True))
    assert len(questions) == len(set(questions)) == 8


def test_a_host_the_operator_did_not_allow_is_refused_before_any_call(serpapi_stub, seeded, coordinator, settings):
    settings.SEARCH_ALLOWED_HOSTS = ["serpapi.com"]
    failed = collect(seeded, coordinator)
    assert failed.status == JobStatus.FAILED
    assert "The host 127.0.0.1" in failed.error and "SEARCH_ALLOWED_HOSTS" in failed.error
    assert serpapi_stub.requests == []


def test_a_redirect_to_a_host_not_allowed_is_refused(serpapi_stub, seeded, coordinator):
    serpapi_stub.script(StubAnswer(status=302, body={}, headers={"Location": "http://169.254.169.254/latest/"}))
    failed = collect(seeded, coordinator)
    assert failed.status == JobStatus.FAILED
    assert failed.error.startswith("The host 169.254.169.254 (port 80) is not allowed for search calls")
    assert len(serpapi_stub.requests) == 1 and not QAItem.objects.filter(project=seeded).exists()


def test_a_reply_over_the_size_cap_fails_its_query_and_the_rest_goes_on(serpapi_stub, seeded, coordinator, settings):
    settings.SEARCH_REPLY_MAX_BYTES = 4000  # the food reply is longer (4,120 bytes), the others shorter
    done = collect(seeded, coordinator, iterations=1)
    food = SearchQuery.objects.get(collection=done, query="Food in Doha")
    assert food.status == SearchQuery.Status.FAILED
    assert food.error == "SerpApi's reply is longer than 4,000 bytes (SEARCH_REPLY_MAX_BYTES)."
    assert done.status == JobStatus.DONE and done.items_created == 5


def test_a_cancelled_collection_stops_before_its_next_query_and_resumes(serpapi_stub, seeded, coordinator):
    collection = search.search_collection_start(project=seeded, user=coordinator, budget=50, enqueue=False)
    cancelled = search.search_collection_cancel(collection=collection, user=coordinator)
    assert cancelled.status == JobStatus.CANCELLED
    assert search.search_collection_run(collection_id=collection.pk) is None
    assert serpapi_stub.requests == []
    search.search_collection_resume(collection=cancelled, enqueue=False)
    assert search.search_collection_run(collection_id=collection.pk).status == JobStatus.DONE


def test_starting_needs_a_key_seeds_and_sane_numbers(seeded, coordinator):
    with pytest.raises(InvalidInput, match="budget: 1 to 10,000 calls"):
        search.search_collection_start(project=seeded, user=coordinator, budget=0, enqueue=False)
    with pytest.raises(InvalidInput, match="iterations: 1 to 5"):
        search.search_collection_start(project=seeded, user=coordinator, budget=5, iterations=9, enqueue=False)
    search.search_key_remove(project=seeded, user=coordinator)
    with pytest.raises(InvalidState, match="Set the project's SerpApi key first"):
        search.search_collection_start(project=seeded, user=coordinator, budget=5, enqueue=False)


def test_the_key_rotation_command_re_encrypts_search_keys_too(seeded, settings, capsys):
    old = Fernet.generate_key().decode()
    settings.ENCRYPTION_KEYS = [old]
    search.search_key_set(project=seeded, key=KEY, user=None)
    stored = SearchKey.objects.get(project=seeded).token
    new = Fernet.generate_key().decode()
    settings.ENCRYPTION_KEYS = [new, old]
    call_command("endpoint", "rotate-keys")
    assert "1 project search keys re-encrypted under the first key." in capsys.readouterr().out
    settings.ENCRYPTION_KEYS = [new]  # the old key dropped
    rotated = SearchKey.objects.get(project=seeded).token
    assert rotated != stored and secret_decrypt(token=rotated) == KEY
    settings.ENCRYPTION_KEYS = [Fernet.generate_key().decode()]  # a key nobody has
    with pytest.raises(CommandError, match=f"the SerpApi key of project {seeded.slug}"):
        call_command("endpoint", "rotate-keys")


def test_one_collection_per_project_runs_at_a_time(seeded, coordinator):
    search.search_collection_start(project=seeded, user=coordinator, budget=5, enqueue=False)
    with pytest.raises(InvalidState, match="A search collection of this project is running"):
        search.search_collection_start(project=seeded, user=coordinator, budget=5, enqueue=False)


def test_a_short_key_is_not_hinted_at(vproject, coordinator):
    search.search_key_set(project=vproject, key="abc123", user=coordinator)
    assert search.search_key_hint(vproject) == "set"
    assert SearchKey.objects.get(project=vproject).last_four == ""
