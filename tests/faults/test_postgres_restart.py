"""PostgreSQL restarts while the app runs: requests fail cleanly (a 503 that says why) and succeed afterwards
without restarting the app; a job the restart interrupted is finished by the same worker afterwards.

The app is a real gunicorn process and a real Celery worker on a throwaway PostgreSQL cluster
(tests/faults/conftest.py), run as in production (DEBUG off, persistent connections). Every wait is bounded
and the processes are killed at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

from config.celery import app as celery_app
from tests.faults.conftest import free_port

pytestmark = [
    pytest.mark.faults,
    pytest.mark.timeout(120),
    pytest.mark.postgresql(reason="it restarts a PostgreSQL cluster of its own, whatever the engine under test"),
]

PROJECT_DIR = Path(__file__).resolve().parents[2]
REQUEST_TIMEOUT = 10

SETUP = """
import django
django.setup()
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.core.management import call_command
from accounts.tokens import api_token_create
call_command("migrate", verbosity=0)
user = get_user_model().objects.create_user("restart", password="a long enough password 1")
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(api_token_create(user=user)[1], session.session_key)
"""


def fetch(url: str, headers: dict[str, str]) -> tuple[int, str, float]:
    """(status, body, seconds taken); never waits longer than REQUEST_TIMEOUT."""
    started = time.monotonic()
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - our own server
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:  # noqa: S310 - our own server
            return response.status, response.read().decode(), time.monotonic() - started
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), time.monotonic() - started


def test_requests_fail_cleanly_while_postgres_is_down_and_work_again_without_restarting_the_app(
    throwaway_postgres, tmp_path
):
    env = {
        **os.environ,
        "DATABASE_URL": throwaway_postgres.url(),
        "DEBUG": "false",
        "SECRET_KEY": "fault-test-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "STATIC_MANIFEST": "false",
        "CONN_MAX_AGE": "60",  # persistent connections: the harder case, they die with the restart
        "REDIS_URL": "",
        "CACHE_URL": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    setup = subprocess.run(
        [sys.executable, "-c", SETUP], cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=120
    )
    assert setup.returncode == 0, setup.stderr[-3000:]
    token, session = setup.stdout.split()
    port = free_port()
    log = (tmp_path / "gunicorn.log").open("wb")
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "config.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--threads", "2", "--timeout", "30", "--graceful-timeout", "5"],
        cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    api = (f"{base}/api/projects/", {"Authorization": f"Token {token}", "Accept": "application/json"})
    page = (f"{base}/", {"Cookie": f"sessionid={session}"})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if fetch(f"{base}/accounts/login/", {})[0] == 200:
                    break
            except OSError:
                pass
            assert server.poll() is None, (tmp_path / "gunicorn.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "gunicorn did not answer within 30 s"
            time.sleep(0.2)
        pid = server.pid

        status, body, _ = fetch(*api)
        assert status == 200, body
        assert json.loads(body)["count"] == 0
        status, body, _ = fetch(*page)
        assert status == 200, body

        throwaway_postgres.stop("fast")

        status, body, seconds = fetch(*api)
        assert status == 503, body
        assert json.loads(body)["code"] == "database_unavailable"
        assert "database cannot be reached" in json.loads(body)["detail"]
        assert seconds < 5
        status, body, seconds = fetch(*page)
        assert status == 503, body
        assert "database cannot be reached" in body and "Traceback" not in body
        assert seconds < 5

        throwaway_postgres.start()

        status, body, _ = fetch(*api)
        assert status == 200, body
        status, body, _ = fetch(*page)
        assert status == 200, body
        assert server.poll() is None and server.pid == pid, "the app was restarted"
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=10)
        log.close()


JOB_SETUP = """
import django
django.setup()
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from annotation import ingest
from tests import factories
call_command("migrate", verbosity=0)
coordinator = factories.user("coordinator")
project = factories.project(coordinator, slug="restart")
rows = "".join(
    '{"local_title": "唐樓 %d", "standard_title": "唐楼 %d", "local_url": "https://zh-yue.wikipedia.org/wiki/T%d", '
    '"standard_url": "https://zh.wikipedia.org/wiki/T%d", "local_lead": "唐樓。", "standard_lead": "唐楼。"}\\n'
    % (n, n, n, n)
    for n in range(1500)
)
job = ingest.import_job_create(
    project=project, user=coordinator, files=[SimpleUploadedFile("pairs.jsonl", rows.encode())]
)
print(job.pk)
"""


def query_one(url: str, sql: str, *args: object) -> tuple:
    with psycopg.connect(url, connect_timeout=3) as connection:
        row = connection.execute(sql, args).fetchone()
    assert row is not None
    return row


@pytest.fixture
def live_worker_env(throwaway_postgres, tmp_path) -> dict[str, str]:
    return {
        "DATABASE_URL": throwaway_postgres.url(),
        "MEDIA_ROOT": str(tmp_path / "media"),
        "JOB_STALE_SECONDS": "1",  # the import's heartbeat comes every half second
        "JOB_STEP_DELAY": "1",  # a second after each batch of 1000 pairs
    }


@pytest.mark.worker
def test_a_job_interrupted_by_a_postgres_restart_is_finished_by_the_same_worker_afterwards(
    throwaway_postgres, start_worker, live_worker_env
):
    env = {
        **os.environ,
        **live_worker_env,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_QUEUE": celery_app.conf.task_default_queue,  # the queue start_worker's workers listen to
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    setup = subprocess.run(
        [sys.executable, "-c", JOB_SETUP], cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=120
    )
    assert setup.returncode == 0, setup.stderr[-3000:]
    job_id = int(setup.stdout.split()[-1])
    url = throwaway_postgres.url()
    job = "SELECT status, records_done FROM annotation_importjob WHERE id = %s"

    worker = start_worker()
    worker.wait_for(lambda: query_one(url, job, job_id)[1] >= 1000, timeout=30, interval=0.1)
    throwaway_postgres.stop("fast")
    worker.wait_for(lambda: "retry: Retry in 6s" in worker.log(), timeout=30)
    throwaway_postgres.start()
    worker.wait_for(lambda: query_one(url, job, job_id)[0] not in ("pending", "running"), timeout=40)

    assert query_one(url, job, job_id)[0] == "done", worker.log()[-3000:]
    pairs = query_one(url, "SELECT count(*) FROM annotation_pagepair WHERE local_title LIKE '唐樓 %%'")[0]
    assert pairs == 1500
    report = query_one(url, "SELECT report FROM annotation_importjob WHERE id = %s", job_id)[0]
    assert (report["created"], report["already_present"]) == (1500, 0)
    assert worker.process.poll() is None, "the worker had to be restarted"
