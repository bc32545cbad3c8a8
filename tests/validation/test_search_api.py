"""The search collection's REST API and management command, from recorded SerpApi responses."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from tests.conftest import api_as
from tests.serpapi_stub import StubAnswer
from tests.validation.test_search import KEY, SEEDS
from validation import search, services
from validation.models import SearchCollection, SearchKey, ValidationItem


@pytest.fixture
def seeded(vproject, coordinator):
    services.seed_queries_add(
        project=vproject, rows=[(topic, query, "Doha", "") for topic, query in SEEDS], user=coordinator
    )
    return vproject


def test_a_coordinator_sets_the_key_starts_a_collection_and_polls_it(
    serpapi_stub, seeded, coordinator, django_capture_on_commit_callbacks
):
    api = api_as(coordinator)
    key_url = reverse("api_validation_search_key", args=[seeded.slug])
    assert api.get(key_url).json() == {"key": "not set"}
    answer = api.put(key_url, {"api_key": KEY}, format="json")
    assert answer.status_code == 200 and answer.json() == {"key": "set, ends in …cdef"}
    assert KEY not in answer.content.decode()

    start = {"engine": "google", "iterations": 2, "budget": 40, "location": "Doha, Qatar", "gl": "qa", "hl": "en"}
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post(reverse("api_validation_searches", args=[seeded.slug]), start, format="json")
    assert answer.status_code == 202, answer.content
    collection_id = answer.json()["id"]
    body = api.get(reverse("api_validation_search", args=[seeded.slug, collection_id])).json()
    assert body["status"] == "done" and body["calls_sent"] == 15 and body["calls_cached"] == 0
    assert body["items_created"] == 10 and body["queries"]["sent"] == 15 and body["percent"] == 100
    queries = api.get(reverse("api_validation_search_queries", args=[seeded.slug, collection_id])).json()
    assert queries["count"] == 15 and queries["results"][0]["query"] == "Food in Doha"
    assert queries["results"][0]["items_created"] == 3 and queries["results"][0]["origin"] == "seed"


def test_bad_input_is_named_by_its_field(seeded, coordinator):
    answer = api_as(coordinator).post(
        reverse("api_validation_searches", args=[seeded.slug]), {"budget": 0, "engine": "altavista"}, format="json"
    )
    assert answer.status_code == 400
    assert set(answer.json()["details"]) == {"budget", "engine"}


def test_without_a_key_the_start_is_refused_in_words(seeded, coordinator):
    answer = api_as(coordinator).post(
        reverse("api_validation_searches", args=[seeded.slug]), {"budget": 5}, format="json"
    )
    assert answer.status_code == 409
    assert answer.json()["detail"] == "Set the project's SerpApi key first."


def test_validators_and_outsiders_reach_no_search_route(seeded, reviewer, outsider):
    routes = [
        ("get", reverse("api_validation_searches", args=[seeded.slug])),
        ("post", reverse("api_validation_searches", args=[seeded.slug])),
        ("put", reverse("api_validation_search_key", args=[seeded.slug])),
        ("get", reverse("api_validation_search_key", args=[seeded.slug])),
    ]
    for method, url in routes:
        assert getattr(api_as(reviewer), method)(url, {"budget": 5, "api_key": "x"}, format="json").status_code == 403
        assert getattr(api_as(outsider), method)(url, {"budget": 5, "api_key": "x"}, format="json").status_code == 404
    assert not SearchKey.objects.exists() and not SearchCollection.objects.exists()


def test_the_command_collects_and_a_second_run_sends_no_call(serpapi_stub, seeded, capsys, monkeypatch):
    monkeypatch.setenv("SERPAPI_TEST_KEY", KEY)
    options = ["--iterations", "2", "--budget", "40", "--gl", "qa", "--hl", "en", "--location", "Doha, Qatar"]
    call_command("search_collect", seeded.slug, "--key-from-env", "SERPAPI_TEST_KEY", *options)
    first = capsys.readouterr().out
    assert "calls sent                                15" in first
    assert "items added                               10" in first
    call_command("search_collect", seeded.slug, *options)
    second = capsys.readouterr().out
    assert "calls sent                                 0" in second
    assert "answered from stored responses            15" in second
    assert len(serpapi_stub.requests) == 15 and ValidationItem.objects.filter(project=seeded).count() == 10


def test_the_command_fails_with_the_reason(serpapi_stub, seeded):
    search.search_key_set(project=seeded, key="bad-key-0000", user=None)
    serpapi_stub.script(StubAnswer.error(401, "error_401.json"))
    with pytest.raises(CommandError, match="SerpApi refused the project's key"):
        call_command("search_collect", seeded.slug, "--budget", "5")
