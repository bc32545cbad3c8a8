"""Celery tasks of the annotation app: thin wrappers that take ids and call services.

Status, progress and errors live in the import-job rows, not in Celery's result backend. The service claims
its row with a conditional update, so a duplicate delivery does nothing. A database outage mid-job sends the
task again for when the job's heartbeat has gone stale (common/jobs.py). The collection task is `wikiqa.tasks`.
"""

from __future__ import annotations

from celery import shared_task

from annotation import ingest
from common.jobs import retry_when_the_database_returns


@shared_task(
    name="annotation.import_job_run", ignore_result=True, **retry_when_the_database_returns("JOB_STALE_SECONDS")
)
def import_job_run(job_id: int) -> None:
    ingest.import_job_run(job_id=job_id)
