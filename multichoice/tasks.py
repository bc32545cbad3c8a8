"""Celery tasks of the multichoice app: thin wrappers that take ids and call services."""

from __future__ import annotations

from celery import shared_task

from common.jobs import retry_when_the_database_returns
from multichoice.services import suggestions


@shared_task(
    name="multichoice.translation_suggestions_run",
    ignore_result=True,
    **retry_when_the_database_returns("JOB_STALE_SECONDS"),
)
def translation_suggestions_run(job_id: int) -> None:
    suggestions.translation_suggestions_run(job_id=job_id)
