"""Sending tasks to the broker without letting a broker outage break a request or lose work.

Every background job is a row first (pending in its own table: a collection, an import job, a release, an
agreement report); the message only says "run row N". Services send it through `common.jobs.job_enqueue`
once the row is committed, by the job type's registered name; `enqueue` sends it and, when the broker cannot
be reached, logs it and leaves the row pending instead of raising: the annotator's or coordinator's request
succeeds and nothing is lost. `requeue_pending` sends every pending row again; the worker runs it when it
starts (`worker_ready`, config/celery.py), so work queued while Redis was down starts once Redis and the
worker are back; it also sends running rows again, for a takeover once their heartbeat has gone stale
(common/jobs.py). A duplicate message is harmless: each service claims its row with a conditional update,
so only one delivery does the work.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError, connections
from django.utils import timezone
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)


def enqueue(task: Any, *args: Any, **options: Any) -> bool:
    """Send now; False (and a warning) when the broker is unreachable, the job's row staying pending."""
    try:
        if options:
            task.apply_async(args, **options)
        else:
            task.delay(*args)
    except (OperationalError, RedisError, OSError) as error:  # OSError: refused, reset, or timed out (a hung Redis)
        logger.warning("Broker unreachable: %s%r stays pending in its table (%s)", task.name, args, error)
        return False
    return True


def requeue_pending() -> int:
    """Send a message for every job row still waiting for a worker, and for every running one whose worker
    may be dead; the number sent. The job types come from the registry (common/jobs.py).

    A running job is sent with a countdown that ends when its heartbeat would go stale: a worker killed a
    moment ago (and restarted by its supervisor) is taken over as soon as it counts as lost, and a job whose
    worker is alive and well refuses the message (its heartbeat is fresh). Without this, a killed worker's
    message would come back only after the broker's visibility timeout (an hour).
    """
    from common.jobs import JOB_TYPES, JobStatus

    sent = resent = 0
    now = timezone.now()
    for job_type in JOB_TYPES.values():
        rows = job_type.model._default_manager.filter(**job_type.rows)
        for pk in rows.filter(status=JobStatus.PENDING).values_list("pk", flat=True):
            sent += job_type.send(pk)
        stale = job_type.stale_seconds
        for pk, heartbeat in rows.filter(status=JobStatus.RUNNING).values_list("pk", "heartbeat_at"):
            silent = (now - heartbeat).total_seconds() if heartbeat else stale
            resent += job_type.send(pk, countdown=max(0.0, stale - silent) + 1.0)
    if sent:
        logger.info("Requeued %d pending job(s)", sent)
    if resent:
        logger.info("Sent %d running job(s) again, to be taken over if their worker is lost", resent)
    return sent + resent


def requeue_on_server_start() -> None:
    """Without a broker the web process runs the jobs on its own threads (common/jobs.py); when it starts, the jobs
    left waiting when it last stopped start again, as they do when a worker starts (config/celery.py)."""
    try:
        requeue_pending()
    except DatabaseError:  # not migrated yet, or the database is down: the server starts all the same
        logger.warning("Pending jobs not requeued at start", exc_info=True)
    finally:
        connections.close_all()
