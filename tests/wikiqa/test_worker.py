"""Collections and uploads processed by a real Celery worker (a subprocess, against Redis and the test database)."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import ImportJob, PagePair
from tests import factories
from tests.conftest import api_as
from tests.wikiqa.wiki_replay import Replay, ReplayServer
from wikiqa.models import Collection

pytestmark = pytest.mark.worker


@pytest.fixture
def replay_server():
    with ReplayServer(Replay("bar_to_de", "bar_redirect", "bar_no_interlanguage_link")) as server:
        yield server


@pytest.fixture
def media_root(tmp_path_factory):
    return tmp_path_factory.mktemp("media")


@pytest.fixture
def live_worker_env(replay_server, media_root):
    return {
        "WIKIPEDIA_API_URL": replay_server.api_url,
        "WIKIPEDIA_REQUEST_INTERVAL": "0",
        "WIKIPEDIA_RETRY_WAIT": "0",
        "MEDIA_ROOT": str(media_root),
    }


@pytest.fixture
def bar_project(coordinator):
    return factories.project(coordinator, slug="bar-de", local_language="bar", standard_language="deu")


def test_a_collection_started_in_the_browser_is_processed_by_the_worker(
    live_worker, replay_server, client, bar_project, coordinator
):
    client.force_login(coordinator)

    response = client.post(
        reverse("collection_start", args=[bar_project.slug]),
        {"titles": "Weißwurscht\nMünchn\nKirtahutschn", "local_heavy_only": "on"},
    )

    assert response.status_code == 302
    collection = Collection.objects.get(project=bar_project)
    live_worker.wait_for(lambda: Collection.objects.get(pk=collection.pk).status == "done")
    collection.refresh_from_db()
    done = (collection.progress_done, collection.progress_total, collection.kept, collection.created_pairs)
    assert done == (3, 3, 2, 2)
    assert set(PagePair.objects.filter(project=bar_project).values_list("local_title", flat=True)) == {
        "Weißwurscht",
        "Minga",
    }
    partial = client.get(reverse("collection_detail", args=[bar_project.slug, collection.pk]), HTTP_HX_REQUEST="true")
    assert "every 2s" not in partial.content.decode()  # finished: the page stops polling
    assert "3 of 3 titles" in partial.content.decode()
    api = api_as(coordinator).get(f"/api/projects/{bar_project.slug}/collections/{collection.pk}/")
    assert (api.data["status"], api.data["outcomes"]["kept"], api.data["outcomes"]["no_standard_page"]) == (
        "done",
        2,
        1,
    )
    assert all("localqa/0.1" in r.headers["User-Agent"] for r in replay_server.replay.requests)


def test_an_upload_is_imported_by_the_worker_and_its_report_shown(
    live_worker, client, project, coordinator, settings, media_root
):
    settings.MEDIA_ROOT = media_root
    client.force_login(coordinator)
    row = {
        "local_title": "唐樓",
        "standard_title": "唐楼",
        "local_url": "https://zh-yue.wikipedia.org/wiki/T",
        "standard_url": "https://zh.wikipedia.org/wiki/T",
        "local_lead": "唐樓係舊式樓宇。",
        "standard_lead": "唐楼。",
    }
    upload = SimpleUploadedFile("pairs.jsonl", (json.dumps(row, ensure_ascii=False) + "\n").encode())

    response = client.post(reverse("import_start", args=[project.slug]), {"files": [upload], "format": "auto"})

    assert response.status_code == 302
    job = ImportJob.objects.get(project=project)
    live_worker.wait_for(lambda: ImportJob.objects.get(pk=job.pk).status == "done")
    assert PagePair.objects.filter(project=project, local_title="唐樓").exists()
    page = client.get(reverse("import_detail", args=[project.slug, job.pk])).content.decode()
    assert "1 pair created, 0 already present." in page
    assert not list(media_root.rglob("*.jsonl"))  # the upload is removed once imported
