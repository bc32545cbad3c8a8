"""Redis down: annotators and reviewers keep working, jobs wait in their rows and start when Redis is back.

A Redis of the test's own (tests/faults/conftest.py) is the broker and the cache, as the one Redis is in
production; the shared one is never touched. The cache fails open (django-redis's IGNORE_EXCEPTIONS): API
throttles and login lockouts are off while Redis is down, and requests neither fail nor hang.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from contextlib import contextmanager

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import ImportJob, PagePair, QAItem
from common.enqueue import enqueue
from config.celery import app as celery_app
from tests.conftest import PASSWORD, api_as
from tests.review.conftest import all_pass, complete_item

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

PAIRS = json.dumps(
    {
        "local_title": "唐樓 Minga",
        "standard_title": "唐楼 Minga",
        "local_url": "https://zh-yue.wikipedia.org/wiki/Minga",
        "standard_url": "https://zh.wikipedia.org/wiki/Minga",
        "local_lead": "唐樓係舊式樓宇。",
        "standard_lead": "唐楼。",
    },
    ensure_ascii=False,
).encode()


def _fresh_connections() -> None:
    """Forget pooled broker connections, so the next send connects to the broker now configured."""
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def broker(throwaway_redis, monkeypatch):
    """This process sends tasks to the throwaway Redis (not eagerly); the shared Redis stays the cache."""
    saved = {key: celery_app.conf[key] for key in ("broker_url", "task_always_eager")}
    celery_app.conf.broker_url = throwaway_redis.url
    celery_app.conf.task_always_eager = False
    _fresh_connections()
    yield throwaway_redis
    celery_app.conf.update(saved)
    _fresh_connections()


@pytest.fixture
def cache_on(throwaway_redis, settings):
    """The Django cache on the throwaway Redis too (the settings change resets the cache connections)."""
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "LOCATION": throwaway_redis.url, "KEY_PREFIX": "faults"}
    }
    assert settings.CACHES["default"]["BACKEND"] == "django_redis.cache.RedisCache"
    # axes keeps the cache object it met first; a test's own Redis must be the one it counts in (in production
    # CACHES never changes, so one object serves the process's life).
    from axes.handlers.proxy import AxesProxyHandler

    AxesProxyHandler.get_implementation(force=True)
    yield throwaway_redis
    AxesProxyHandler.implementation = None  # made again on first use, with the next test's cache


@pytest.fixture
def live_worker_env(throwaway_redis, tmp_path) -> dict[str, str]:
    return {"CELERY_BROKER_URL": throwaway_redis.url, "MEDIA_ROOT": str(tmp_path / "media")}


def test_sending_a_task_to_a_broker_that_is_down_fails_fast_and_says_so(broker, caplog):
    from annotation import tasks

    broker.stop()
    started = time.monotonic()

    assert enqueue(tasks.import_job_run, 123) is False

    assert time.monotonic() - started < 5
    assert "stays pending" in caplog.text


@contextmanager
def hung(redis):
    """Redis stops answering (SIGSTOP) while its port still accepts connections, as a hung or swapping one does."""
    os.kill(redis.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(redis.process.pid, signal.SIGCONT)


def _within(seconds: float, call):
    """call() in a thread; its result, or a failure if it is still waiting after `seconds` (as it hung)."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting for the broker after {seconds} s"
    return result[0]


def test_sending_a_task_to_a_hung_broker_fails_fast_and_says_so(broker, caplog):
    from annotation import tasks

    with hung(broker):
        started = time.monotonic()
        sent = _within(15, lambda: enqueue(tasks.import_job_run, 123))
        took = time.monotonic() - started

    assert sent is False
    assert took < 8
    assert "stays pending" in caplog.text


def test_an_import_while_the_broker_hangs_is_queued_for_the_worker_not_a_500(
    transactional_db, broker, project, coordinator, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "media"

    def post():
        # Committed for real (transactional_db): the job is sent once its row is, as in production.
        return api_as(coordinator).post(
            f"/api/projects/{project.slug}/imports/",
            {"files": [SimpleUploadedFile("pairs.jsonl", PAIRS)]},
            format="multipart",
        )

    with hung(broker):
        queued = _within(15, post)

    assert queued.status_code == 202, queued.content
    job = ImportJob.objects.get(pk=queued.data["id"])
    assert job.status == ImportJob.Status.PENDING
    assert job.get_status_display() == "Waiting for a worker"


@pytest.mark.worker
def test_with_redis_down_work_is_saved_jobs_wait_and_start_when_redis_returns(
    request,
    transactional_db,
    broker,
    cache_on,
    project,
    annotating_pair,
    annotator,
    reviewer,
    coordinator,
    settings,
    tmp_path,
):
    settings.MEDIA_ROOT = tmp_path / "media"
    slug = project.slug
    draft = complete_item(annotating_pair, annotator, "深水埗")
    broker.stop()

    # The annotator saves and submits, the reviewer judges: none of it needs the broker.
    as_annotator = api_as(annotator)
    saved = as_annotator.patch(
        f"/api/projects/{slug}/items/{draft.pk}/",
        {"version": draft.version, "question": "离线也能保存吗？"},
        format="json",
    )
    assert saved.status_code == 200, saved.content
    second = as_annotator.post(
        f"/api/projects/{slug}/pairs/{annotating_pair.pk}/items/",
        {"question": "老板姓什么？", "answer_standard": "陈", "answer_local": "陳",
         "spans": [{"start": 30, "end": 34, "text": annotating_pair.local_lead[30:34]}]},
        format="json",
    )  # fmt: skip
    assert second.status_code == 201, second.content
    assert as_annotator.post(f"/api/projects/{slug}/pairs/{annotating_pair.pk}/submit/").status_code == 200
    as_reviewer = api_as(reviewer)
    slot = as_reviewer.post(f"/api/projects/{slug}/review/next/").data
    judged = as_reviewer.post(
        f"/api/projects/{slug}/review/slots/{slot['id']}/",
        {"version": slot["version"], "judgments": all_pass(project)},
        format="json",
    )
    assert judged.status_code == 200, judged.content

    # A coordinator's import is accepted and waits in its row instead of failing the request.
    queued = api_as(coordinator).post(
        f"/api/projects/{slug}/imports/", {"files": [SimpleUploadedFile("pairs.jsonl", PAIRS)]}, format="multipart"
    )
    assert queued.status_code == 202, queued.content
    job = ImportJob.objects.get(pk=queued.data["id"])
    assert job.status == ImportJob.Status.PENDING
    assert QAItem.objects.get(pk=draft.pk).question == "离线也能保存吗？"

    # Redis returns, a worker starts: the pending job is sent again and runs once.
    broker.start()
    worker = request.getfixturevalue("live_worker")
    finished = (ImportJob.Status.DONE, ImportJob.Status.REFUSED, ImportJob.Status.FAILED)
    worker.wait_for(lambda: ImportJob.objects.get(pk=job.pk).status in finished, timeout=60)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE, (job.error, job.report)
    assert PagePair.objects.filter(project=project, local_title="唐樓 Minga").count() == 1
    assert "Requeued 1 pending job" in worker.log()


def test_with_the_cache_down_requests_go_on_without_throttles_and_lockouts_and_do_not_hang(
    cache_on, client, annotating_pair, annotator, caplog
):
    from django.core.cache import cache

    cache.set("probe", 1)
    assert cache.get("probe") == 1  # the cache really is this Redis
    item = complete_item(annotating_pair, annotator, "深水埗")
    cache_on.stop()
    started = time.monotonic()

    saved = api_as(annotator).patch(
        f"/api/projects/{annotating_pair.project.slug}/items/{item.pk}/",
        {"version": item.version, "question": "缓存断了也能保存吗？"},
        format="json",
    )
    wrong = client.post("/accounts/login/", {"username": annotator.username, "password": "wrong"})
    right = client.post("/accounts/login/", {"username": annotator.username, "password": PASSWORD})

    assert saved.status_code == 200, saved.content
    assert QAItem.objects.get(pk=item.pk).question == "缓存断了也能保存吗？"
    assert wrong.status_code == 200 and "correct username and password" in wrong.content.decode()
    assert right.status_code == 302, "logging in must not depend on the cache"
    assert time.monotonic() - started < 5, "requests waited on the unreachable cache"
    assert "Exception ignored" in caplog.text, "the operator is told the cache is unreachable"
    assert cache.get("probe", "missing") == "missing"


def test_when_the_cache_returns_throttles_and_lockouts_count_again(cache_on, client, annotator, settings):
    from django.core.cache import cache

    settings.LOGIN_MAX_FAILURES = 2
    cache_on.stop()
    assert cache.get("anything") is None
    cache_on.start()

    for _ in range(2):
        client.post("/accounts/login/", {"username": annotator.username, "password": "wrong"})
    locked = client.post("/accounts/login/", {"username": annotator.username, "password": PASSWORD})

    assert locked.status_code == 429
