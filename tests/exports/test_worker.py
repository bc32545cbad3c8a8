"""Release builds in a real Celery worker: a build that completes, a worker killed mid-build, requests at once."""

from __future__ import annotations

import hashlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from django.db import connection

from common.errors import InvalidState
from exports import services
from exports.models import Release
from tests.exports.conftest import bulk_accepted_items


@pytest.fixture
def worker_env(media, monkeypatch):
    """What the worker process must share with the test: the media folder; small steps so a build takes a while."""
    monkeypatch.setenv("MEDIA_ROOT", str(media))
    monkeypatch.setenv("RELEASE_CHUNK_SIZE", "20")


def files_match_their_hashes(release: Release) -> bool:
    root = services.release_dir(release)
    return all(
        hashlib.sha256((root / entry["name"]).read_bytes()).hexdigest() == entry["sha256"] for entry in release.files
    )


@pytest.mark.worker
def test_a_requested_release_is_built_by_the_worker_with_progress(worker_env, live_worker, project, coordinator):
    bulk_accepted_items(project, 400)

    release = services.release_request(project=project, user=coordinator)  # enqueued at commit (autocommit here)
    seen_progress = set()

    def published() -> bool:
        current = Release.objects.get(pk=release.pk)
        seen_progress.add(current.progress_done)
        return current.status == Release.Status.DONE

    live_worker.wait_for(published, timeout=60, interval=0.02)

    release.refresh_from_db()
    assert (release.counts["lead_qa"], release.attempts) == (400, 1)
    assert files_match_their_hashes(release)
    assert len(seen_progress) > 2, "progress was never seen between start and end"
    assert "exports.release_build" in live_worker.log()


@pytest.mark.worker
def test_a_worker_killed_mid_build_publishes_nothing_and_the_release_can_be_built_again(
    worker_env,
    live_worker,
    project,
    coordinator,
    settings,
):
    bulk_accepted_items(project, 6000)
    release = services.release_request(project=project, user=coordinator)
    live_worker.wait_for(lambda: Release.objects.get(pk=release.pk).progress_done > 200, timeout=60, interval=0.02)

    os.kill(live_worker.process.pid, signal.SIGKILL)
    live_worker.process.wait(timeout=10)

    release.refresh_from_db()
    assert release.status == Release.Status.RUNNING
    assert release.progress_done < release.progress_total, "the build had finished before the kill"
    assert release.files == []
    assert not services.release_dir(release).exists(), "files were published by a build that never finished"
    building = Path(settings.MEDIA_ROOT) / "releases" / project.slug / ".building"
    assert list(building.glob("v1-*")), "the killed build's temporary files should be where it left them"

    settings.RELEASE_STALE_SECONDS = 1
    time.sleep(1.2)
    assert services.release_expire_stale(project=project) == 1
    release.refresh_from_db()
    assert release.status == Release.Status.FAILED
    assert "No files were published" in release.error
    assert not list(building.glob("v1-*"))

    again = services.release_rebuild(release=release, user=coordinator, enqueue=False)
    rebuilt = services.release_build(release_id=again.pk)
    assert (rebuilt.status, rebuilt.version, rebuilt.counts["lead_qa"]) == (Release.Status.DONE, 1, 6000)
    assert files_match_their_hashes(rebuilt)


@pytest.mark.django_db(transaction=True)
def test_requests_at_the_same_moment_produce_one_build(project, coordinator):
    bulk_accepted_items(project, 10)
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def request() -> None:
        try:
            barrier.wait()
            services.release_request(project=project, user=coordinator, enqueue=False)
            outcomes.append("requested")
        except InvalidState:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=request) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes) == ["refused"] * 5 + ["requested"]
    assert Release.objects.filter(project=project).count() == 1


@pytest.mark.worker
def test_the_worker_runs_at_a_lower_priority_than_the_web_processes(live_worker):
    """Builds, imports and reports give the CPU to annotators' requests (WORKER_NICE, 10 by default)."""
    live_worker.wait_for(lambda: "ready" in live_worker.log())
    web = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, live_worker.process.pid) == min(19, web + 10)
