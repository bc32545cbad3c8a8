"""Collecting page pairs from Wikipedia, offline against recorded MediaWiki API replies."""

from __future__ import annotations

import httpx
import pytest

from annotation.models import PagePair
from common.errors import InvalidInput, InvalidState
from tests import factories
from tests.wikiqa.wiki_replay import Replay
from wikiqa import collect as collecting
from wikiqa.models import Collection, WikiPage
from wikiqa.wikipedia import WikipediaError, WikiSession

ALL_BAR = (
    "bar_to_de",
    "bar_redirect",
    "bar_no_interlanguage_link",
    "bar_disambiguation",
    "bar_429_then_success",
    "bar_server_error",
    "bar_missing_page",
    "bar_not_local_heavy",
    "bar_empty_lead",
)


@pytest.fixture
def bar_project(coordinator):
    return factories.project(coordinator, slug="bar-de", local_language="bar", standard_language="deu")


def session(replay: Replay) -> WikiSession:
    return WikiSession(transport=replay.transport, min_interval=0, max_retries=2, retry_wait=0)


def collect(project, titles, replay, **options) -> Collection:
    collection = collecting.collection_create(project=project, user=None, titles=titles, **options)
    ran = collecting.collection_run(collection_id=collection.pk, session=session(replay))
    assert ran is not None
    return ran


@pytest.fixture(autouse=True)
def no_eager_network(monkeypatch):
    """collection_create enqueues the task, which runs eagerly in tests: keep that run off the network."""
    monkeypatch.setattr("wikiqa.tasks.collection_run.delay", lambda collection_id: None)


def outcomes(collection) -> dict[str, str]:
    return dict(collection.titles.values_list("title", "outcome"))


def test_a_cantonese_page_is_paired_with_its_mandarin_page_in_the_chosen_script_variant(project):
    project.standard_variant = "zh-hk"
    project.save(update_fields=["standard_variant"])
    replay = Replay("zh-yue_to_zh")

    collection = collect(project, ["油麻地"], replay)

    assert collection.status == "done"
    assert (collection.progress_done, collection.kept, collection.progress_total) == (1, 1, 1)
    pair = PagePair.objects.get(project=project, local_title="油麻地")
    assert pair.standard_title == "油麻地" and pair.source == "wikipedia"
    assert pair.local_lead.startswith("油麻地係香港") and "𠵱家" in pair.local_lead
    assert "== 歷史 ==" not in pair.local_lead and "歷史" in pair.local_text
    assert pair.local_lead_length == len(pair.local_lead)
    assert pair.metadata["wikipedia"]["local_revision"] == 1888001
    assert pair.metadata["wikipedia"]["standard_revision"] == 80012345
    assert pair.local_url == "https://zh-yue.wikipedia.org/wiki/%E6%B2%B9%E9%BA%BB%E5%9C%B0"
    assert [r.url.params["variant"] for r in replay.calls(titles="油麻地") if r.url.host == "zh.wikipedia.org"] == [
        "zh-hk",
        "zh-hk",
    ]
    assert all(r.url.host != "zh.wikipedia.org" or "variant" in r.url.params for r in replay.requests)
    assert not any("variant" in r.url.params for r in replay.requests if r.url.host == "zh-yue.wikipedia.org")


def test_every_title_ends_with_a_recorded_outcome(bar_project):
    titles = ["Weißwurscht", "Münchn", "Kirtahutschn", "Wurz", "Maibaam", "Leberkas", "Gibtsned", "Obazda", "Leer"]

    collection = collect(bar_project, titles, Replay(*ALL_BAR))

    assert outcomes(collection) == {
        "Weißwurscht": "kept",
        "Münchn": "kept",
        "Kirtahutschn": "no_standard_page",
        "Wurz": "disambiguation",
        "Maibaam": "kept",
        "Leberkas": "fetch_failed",
        "Gibtsned": "page_missing",
        "Obazda": "not_local_heavy",
        "Leer": "empty_lead",
    }
    assert (collection.progress_done, collection.kept, collection.dropped) == (9, 3, 6)
    counts = collecting.collection_outcome_counts(collection)
    assert counts["kept"] == 3 and counts["pending"] == 0 and sum(counts.values()) == 9
    failed = collection.titles.get(title="Leberkas")
    assert "HTTP 503" in failed.error and "bar.wikipedia.org" in failed.error


def test_a_redirect_is_followed_and_the_pair_takes_the_target_title(bar_project):
    collection = collect(bar_project, ["Münchn"], Replay("bar_redirect"))

    entry = collection.titles.get()
    assert (entry.title, entry.local_title, entry.standard_title) == ("Münchn", "Minga", "München")
    pair = PagePair.objects.get(project=bar_project)
    assert (pair.local_title, pair.metadata["wikipedia"]["requested_title"]) == ("Minga", "Münchn")


def test_a_429_is_retried_and_then_succeeds(bar_project):
    replay = Replay("bar_429_then_success")

    collection = collect(bar_project, ["Maibaam"], replay)

    assert outcomes(collection) == {"Maibaam": "kept"}
    assert len(replay.calls(titles="Maibaam", prop="info|pageprops|langlinks")) == 2


def test_a_server_error_is_retried_then_recorded_as_a_failed_fetch_and_the_collection_goes_on(bar_project):
    replay = Replay("bar_server_error", "bar_to_de")

    collection = collect(bar_project, ["Leberkas", "Weißwurscht"], replay)

    assert outcomes(collection) == {"Leberkas": "fetch_failed", "Weißwurscht": "kept"}
    assert len(replay.calls(titles="Leberkas")) == 3  # the first try and two retries
    assert collection.status == "done"


def test_wikipedia_out_of_reach_stops_the_collection_at_its_first_title_with_the_reason_and_it_resumes(
    bar_project, client, coordinator
):
    """No connection at all (offline: a name that does not resolve, a refused connection) is not a page's failure:
    the collection stops at the first title's first request, not retried, and says why, every title waiting for
    Resume. Before, each title spent its own retries and ended "fetch failed" (offline, the embedded default
    answered a three-title collection after 47 s; then after 16 s, the first title's retries)."""
    replay = Replay("bar_network_error")

    collection = collect(bar_project, ["Leberkas", "Weißwurscht", "Maibaam"], replay)

    assert collection.status == "failed"
    assert "could not be reached" in collection.error and "Connection refused" in collection.error
    assert "reaching bar.wikipedia.org for 'Leberkas'" in collection.error and "“Leberkas”" in collection.error
    assert outcomes(collection) == {"Leberkas": "pending", "Weißwurscht": "pending", "Maibaam": "pending"}
    assert len(replay.requests) == 1  # a connection that cannot be made is not retried; nothing asked for the others
    assert collection.progress_done == 0
    client.force_login(coordinator)
    page = client.get(f"/projects/{bar_project.slug}/collections/{collection.pk}/").content.decode()
    assert "could not be reached from this server" in page and "Resume</button>" in page
    resumed = collecting.collection_resume(collection=collection, enqueue=False)
    assert resumed.status == "pending" and resumed.error == ""


def test_every_request_names_localqa_and_the_operator_contact(bar_project, settings):
    settings.WIKIPEDIA_CONTACT = "ops@example.org"
    replay = Replay("bar_to_de")

    collect(bar_project, ["Weißwurscht"], replay)

    agents = {request.headers["User-Agent"] for request in replay.requests}
    assert len(agents) == 1
    assert agents.pop().startswith("localqa/0.1 (ops@example.org)")


def test_the_local_heavy_filter_can_be_switched_off(bar_project):
    collection = collect(bar_project, ["Obazda"], Replay("bar_not_local_heavy"), local_heavy_only=False)

    assert outcomes(collection) == {"Obazda": "kept"}


def test_running_the_same_titles_again_creates_no_duplicates_and_fetches_no_page_text_again(bar_project):
    first = collect(bar_project, ["Weißwurscht", "Münchn"], Replay("bar_to_de", "bar_redirect"))
    replay = Replay("bar_to_de", "bar_redirect")

    second = collect(bar_project, ["Weißwurscht", "Münchn"], replay)

    assert (first.created_pairs, second.created_pairs, second.kept) == (2, 0, 2)
    assert PagePair.objects.filter(project=bar_project).count() == 2
    assert not replay.calls(prop="extracts")  # same revisions: texts come from the cache
    assert WikiPage.objects.count() == 4


def test_a_cancelled_collection_resumes_where_it_stopped(bar_project):
    collection = collecting.collection_create(project=bar_project, user=None, titles=["Weißwurscht", "Münchn"])
    replay = Replay("bar_to_de", "bar_redirect")
    calls = []

    def cancel_after_first(progress):
        calls.append(progress.progress_done)
        collecting.collection_cancel(collection=progress)

    stopped = collecting.collection_run(
        collection_id=collection.pk, session=session(replay), on_progress=cancel_after_first
    )

    assert (stopped.status, stopped.progress_done) == ("cancelled", 1)
    resumed = collecting.collection_resume(collection=stopped)
    assert resumed.status == "pending"
    finished = collecting.collection_run(collection_id=collection.pk, session=session(replay))
    assert (finished.status, finished.progress_done, finished.kept) == ("done", 2, 2)
    assert calls == [1]


def test_a_stalled_running_collection_can_be_resumed_but_a_live_one_cannot(bar_project):
    from datetime import timedelta

    from django.utils import timezone

    collection = collecting.collection_create(project=bar_project, user=None, titles=["Weißwurscht"])
    Collection.objects.filter(pk=collection.pk).update(status="running", heartbeat_at=timezone.now())
    collection.refresh_from_db()
    with pytest.raises(InvalidState):
        collecting.collection_resume(collection=collection)

    Collection.objects.filter(pk=collection.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=10))
    finished = collecting.collection_run(collection_id=collection.pk, session=session(Replay("bar_to_de")))

    assert finished.status == "done" and finished.kept == 1


def test_a_second_delivery_of_the_same_task_does_nothing(bar_project):
    collection = collect(bar_project, ["Weißwurscht"], Replay("bar_to_de"))

    assert collecting.collection_run(collection_id=collection.pk, session=session(Replay())) is None


def test_category_members_become_the_titles(bar_project):
    collection = collecting.collection_create(project=bar_project, user=None, category="Kategorie:Essn und Trinkn")

    finished = collecting.collection_run(
        collection_id=collection.pk, session=session(Replay("bar_category", "bar_to_de", "bar_no_interlanguage_link"))
    )

    assert outcomes(finished) == {"Weißwurscht": "kept", "Kirtahutschn": "no_standard_page"}
    assert finished.progress_total == 2


def test_a_collection_needs_titles_or_a_category(bar_project):
    with pytest.raises(InvalidInput):
        collecting.collection_create(project=bar_project, user=None)
    with pytest.raises(InvalidInput):
        collecting.collection_create(project=bar_project, user=None, titles=["A"], category="B")


def test_titles_are_parsed_one_per_line_without_repeats():
    assert collecting.parse_titles("Minga\n\n  Weißwurscht \nMinga\nMaria_Theresia\n") == [
        "Minga",
        "Weißwurscht",
        "Maria Theresia",
    ]


def test_the_client_raises_one_error_type_with_a_readable_message():
    replay = Replay("bar_network_error")

    with pytest.raises(WikipediaError, match=r"network error reaching bar\.wikipedia\.org for 'Leberkas'"):
        session(replay).facts("bar", "Leberkas")


def test_a_connection_that_times_out_is_not_retried_but_a_reply_that_times_out_is():
    tries = {"connect": 0, "read": 0}

    def timing_out(request: httpx.Request) -> httpx.Response:
        kind = "connect" if request.url.host == "bar.wikipedia.org" else "read"
        tries[kind] += 1
        raise (httpx.ConnectTimeout if kind == "connect" else httpx.ReadTimeout)("timed out", request=request)

    client = WikiSession(transport=httpx.MockTransport(timing_out), min_interval=0, max_retries=2, retry_wait=0)

    with pytest.raises(WikipediaError, match=r"reaching bar\.wikipedia\.org for 'Minga': no connection within 5 s"):
        client.facts("bar", "Minga")
    with pytest.raises(WikipediaError, match=r"de\.wikipedia\.org did not answer in time for 'München'") as slow:
        client.facts("de", "München")

    assert tries == {"connect": 1, "read": 3}  # a server that answers slowly gets the retries
    assert not slow.value.unreachable


def test_a_category_that_cannot_be_listed_fails_the_collection_with_the_reason(bar_project):
    collection = collecting.collection_create(project=bar_project, user=None, category="Kategorie:Nix")
    replay = Replay("bar_network_error")
    replay.exchanges.append(
        {
            "request": {"host": "bar.wikipedia.org", "params": {"list": "categorymembers", "cmtitle": "Kategorie:Nix"}},
            "error": "connect",
        }
    )

    finished = collecting.collection_run(collection_id=collection.pk, session=session(replay))

    assert finished.status == "failed"
    assert "network error" in finished.error
    resumed = collecting.collection_resume(collection=finished)
    assert resumed.status == "pending" and resumed.error == ""


def test_cancelling_a_collection_whose_worker_is_gone_stops_it_at_once(bar_project):
    from datetime import timedelta

    from django.utils import timezone

    collection = collecting.collection_create(project=bar_project, user=None, titles=["Weißwurscht"])
    Collection.objects.filter(pk=collection.pk).update(
        status="running", heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    collection.refresh_from_db()

    assert collecting.collection_cancel(collection=collection).status == "cancelled"
