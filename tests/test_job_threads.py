"""The embedded default's stand-in for a worker: with no broker, a job runs on a background thread of the web
process once the transaction that asked for it commits, a bounded number at once (common/jobs.py)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from django.db import transaction

from common import jobs
from common.enqueue import requeue_on_server_start
from tests import factories
from wikiqa.models import Collection

TASK = f"{__name__}.TASK_OBJECT"


class FakeTask:
    """Stands in for a job's Celery task (the threads call its `apply`): records each run on which thread; a row
    in `held` waits until the test lets it go; row 13 fails."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.threads: dict[int, str] = {}
        self.done: dict[int, threading.Event] = {}
        self.held: dict[int, threading.Event] = {}
        self.running = self.most_at_once = 0

    def finished(self, pk: int) -> threading.Event:
        with self.lock:
            return self.done.setdefault(pk, threading.Event())

    def apply(self, args: tuple[int], throw: bool) -> None:
        (pk,) = args
        with self.lock:
            self.threads[pk] = threading.current_thread().name
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        try:
            if pk in self.held:
                self.held[pk].wait(10)
            if pk == 13:
                raise RuntimeError("row 13 failed")
        finally:
            with self.lock:
                self.running -= 1
            self.finished(pk).set()


TASK_OBJECT = FakeTask()


def wait_for(condition: Callable[[], bool], seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within 5 s"
        time.sleep(0.01)


@pytest.fixture
def task(settings, monkeypatch) -> Iterator[FakeTask]:
    """Job threads on, two at most, and a job type whose task is a fresh FakeTask."""
    settings.JOBS_IN_THREADS = True
    settings.JOB_THREADS = 2
    fake = FakeTask()
    monkeypatch.setattr(f"{__name__}.TASK_OBJECT", fake)
    monkeypatch.setitem(
        jobs.JOB_TYPES, "thread_test", jobs.JobType("thread_test", Collection, TASK, "JOB_STALE_SECONDS")
    )
    yield fake
    for event in fake.held.values():
        event.set()


def test_the_tests_run_jobs_inside_the_request_unless_a_test_turns_the_threads_on(settings):
    assert settings.JOBS_IN_THREADS is False


@pytest.mark.django_db(transaction=True)
def test_a_job_starts_on_a_background_thread_after_the_commit_and_the_caller_does_not_wait_for_it(task):
    task.held[1] = threading.Event()

    started = time.monotonic()
    with transaction.atomic():
        jobs.job_enqueue("thread_test", 1)
        time.sleep(0.2)
        assert 1 not in task.threads  # nothing runs before the row it reads is committed
    returned = time.monotonic() - started

    assert returned < 1  # the job is still held: the caller did not wait for it
    assert not task.finished(1).is_set()
    task.held[1].set()
    assert task.finished(1).wait(5)
    assert task.threads[1].startswith("job-thread-") and task.threads[1] != threading.current_thread().name


@pytest.mark.django_db(transaction=True)
def test_at_most_job_threads_jobs_run_at_once_and_the_others_wait_their_turn(task):
    for pk in (1, 2, 3):
        task.held[pk] = threading.Event()
        jobs.job_enqueue("thread_test", pk)

    wait_for(lambda: len(task.threads) == 2)
    time.sleep(0.2)
    assert len(task.threads) == 2 and task.running == 2  # the third waits for a thread
    first = min(task.threads)
    task.held[first].set()
    wait_for(lambda: len(task.threads) == 3)  # a thread is free: the third starts
    for event in task.held.values():
        event.set()

    assert all(task.finished(pk).wait(5) for pk in (1, 2, 3))
    assert task.most_at_once == 2


@pytest.mark.django_db(transaction=True)
def test_a_job_that_fails_is_logged_and_the_thread_takes_the_next_one(task, caplog):
    with caplog.at_level(logging.ERROR, logger="common.jobs"):
        jobs.job_enqueue("thread_test", 13)
        jobs.job_enqueue("thread_test", 14)
        assert task.finished(13).wait(5) and task.finished(14).wait(5)
        wait_for(lambda: "failed on its thread" in caplog.text)

    assert f"Job {TASK}(13) failed on its thread" in caplog.text and "row 13 failed" in caplog.text
    assert 14 in task.threads


@pytest.mark.django_db(transaction=True)
def test_when_the_server_starts_the_jobs_left_waiting_start_on_its_threads(task, monkeypatch, coordinator):
    monkeypatch.setattr(jobs, "JOB_TYPES", {"thread_test": jobs.JOB_TYPES["thread_test"]})
    project = factories.project(coordinator, local_language="bar", standard_language="deu")
    waiting = Collection.objects.create(project=project, local_wiki="bar", standard_wiki="de")
    finished = Collection.objects.create(project=project, local_wiki="bar", standard_wiki="de", status="done")

    requeue_on_server_start()

    assert task.finished(waiting.pk).wait(5)
    assert finished.pk not in task.threads
