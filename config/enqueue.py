"""Sending tasks to the broker without letting a broker outage break a request or lose work.

Every background job is a row first (pending in its own table: a collection, an import job, a release, an
agreement report); the message only says "run row N". `enqueue_on_commit` sends it once the row is committed
and, when the broker cannot be reached, logs it and leaves the row pending instead of raising: the annotator's
or coordinator's request succeeds and nothing is lost. `requeue_pending` sends every pending row again; the
worker runs it when it starts (`worker_ready`, config/celery.py), so work queued while Redis was down starts
once Redis and the worker are back. A duplicate message is harmless: each service claims its row with a
conditional update, so only one delivery does the work.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
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
    except (OperationalError, RedisError, ConnectionError) as error:
        logger.warning("Broker unreachable: %s%r stays pending in its table (%s)", task.name, args, error)
        return False
    return True


def enqueue_on_commit(task: Any, *args: Any, **options: Any) -> None:
    transaction.on_commit(lambda: enqueue(task, *args, **options))


def requeue_pending() -> int:
    """Send a message for every job row still waiting for a worker; the number sent."""
    from annotation import tasks as annotation_tasks
    from annotation.models import Collection, ImportJob
    from exports.models import Release
    from exports.tasks import release_build_task
    from review.models_reports import AgreementReport
    from review.tasks import agreement_report_task

    waiting = [
        (Collection.objects.filter(status=Collection.Status.PENDING), annotation_tasks.collection_run),
        (ImportJob.objects.filter(status=ImportJob.Status.PENDING), annotation_tasks.import_job_run),
        (Release.objects.filter(status=Release.Status.PENDING), release_build_task),
        (AgreementReport.objects.filter(status=AgreementReport.Status.QUEUED), agreement_report_task),
    ]
    sent = 0
    for rows, task in waiting:
        for pk in rows.values_list("pk", flat=True):
            sent += enqueue(task, pk)
    if sent:
        logger.info("Requeued %d pending job(s)", sent)
    return sent
