"""The search collection pages: key, start, the polled status, cancel and resume (coordinators only)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.validation.test_search import KEY, SEEDS
from validation import search, services
from validation.models import SearchCollection, SearchKey


@pytest.fixture
def seeded(vproject, coordinator):
    services.seed_queries_add(
        project=vproject, rows=[(topic, query, "Doha", "") for topic, query in SEEDS], user=coordinator
    )
    return vproject


def test_a_coordinator_saves_the_key_starts_and_reads_the_calls_sent_and_cached(
    serpapi_stub, client, seeded, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)
    url = reverse("validation_search", args=[seeded.slug])
    page = client.get(url).content.decode()
    assert "Key: not set" in page and "3 seed queries" in page
    answer = client.post(url, {"action": "key", "api_key": KEY}, follow=True)
    assert "Key: set, ends in …cdef" in answer.content.decode() and KEY not in answer.content.decode()

    start = {"action": "start", "engine": "google", "iterations": "2", "budget": "40", "gl": "qa", "hl": "en"}
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(url, start)
    collection = SearchCollection.objects.get(project=seeded)
    assert answer.status_code == 302 and answer["Location"].endswith(f"/search/{collection.pk}/")
    page = client.get(answer["Location"]).content.decode()
    assert "<strong>15</strong> of 40 calls sent" in page
    assert "<strong>0</strong> answered from stored responses" in page
    assert "What is the national dish of Qatar?" in page and "qatarday.com" in page

    # A second collection answers everything from the stored responses.
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(url, start)
    second = SearchCollection.objects.filter(project=seeded).order_by("-id").first()
    polled = client.get(answer["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert 'id="search-status"' in polled and "<strong>0</strong> of 40 calls sent" in polled
    assert "<strong>15</strong> answered from stored responses" in polled
    assert second.calls_sent == 0 and len(serpapi_stub.requests) == 15


def test_bad_numbers_and_a_missing_key_are_named_on_the_form(client, seeded, coordinator):
    client.force_login(coordinator)
    url = reverse("validation_search", args=[seeded.slug])
    answer = client.post(url, {"action": "start", "engine": "google", "iterations": "1", "budget": "lots"})
    assert answer.status_code == 400 and "budget: a whole number." in answer.content.decode()
    answer = client.post(url, {"action": "start", "engine": "google", "iterations": "1", "budget": "5"})
    assert answer.status_code == 400 and "Set the project&#x27;s SerpApi key first." in answer.content.decode()


def test_a_running_collection_is_polled_and_cancelled(client, seeded, coordinator):
    search.search_key_set(project=seeded, key=KEY, user=coordinator)
    collection = search.search_collection_start(project=seeded, user=coordinator, budget=10, enqueue=False)
    client.force_login(coordinator)
    detail = reverse("validation_search_detail", args=[seeded.slug, collection.pk])
    page = client.get(detail).content.decode()
    assert 'hx-trigger="every 2s"' in page and "Waiting for a worker" in page
    answer = client.post(reverse("validation_search_cancel", args=[seeded.slug, collection.pk]), follow=True)
    assert "Cancelled (it can be resumed)" in answer.content.decode()
    assert 'hx-trigger="every' not in answer.content.decode()
    answer = client.post(
        reverse("validation_search_resume", args=[seeded.slug, collection.pk]), {"budget": "20"}, follow=True
    )
    collection.refresh_from_db()
    assert collection.status == "pending" and collection.budget == 20


def test_validators_and_outsiders_are_kept_out(client, seeded, coordinator, reviewer, outsider):
    search.search_key_set(project=seeded, key=KEY, user=coordinator)
    collection = search.search_collection_start(project=seeded, user=coordinator, budget=10, enqueue=False)
    for user, code in ((reviewer, 403), (outsider, 404)):
        client.force_login(user)
        assert client.get(reverse("validation_search", args=[seeded.slug])).status_code == code
        assert (
            client.post(reverse("validation_search", args=[seeded.slug]), {"action": "remove_key"}).status_code == code
        )
        assert client.get(reverse("validation_search_detail", args=[seeded.slug, collection.pk])).status_code == code
        cancel = reverse("validation_search_cancel", args=[seeded.slug, collection.pk])
        assert client.post(cancel).status_code == code
    assert SearchKey.objects.filter(project=seeded).exists()
    collection.refresh_from_db()
    assert collection.status == "pending"
