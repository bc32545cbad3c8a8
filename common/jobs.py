"""The one job mechanism: every background job (collection, import, release build, agreement report, project
archive) is a row of a `Job` model, and this module holds its statuses, claim, heartbeat, finish and fail.

A worker claims a row with a conditional update (`job_claim`): a pending row, or a running one whose heartbeat
is older than its job type's stale time (the worker that held it was killed). The claim writes a fresh owner
token; every later write of that run (`JobRun.beat`, `finish`, `fail`) is conditional on it, so a run that was
presumed dead and taken over finds its writes refused (`JobLost`) and stops. Work a job has committed stays; a
takeover continues or starts again (see each app's job body).

Each app registers its job types in its `AppConfig.ready()` (`job_type_register`: model, task, stale setting);
`common.enqueue.requeue_pending` and the worker's start read the registry and import no app.

Without a broker (the embedded default) a job's task runs on a background thread of the web process
(`job_thread_start`, setting JOBS_IN_THREADS), the stand-in for a worker: the request that started it answers at
once and the job's page polls its progress, as it does with a worker.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, ClassVar

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, connections, models, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

# A job task whose database went away (a PostgreSQL restart) tries again this often before giving up.
DATABASE_RETRIES = 12


class JobStatus(models.TextChoices):
    PENDING = "pending", "Waiting for a worker"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"  # stopped on request (a collection: it can be resumed)
    REFUSED = "refused", "Refused (nothing changed)"  # the input was refused as a whole (an import)


ACTIVE = (JobStatus.PENDING, JobStatus.RUNNING)


class Job(models.Model):
    """What every job row holds. A job type may name a status in its own words (`STATUS_WORDS`)."""

    Status = JobStatus
    ACTIVE = ACTIVE
    STATUS_WORDS: ClassVar[dict[str, str]] = {}

    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Runs that claimed the job.")
    progress_done = models.PositiveBigIntegerField(default=0)
    progress_total = models.PositiveBigIntegerField(default=0)
    stage = models.CharField(max_length=200, blank=True, help_text="What the worker is doing now.")
    error = models.TextField(blank=True)
    owner = models.CharField(max_length=32, blank=True, help_text="The worker run that holds the job.")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life from the worker.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE

    @property
    def is_done(self) -> bool:
        return self.status == JobStatus.DONE

    @property
    def status_words(self) -> str:
        return self.STATUS_WORDS.get(self.status) or JobStatus(self.status).label

    @property
    def percent(self) -> int:
        if self.status == JobStatus.DONE:
            return 100
        if not self.progress_total:
            return 0
        return min(99, int(100 * self.progress_done / self.progress_total))


# The registry of job types


@dataclass(frozen=True)
class JobType:
    name: str
    model: type[Job]
    task: str  # dotted path of the Celery task that takes the row's id
    stale_setting: str  # a running row silent this many seconds has lost its worker
    rows: dict[str, Any] = field(default_factory=dict)  # which rows of the model are this type's (archive kind)

    @property
    def stale_seconds(self) -> float:
        return float(getattr(settings, self.stale_setting))

    def send(self, pk: int, **options: Any) -> bool:
        if settings.JOBS_IN_THREADS:
            job_thread_start(self.task, pk)  # a countdown is not waited for, as with eager tasks
            return True
        from common.enqueue import enqueue

        return enqueue(import_string(self.task), pk, **options)


JOB_TYPES: dict[str, JobType] = {}


def job_type_register(name: str, *, model: type[Job], task: str, stale_setting: str, **rows: Any) -> None:
    """Called from an app's `AppConfig.ready()`; `rows` filters the model's rows of this type (kind="export")."""
    JOB_TYPES[name] = JobType(name, model, task, stale_setting, rows)


def job_enqueue(name: str, pk: int, **options: Any) -> None:
    """Send row `pk` of job type `name` to a worker once the current transaction commits (at once outside one).

    Services enqueue through here, by the name they registered, and never import their task modules."""
    job_type = JOB_TYPES[name]
    transaction.on_commit(lambda: job_type.send(pk, **options))


def stale_seconds(model: type[Job]) -> float:
    """The stale time of a model's jobs (every type of one model shares its setting)."""
    for job_type in JOB_TYPES.values():
        if job_type.model is model:
            return job_type.stale_seconds
    raise LookupError(f"{model.__name__} is not a registered job model")


def stale_cutoff(model: type[Job]) -> datetime:
    """A running job whose heartbeat is older than this has lost its worker."""
    return timezone.now() - timedelta(seconds=stale_seconds(model))


def stalled(model: type[Job]) -> Q:
    return Q(status=JobStatus.RUNNING, heartbeat_at__lt=stale_cutoff(model))


# Job threads: the embedded default's worker

_waiting: queue.SimpleQueue[tuple[str, int]] = queue.SimpleQueue()
_threads: list[threading.Thread] = []
_threads_lock = threading.Lock()


def job_thread_start(task: str, pk: int) -> None:
    """Run task `task` (a dotted path) on row `pk` on a background thread of this process, at most JOB_THREADS
    jobs at once (the others wait their turn).

    The threads are daemons: stopping the server does not wait for its jobs. A job cut short is left as a killed
    worker leaves it (running until its heartbeat goes stale; a collection can then be resumed), and one that had
    not started stays pending until the server starts again (`config/wsgi.py` sends pending jobs again).
    """
    _waiting.put((task, pk))
    with _threads_lock:
        _threads[:] = [thread for thread in _threads if thread.is_alive()]
        if len(_threads) < settings.JOB_THREADS:
            thread = threading.Thread(target=_run_jobs, name=f"job-thread-{len(_threads) + 1}", daemon=True)
            thread.start()
            _threads.append(thread)


def _run_jobs() -> None:
    while True:
        task, pk = _waiting.get()
        try:
            import_string(task).apply(args=(pk,), throw=True)
        except Exception:  # the job's row says what failed (its service marks it); the log keeps the trace
            logger.exception("Job %s(%s) failed on its thread", task, pk)
        finally:
            connections.close_all()  # this thread's connection: the next job opens a fresh one


# Claim, heartbeat, finish, fail


class JobLost(Exception):
    """Another run took the job over (this one was presumed dead), or it was cancelled: stop, write nothing."""


@dataclass
class JobRun:
    """One run's hold on a claimed job row; every write is conditional on the run still holding it."""

    model: type[Job]
    pk: int
    owner: str
    attempt: int
    every: float = 0.0  # seconds between heartbeats written; `beat` calls in between write nothing
    _last: float = 0.0
    _aside: ThreadPoolExecutor | None = None

    def rows(self) -> models.QuerySet[Any]:
        return self.model._default_manager.filter(pk=self.pk, status=JobStatus.RUNNING, owner=self.owner)

    def _update(self, values: dict[str, Any]) -> int:
        if self._aside is None:
            return self.rows().update(**values)
        try:
            return self._aside.submit(lambda: self.rows().update(**values)).result()
        except DatabaseError:  # progress is a nicety: a blocked or failed write never stops the work
            logger.warning("%s %s: heartbeat not written", self.model.__name__, self.pk, exc_info=True)
            return 1

    def beat(self, *, force: bool = False, **progress: Any) -> None:
        """A sign of life with the progress so far (progress_done, progress_total, stage, ...); JobLost if the
        run no longer holds the job."""
        moment = time.monotonic()
        if not force and moment - self._last < self.every:
            return
        self._last = moment
        if "stage" in progress:
            progress["stage"] = progress["stage"][:200]
        if not self._update({"heartbeat_at": timezone.now(), **progress}):
            raise JobLost

    def finish(self, *, status: str = JobStatus.DONE, **fields: Any) -> None:
        """End the run (done, or another finished status) with its results; JobLost if it no longer holds it."""
        now = timezone.now()
        if not self.rows().update(status=status, finished_at=now, heartbeat_at=now, **fields):
            raise JobLost

    def fail(self, error: BaseException | str, **fields: Any) -> bool:
        """Mark the job failed with a readable error; False if the run no longer held it."""
        if isinstance(error, BaseException):
            error = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        now = timezone.now()
        return bool(self.rows().update(status=JobStatus.FAILED, error=str(error), finished_at=now, **fields))

    @contextmanager
    def aside(self, enabled: bool | None = None) -> Iterator[None]:
        """Heartbeats through a connection of their own while the job's work runs in one long transaction,
        whose writes nobody sees before it commits (and a cancel must be able to stop it meanwhile).

        By default on PostgreSQL when no transaction is open yet (a caller's transaction may hold the row: tests,
        eager tasks). SQLite allows one writer: beside a write transaction the heartbeat waits for its commit,
        so a job that only reads in its transaction (a release build) passes `enabled=True` itself.
        """
        if enabled is None:
            enabled = connection.vendor == "postgresql" and not connection.in_atomic_block
        if not enabled:
            yield
            return
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{self.model.__name__}-{self.pk}-heartbeat")
        if connection.vendor == "postgresql":  # never wait long for a row the job's own transaction holds
            pool.submit(_set_lock_timeout).result()
        self._aside = pool
        try:
            yield
        finally:
            self._aside = None
            pool.submit(lambda: connection.close()).result()  # the thread's own connection (looked up there)
            pool.shutdown()


def _set_lock_timeout() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '2s'")


def job_claim(model: type[Job], pk: int, *, every: float = 0.0, **changes: Any) -> JobRun | None:
    """Claim a pending job, or a running one whose worker stopped beating; None if another run holds it (or it
    has finished). `changes` are written with the claim (progress reset, a kind filter goes in `rows`)."""
    rows = changes.pop("rows", {})
    now = timezone.now()
    owner = uuid.uuid4().hex
    values: dict[str, Any] = {"started_at": now, "error": "", **changes}
    claimed = model._default_manager.filter(Q(status=JobStatus.PENDING) | stalled(model), pk=pk, **rows).update(
        status=JobStatus.RUNNING, owner=owner, heartbeat_at=now, attempts=F("attempts") + 1, **values
    )
    if not claimed:
        return None
    attempt = model._default_manager.values_list("attempts", flat=True).get(pk=pk)
    return JobRun(model, pk, owner, attempt, every=every)


def job_expire_stale(model: type[Job], error: str, **rows: Any) -> list[int]:
    """Mark running jobs whose worker is lost as failed (so a new one may be asked for); the ids marked."""
    expired = []
    for pk, heartbeat in model._default_manager.filter(stalled(model), **rows).values_list("pk", "heartbeat_at"):
        if model._default_manager.filter(pk=pk, status=JobStatus.RUNNING, heartbeat_at=heartbeat).update(
            status=JobStatus.FAILED, error=error, finished_at=timezone.now()
        ):
            expired.append(pk)
    return expired


# Test hooks and task options


def pause_between_steps() -> None:
    """Tests only: wait JOB_STEP_DELAY seconds (0, no wait, in production) so a fault test can kill a job mid-way."""
    delay = float(getattr(settings, "JOB_STEP_DELAY", 0) or 0)
    if delay > 0:
        time.sleep(delay)


def retry_when_the_database_returns(stale_setting: str) -> dict[str, Any]:
    """Celery options for a job's task: when the database goes away mid-job, send the task again for later.

    The job's row cannot even be marked failed then, so it stays running with a heartbeat that goes stale;
    the retry comes a little after that (`stale_setting` + 5 s), when the service takes the job over.
    """
    return {
        "autoretry_for": (OperationalError, InterfaceError),
        "max_retries": DATABASE_RETRIES,
        "default_retry_delay": int(getattr(settings, stale_setting)) + 5,
    }
