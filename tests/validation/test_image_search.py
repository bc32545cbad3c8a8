"""Image search in a search collection: Google Images through SerpApi, from a response recorded by hand in the
format of the others (tests/fixtures/serpapi/en_images_souq_waqif.json, served by tests/serpapi_stub.py)."""

from __future__ import annotations

import pytest

from common.errors import InvalidInput
from common.jobs import JobStatus
from tests.serpapi_stub import recorded
from validation import search, services
from validation.images import image_shown
from validation.models import SearchResponse, ValidationItem

KEY = "test-serpapi-key-0123456789abcdef"
QUERY = "What is Souq Waqif in Doha"


@pytest.fixture
def seeded(vproject, coordinator):
    services.seed_queries_add(project=vproject, rows=[("culture", QUERY, "Doha", "")], user=coordinator)
    search.search_key_set(project=vproject, key=KEY, user=coordinator)
    return vproject


def _collect(project, user, **options):
    values = {"engine": "google", "search_type": "images", "iterations": 1, "budget": 5}
    values |= {"location": "Doha, Qatar", "gl": "qa", "hl": "en"} | options
    collection = search.search_collection_start(project=project, user=user, enqueue=False, **values)
    return search.search_collection_run(collection_id=collection.pk)


def test_an_image_search_sends_google_images_and_lands_its_images_on_a_validation_item(
    serpapi_stub, seeded, coordinator
):
    done = _collect(seeded, coordinator)
    assert done.status == JobStatus.DONE, done.error
    assert serpapi_stub.requests == [
        {"engine": "google_images", "q": QUERY, "location": "Doha, Qatar", "gl": "qa", "hl": "en", "api_key": KEY}
    ]
    (validation,) = ValidationItem.objects.filter(project=seeded).select_related("item")
    assert validation.item.question == QUERY
    assert validation.item.answer_standard == "Souq Waqif, the old market of Doha with spice and falcon shops"
    assert validation.question_type == "image" and validation.input_query == QUERY
    assert validation.source_urls == ["https://visitqatar.com/intl-en/things-to-do/souq-waqif"]
    images = validation.metadata["search"]["images"]
    assert [image["source"] for image in images] == ["Visit Qatar", "Wikipedia", "Example Blog"]
    assert images[0]["url"] == "https://visitqatar.com/content/dam/visitqatar/img/souq-waqif-1600.jpg"
    assert images[0]["thumbnail"] == "https://serpapi.com/searches/6750b3d2e4b0/images/9f8e7d6c5b4a1.jpeg"
    assert images[0]["source_url"] == "https://visitqatar.com/intl-en/things-to-do/souq-waqif"
    assert (images[0]["width"], images[0]["height"]) == (1600, 1067)
    assert images[0]["raw"]["related_content_id"] == "U291cVdhcWlmMQ"
    # The fourth result has no http(s) image at all (a javascript: thumbnail): left out and counted.
    assert validation.metadata["search"]["images_left_out"] == 1
    assert done.items_left_out == 1
    # The raw response is kept whole, as every collection's.
    assert SearchResponse.objects.get().body == recorded("en_images_souq_waqif.json")


def test_a_second_image_run_sends_no_call_and_follows_related_searches(serpapi_stub, seeded, coordinator):
    first = _collect(seeded, coordinator, iterations=2)
    assert first.status == JobStatus.DONE, first.error
    assert [request["q"] for request in serpapi_stub.requests] == [QUERY, "souq waqif falcon souq"]
    again = _collect(seeded, coordinator, iterations=2)
    assert again.calls_sent == 0 and again.calls_cached == 2
    assert len(serpapi_stub.requests) == 2
    assert ValidationItem.objects.filter(project=seeded).count() == 1  # the follow-up had no results; no repeats


def test_image_search_needs_google(seeded, coordinator):
    with pytest.raises(InvalidInput, match="Google Images"):
        search.search_collection_start(
            project=seeded, user=coordinator, engine="bing", search_type="images", budget=5, enqueue=False
        )
    with pytest.raises(InvalidInput, match="search_type"):
        search.search_collection_start(project=seeded, user=coordinator, search_type="video", budget=5, enqueue=False)


@pytest.mark.one_engine
def test_only_https_images_of_the_allowed_hosts_are_loaded(settings):
    settings.SEARCH_IMAGE_HOSTS = ["serpapi.com", "*.gstatic.com", "http://127.0.0.1:8123"]
    assert image_shown("https://serpapi.com/searches/x/images/a.jpeg")
    assert image_shown("https://encrypted-tbn0.gstatic.com/images?q=tbn:x")
    assert image_shown("http://127.0.0.1:8123/a.png")  # plain http only where the operator named it so
    assert not image_shown("http://serpapi.com/a.jpeg")
    assert not image_shown("https://127.0.0.1:8123/a.png")
    assert not image_shown("https://evil.example/serpapi.com.jpeg")
    assert not image_shown("https://serpapi.com.evil.example/a.jpeg")
    assert not image_shown("javascript:alert(1)")
    assert not image_shown("data:image/png;base64,AAAA")
    assert "https://*.gstatic.com" in settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]["img-src"]


def test_a_validator_sees_the_allowed_images_beside_the_qa_and_the_others_only_as_links(
    client, serpapi_stub, seeded, coordinator, reviewer
):
    _collect(seeded, coordinator)
    slot = services.validation_claim_next(project=seeded, user=reviewer)
    assert slot is not None
    client.force_login(reviewer)

    page = client.get(f"/projects/{seeded.slug}/validation/tasks/{slot.pk}/").content.decode()

    assert 'id="search-images"' in page
    # SerpApi's and Google's thumbnails (allowed hosts, https) are loaded; the blog's http image is not.
    assert '<img src="https://serpapi.com/searches/6750b3d2e4b0/images/9f8e7d6c5b4a1.jpeg"' in page
    assert '<img src="https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcQ_souq_waqif_lanterns"' in page
    assert '<img src="http://images.example-tracker.net' not in page
    assert 'href="http://images.example-tracker.net/souq-large.jpg"' in page
    assert "Open the image on images.example-tracker.net" in page
    assert 'referrerpolicy="no-referrer"' in page


def test_the_command_runs_an_image_search(serpapi_stub, seeded, capsys):
    from django.core.management import call_command

    call_command("search_collect", seeded.slug, "--budget", "3", "--search-type", "images", "--gl", "qa")
    assert serpapi_stub.requests[0]["engine"] == "google_images"
    assert ValidationItem.objects.filter(project=seeded, question_type="image").count() == 1
