"""A build reads one snapshot: what changes while it runs (deletes, rejections, edits) never fails it,
and the release is the project as it was when the build began reading.

The changes are made by another thread (another connection, as another person would), between two
chunks of the build; the build runs outside a test transaction, as a worker runs it.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from django.db import connection

from annotation.models import PagePair, QAItem
from annotation.services.deletion import pair_delete
from exports import services
from exports.models import Release
from tests.exports.conftest import authored_pair


def _elsewhere(work) -> None:
    """Run `work` on another thread with its own connection, committed when it returns."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as error:  # re-raised in the test
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


def _lines(release: Release, name: str) -> list[dict]:
    path = Path(services.release_file_path(release, name))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def five_pairs(project, annotator):
    for n in range(5):
        authored_pair(project, annotator, local_title=f"茶餐廳 {n}")
    return project


def _build_changing(project, coordinator, monkeypatch, change):
    """Build with chunks of 2 items; `change` runs elsewhere once, after the first chunk."""
    from django.conf import settings

    settings.RELEASE_CHUNK_SIZE = 2
    done: list[int] = []

    def hook(items_done: int) -> None:
        if not done:
            done.append(items_done)
            _elsewhere(change)

    monkeypatch.setattr(services, "build_step_hook", hook)
    release = services.release_build_now(project=project, user=coordinator, seed=3)
    assert done, "the build never reached a second chunk"
    return release


@pytest.mark.django_db(transaction=True)
def test_a_pair_deleted_while_the_build_runs_is_in_the_release_and_the_build_succeeds(
    five_pairs, coordinator, monkeypatch
):
    pairs = list(PagePair.objects.filter(project=five_pairs).order_by("-id"))
    last = pairs[0]  # its items come in the last chunk, after the change

    release = _build_changing(five_pairs, coordinator, monkeypatch, lambda: pair_delete(pair=last, user=coordinator))

    assert release.status == Release.Status.DONE, release.error
    assert release.counts["lead_qa"] == 10
    assert f"{five_pairs.slug}-p{last.pk}" in {line["pair_id"] for line in _lines(release, "lead_qa.jsonl")}
    assert PagePair.all_objects.get(pk=last.pk).deleted_at is not None  # the delete itself went through
    again = services.release_build_now(project=five_pairs, user=coordinator, seed=3)
    assert again.counts["lead_qa"] == 8  # the next release has the deletion


@pytest.mark.django_db(transaction=True)
def test_items_rejected_and_edited_while_the_build_runs_are_released_as_they_were(five_pairs, coordinator, monkeypatch):
    last_items = list(QAItem.objects.filter(project=five_pairs).order_by("-pair_id", "-id")[:2])
    rejected, edited = last_items
    question = edited.question

    def change() -> None:
        QAItem.objects.filter(pk=rejected.pk).update(status=QAItem.Status.REJECTED)
        QAItem.objects.filter(pk=edited.pk).update(question="改过的问题？", version=edited.version + 1)

    release = _build_changing(five_pairs, coordinator, monkeypatch, change)

    assert release.status == Release.Status.DONE, release.error
    lines = {line["id"]: line for line in _lines(release, "lead_qa.jsonl")}
    assert len(lines) == 10
    assert lines[f"{five_pairs.slug}-q{rejected.pk}"]["review_outcome"] == "accepted"
    assert lines[f"{five_pairs.slug}-q{edited.pk}"]["question"] == question
    pairs = {line["id"]: line for line in _lines(release, "page_pairs.jsonl")}
    assert pairs[f"{five_pairs.slug}-p{rejected.pair_id}"]["lead_qas"] == 2  # pairs read in the same snapshot
    manifest = json.loads(Path(services.release_file_path(release, "manifest.json")).read_text())
    assert manifest["statistics"]["lead_qas"] == 10  # and so are the figures


@pytest.mark.django_db(transaction=True)
def test_a_build_cancelled_from_elsewhere_stops_although_it_reads_a_snapshot(five_pairs, coordinator, monkeypatch):
    def cancel() -> None:
        building = Release.objects.get(project=five_pairs, status=Release.Status.RUNNING)
        services.release_cancel(release=building, user=coordinator)

    release = _build_changing(five_pairs, coordinator, monkeypatch, cancel)

    assert release.status == Release.Status.FAILED
    assert release.error.startswith("Cancelled by")
    assert not release.files
