"""Celery tasks of the validation app: thin wrappers that take ids and call services (validation/search.py).

Status, progress and errors live in the collection's row; the service claims it with a conditional update, so a
duplicate delivery does nothing (common/jobs.py).
"""

from __future__ import annotations

from celery import shared_task

from common.jobs import retry_when_the_database_returns
from validation import search, suggestions


@shared_task(
    name="validation.search_collection_run",
    ignore_result=True,
    **retry_when_the_database_returns("JOB_STALE_SECONDS"),
)
def search_collection_run(collection_id: int) -> None:
    search.search_collection_run(collection_id=collection_id)


@shared_task(
    name="validation.model_job_run",
    ignore_result=True,
    **retry_when_the_database_returns("JOB_STALE_SECONDS"),
)
def model_job_run(job_id: int) -> None:
    suggestions.model_job_run(job_id=job_id)
