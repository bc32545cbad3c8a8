"""A worker killed mid-task (SIGKILL to its process group): a new worker takes the job over and finishes it once.

The mechanism under test (common/enqueue.py, common/jobs.py): every job is a row claimed with a conditional
update and kept alive by a heartbeat; a worker that starts sends every running job again, with a countdown
that ends when the job's heartbeat goes stale, and the job's service takes a stale job over. The workers get
a short stale time (2 s) and pause between steps (JOB_STEP_DELAY), so each job is reliably killed mid-way.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import ImportJob, PagePair
from exports import services as releases
from exports.models import Release
from review.models import AgreementReport
from tests import factories
from tests.conftest import api_as
from tests.exports.conftest import bulk_accepted_items
from tests.review.conftest import all_pass, flag, submitted_pair
from tests.wikiqa.wiki_replay import Replay, ReplayServer
from tests.worker import NO_PAUSE
from wikiqa.models import Collection, CollectionTitle

# The kill happens once progress is seen mid-way; SQLite (one writer at a time) shows it only at the end.
ONE_WRITER = "SQLite has one writer: a job's progress, written beside the transaction holding it, shows only at its end"
pytestmark = [pytest.mark.faults, pytest.mark.worker, pytest.mark.timeout(180)]

STALE = "2"


@pytest.fixture
def replay_server():
    with ReplayServer(Replay("bar_to_de", "bar_redirect", "bar_no_interlanguage_link")) as server:
        yield server


@pytest.fixture
def media_root(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def live_worker_env(replay_server, media_root) -> dict[str, str]:
    return {
        "JOB_STALE_SECONDS": STALE,
        "RELEASE_STALE_SECONDS": STALE,
        "AGREEMENT_STALE_SECONDS": STALE,
        "JOB_STEP_DELAY": "1",
        "RELEASE_CHUNK_SIZE": "50",
        "WIKIPEDIA_API_URL": replay_server.api_url,
        "WIKIPEDIA_REQUEST_INTERVAL": "0",
        "WIKIPEDIA_RETRY_WAIT": "0",
        "MEDIA_ROOT": str(media_root),
    }


@pytest.fixture
def second_reviewer(project):
    from annotation.services.members import membership_set

    user = factories.user("reviewer2")
    membership_set(project=project, user=user, roles={"reviewer"})
    return user


def kill_mid_way(start_worker, started) -> None:
    """Start a worker, wait until the job is under way (`started()`), SIGKILL the worker's process group."""
    first = start_worker()
    first.wait_for(started, timeout=45, interval=0.05)
    first.kill()


def test_a_collection_killed_mid_way_is_taken_over_and_no_pair_is_made_twice(start_worker, coordinator):
    project = factories.project(coordinator, slug="bar-de", local_language="bar", standard_language="deu")
    collection = Collection.objects.create(
        project=project, local_wiki="bar", standard_wiki="de", progress_total=3, created_by=coordinator
    )
    for position, title in enumerate(["Weißwurscht", "Münchn", "Kirtahutschn"]):
        CollectionTitle.objects.create(collection=collection, position=position, title=title)
    from common.enqueue import enqueue
    from wikiqa import tasks

    enqueue(tasks.collection_run, collection.pk)

    kill_mid_way(start_worker, lambda: Collection.objects.get(pk=collection.pk).progress_done >= 1)
    killed = Collection.objects.get(pk=collection.pk)
    assert (killed.status, killed.progress_done < 3) == ("running", True), "the collection had finished before the kill"

    second = start_worker(env=NO_PAUSE)
    second.wait_for(lambda: Collection.objects.get(pk=collection.pk).status == "done", timeout=60)

    collection.refresh_from_db()
    done = (collection.progress_done, collection.progress_total, collection.kept, collection.created_pairs)
    assert done == (3, 3, 2, 2)
    assert not collection.titles.filter(outcome="pending").exists()
    assert sorted(PagePair.objects.filter(project=project).values_list("local_title", flat=True)) == [
        "Minga",
        "Weißwurscht",
    ]
    assert "Sent 1 running job(s) again" in second.log()


def test_an_agreement_report_killed_mid_way_is_computed_once_by_the_next_worker(
    start_worker, project, coordinator, annotator, reviewer, second_reviewer
):
    from annotation.services.projects import project_update
    from review import judging as review_judging
    from review import queue as review_queue

    project_update(project=project, reviewers_per_item=2)
    _, items = submitted_pair(project, annotator)
    for user, judgments in ((reviewer, all_pass(project)), (second_reviewer, flag(project, "fluency", "stilted"))):
        slot = review_queue.review_claim(item=items[0], user=user)
        review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)
    queued = api_as(coordinator).post(f"/api/projects/{project.slug}/agreement/reports/")
    assert queued.status_code == 202, queued.content
    report_id = queued.data["id"]

    kill_mid_way(start_worker, lambda: AgreementReport.objects.get(pk=report_id).progress >= 5)
    killed = AgreementReport.objects.get(pk=report_id)
    assert (killed.status, killed.attempts, killed.result) == ("running", 1, {}), "nothing is stored half-way"

    second = start_worker(env=NO_PAUSE)
    second.wait_for(lambda: AgreementReport.objects.get(pk=report_id).status == "done", timeout=60)

    report = AgreementReport.objects.get(pk=report_id)
    assert (report.attempts, report.progress, report.error) == (2, 100, "")
    assert report.result["scopes"]["review:fluency"]["summary"]["n_units"] == 1
    assert AgreementReport.objects.filter(project=project).count() == 1


@pytest.mark.postgresql(reason=ONE_WRITER)
def test_an_import_killed_mid_way_leaves_nothing_and_is_imported_once_by_the_next_worker(
    start_worker, project, coordinator, media_root
):
    rows = [
        {
            "local_title": f"唐樓 {n}",
            "standard_title": f"唐楼 {n}",
            "local_url": f"https://zh-yue.wikipedia.org/wiki/T{n}",
            "standard_url": f"https://zh.wikipedia.org/wiki/T{n}",
            "local_lead": "唐樓係舊式樓宇。",
            "standard_lead": "唐楼。",
        }
        for n in range(4500)  # five batches of 1000, a second's pause after each
    ]
    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
    queued = api_as(coordinator).post(
        f"/api/projects/{project.slug}/imports/",
        {"files": [SimpleUploadedFile("pairs.jsonl", data)]},
        format="multipart",
    )
    assert queued.status_code == 202, queued.content
    job_id = queued.data["id"]

    kill_mid_way(start_worker, lambda: ImportJob.objects.get(pk=job_id).records_done >= 1000)
    killed = ImportJob.objects.get(pk=job_id)
    assert killed.status == "running"
    assert 1000 <= killed.records_done < 4500, "the import had finished before the kill"
    assert not PagePair.objects.filter(project=project).exists(), "a killed import left pairs behind"
    assert list(Path(media_root).rglob("*.jsonl")), "the upload is kept until the job has ended"

    second = start_worker(env=NO_PAUSE)
    second.wait_for(lambda: ImportJob.objects.get(pk=job_id).status not in ("pending", "running"), timeout=60)

    job = ImportJob.objects.get(pk=job_id)
    assert job.status == "done", (job.error, job.report)
    assert (job.report["created"], job.report["already_present"]) == (4500, 0)
    assert PagePair.objects.filter(project=project).count() == 4500
    assert not list(Path(media_root).rglob("*.jsonl"))


def test_a_release_build_killed_mid_way_is_taken_over_and_published_once(
    start_worker, project, coordinator, media_root
):
    bulk_accepted_items(project, 200)  # four chunks of 50, a second's pause after each
    release = releases.release_request(project=project, user=coordinator)

    kill_mid_way(start_worker, lambda: Release.objects.get(pk=release.pk).progress_done >= 50)
    killed = Release.objects.get(pk=release.pk)
    assert (killed.status, killed.files) == ("running", [])
    assert not releases.release_dir(killed).exists(), "a killed build published files"

    second = start_worker(env=NO_PAUSE)
    second.wait_for(lambda: Release.objects.get(pk=release.pk).status == "done", timeout=60)

    release.refresh_from_db()
    assert (release.attempts, release.version, release.counts["lead_qa"]) == (2, 1, 200)
    assert Release.objects.filter(project=project).count() == 1
    root = releases.release_dir(release)
    for entry in release.files:
        assert hashlib.sha256((root / entry["name"]).read_bytes()).hexdigest() == entry["sha256"]
    building = Path(media_root) / "releases" / project.slug / ".building"
    assert not list(building.glob("*")), "the killed build's temporary files were left behind"
