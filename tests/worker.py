"""A real Celery worker for integration tests (`@pytest.mark.worker`).

The `live_worker` fixture starts `celery -A config worker` as a subprocess
against Redis and the test database pytest-django created, on a queue of its
own, and points this process's Celery app at that queue with eager execution
off. Tests using it need committed data the worker can see, so the fixture
requires `transactional_db`.

    @pytest.mark.worker
    def test_collection_runs_on_the_worker(live_worker, project):
        ...  # enqueue with transaction.on_commit / .delay()
        live_worker.wait_for(lambda: Collection.objects.get(pk=pk).status == "done")

`start_server` starts gunicorn servers the same way (same database, Redis and queue as the workers), for tests
that send real HTTP requests to several app servers at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from config.celery import app as celery_app

READY_TIMEOUT = 30.0
# For the worker that takes a killed job over: no pause between steps, so the test waits only for the real work.
NO_PAUSE = {"JOB_STEP_DELAY": "0"}
PROJECT_DIR = Path(__file__).resolve().parent.parent


def _database_url() -> str:
    """The test database, as a DATABASE_URL another process (a worker, a server) can open."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or "5432"
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


@dataclass
class LiveWorker:
    queue: str
    log_path: Path
    process: subprocess.Popen

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, condition: Callable[[], bool], *, timeout: float = 30.0, interval: float = 0.1) -> None:
        """Poll `condition` until it is true; fail with the worker's log if it never is."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            if self.process.poll() is not None:
                pytest.fail(f"The Celery worker exited with {self.process.returncode}:\n{self.log()[-4000:]}")
            time.sleep(interval)
        pytest.fail(f"Condition not met within {timeout} s. Worker log:\n{self.log()[-4000:]}")

    def kill(self) -> None:
        """SIGKILL the worker's whole process group, as the kernel's OOM killer or a pulled plug would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def terminate(self) -> None:
        """Ask it to stop (a warm shutdown), without waiting: `stop()` waits."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        self.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()


@pytest.fixture
def live_worker_env() -> dict[str, str]:
    """Extra environment for the worker process; override this fixture in a test module to add some."""
    return {}


@pytest.fixture
def start_worker(transactional_db, tmp_path, live_worker_env) -> Iterator[Callable[..., LiveWorker]]:
    """Start workers on one queue of this test's own (a second one after killing the first, say); all are
    stopped at the end. This process's Celery app sends to that queue, not eagerly."""
    if not settings.CELERY_BROKER_URL:
        pytest.skip("No broker: set REDIS_URL to run worker tests.")
    queue = f"test-{uuid.uuid4().hex[:12]}"
    base_env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "CELERY_QUEUE": queue,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        **live_worker_env,
    }
    workers: list[LiveWorker] = []
    logs = []

    def start(*, wait_ready: bool = True, env: dict[str, str] | None = None) -> LiveWorker:
        """`env` adds to (or overrides) the fixture's environment for this worker only."""
        log_path = tmp_path / f"worker-{len(workers) + 1}.log"
        log = log_path.open("wb")
        logs.append(log)
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.celery_worker",  # `celery`, less the interpreter's teardown after the warm shutdown
                "-A",
                "config",
                "worker",
                "--pool=solo",
                "--concurrency=1",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel=INFO",
                f"--queues={queue}",
                f"--hostname={queue}-{len(workers) + 1}@%h",
            ],
            cwd=PROJECT_DIR,
            env={**base_env, **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a test can kill all of it
        )
        worker = LiveWorker(queue=queue, log_path=log_path, process=process)
        workers.append(worker)
        if wait_ready:
            worker.wait_for(lambda: " ready." in worker.log(), timeout=READY_TIMEOUT)
        return worker

    saved = {
        "task_always_eager": celery_app.conf.task_always_eager,
        "task_default_queue": celery_app.conf.task_default_queue,
    }
    celery_app.conf.task_always_eager = False
    celery_app.conf.task_default_queue = queue
    try:
        yield start
    finally:
        celery_app.conf.update(saved)
        for worker in workers:  # all asked at once, then waited for: their shutdowns overlap
            worker.terminate()
        for worker in workers:
            worker.stop()
        for log in logs:
            log.close()


@pytest.fixture
def live_worker(start_worker) -> LiveWorker:
    return start_worker()


@dataclass
class LiveServer:
    url: str
    log_path: Path
    process: subprocess.Popen

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self, timeout: float = 2 * READY_TIMEOUT) -> None:
        """Wait until the sign-in page answers; fail with the server's log if it never does. (Longer than a
        worker's wait: gunicorn imports every view and template before it answers, and tests start several at once
        on a busy machine; 30 s was seen not to be enough there.)"""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"gunicorn exited with {self.process.returncode}:\n{self.log()[-4000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/accounts/login/", timeout=5) as response:  # noqa: S310
                    if response.status == 200:
                        return
            except (OSError, urllib.error.HTTPError):
                pass
            time.sleep(0.1)
        pytest.fail(f"gunicorn did not answer within {timeout} s:\n{self.log()[-4000:]}")

    def terminate(self) -> None:
        """Ask gunicorn to stop (its workers finish their requests), without waiting: `stop()` waits."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)

    def stop(self) -> None:
        self.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


@pytest.fixture
def start_server(start_worker, tmp_path, live_worker_env) -> Iterator[Callable[..., LiveServer]]:
    """Start gunicorn servers on 127.0.0.1 (a free port each) against the test database, Redis and the queue the
    `start_worker` workers take tasks from, with the workers' environment; all are stopped at the end.
    `start(wait_ready=False)` returns at once (several servers then start side by side: `server.wait_ready()`)."""
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "CELERY_QUEUE": celery_app.conf.task_default_queue,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "ALLOWED_HOSTS": "127.0.0.1",
        **live_worker_env,
    }
    servers: list[LiveServer] = []
    logs = []

    def start(*, workers: int = 2, threads: int = 2, wait_ready: bool = True) -> LiveServer:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        log_path = tmp_path / f"server-{len(servers) + 1}.log"
        log = log_path.open("wb")
        logs.append(log)
        process = subprocess.Popen(
            [str(Path(sys.executable).with_name("gunicorn")), "config.wsgi:application", "--bind",
             f"127.0.0.1:{port}", "--workers", str(workers), "--threads", str(threads), "--preload",
             "--timeout", "30", "--graceful-timeout", "5"],
            cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        server = LiveServer(url=f"http://127.0.0.1:{port}", log_path=log_path, process=process)
        servers.append(server)
        if wait_ready:
            server.wait_ready()
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.stop()
        for log in logs:
            log.close()
