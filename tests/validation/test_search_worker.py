"""A search collection on a real Celery worker, killed mid-way (SIGKILL to its process group): the next worker
takes it over, sends no call for a query already answered, and adds no QA pair twice."""

from __future__ import annotations

import pytest

from common.enqueue import enqueue
from tests.validation.test_search import KEY, SEEDS
from tests.worker import NO_PAUSE
from validation import search, services, tasks
from validation.models import SearchCollection, SearchQuery, ValidationItem

pytestmark = [pytest.mark.worker, pytest.mark.timeout(180)]


@pytest.fixture
def live_worker_env(serpapi_stub) -> dict[str, str]:
    return {
        "SERPAPI_BASE_URL": serpapi_stub.base_url,
        "SEARCH_ALLOWED_HOSTS": "127.0.0.1",
        "SEARCH_RETRY_BASE_SECONDS": "0",
        "JOB_STALE_SECONDS": "2",
        "JOB_STEP_DELAY": "1",  # a pause after each query, so the kill lands between two of them
    }


def test_a_search_collection_killed_mid_way_resumes_without_duplicates(
    start_worker, vproject, coordinator, serpapi_stub
):
    services.seed_queries_add(
        project=vproject, rows=[(topic, query, "Doha", "") for topic, query in SEEDS], user=coordinator
    )
    search.search_key_set(project=vproject, key=KEY, user=coordinator)
    collection = search.search_collection_start(
        project=vproject, user=coordinator, iterations=1, budget=10, gl="qa", hl="en", enqueue=False
    )
    enqueue(tasks.search_collection_run, collection.pk)

    first = start_worker()
    first.wait_for(lambda: SearchCollection.objects.get(pk=collection.pk).progress_done >= 1, timeout=45, interval=0.05)
    first.kill()
    killed = SearchCollection.objects.get(pk=collection.pk)
    assert killed.status == "running" and killed.progress_done < 3, "the collection had finished before the kill"

    second = start_worker(env=NO_PAUSE)
    second.wait_for(lambda: SearchCollection.objects.get(pk=collection.pk).status == "done", timeout=60)

    done = SearchCollection.objects.get(pk=collection.pk)
    print(f"\nkilled after {killed.progress_done} query; calls sent {serpapi_stub.queries}")
    assert serpapi_stub.queries == ["Food in Doha", "Sport in Doha", "Museums in Doha"]  # each once
    assert (done.calls_sent, done.progress_done, done.items_created, done.attempts) == (3, 3, 8, 2)
    assert not SearchQuery.objects.filter(collection=done, status="pending").exists()
    questions = list(ValidationItem.objects.filter(project=vproject).values_list("item__question", flat=True))
    assert len(questions) == len(set(questions)) == 8
    assert "Sent 1 running job(s) again" in second.log()
