"""Celery tasks of the Wikipedia QA kind: thin wrappers that take ids and call services.

The task keeps the name it had in `annotation` (`annotation.collection_run`), so a collection queued before the
move still finds it. Status, progress and errors live in the collection's row; the service claims it with a
conditional update, so a duplicate delivery does nothing (common/jobs.py).
"""

from __future__ import annotations

from celery import shared_task

from common.jobs import retry_when_the_database_returns
from wikiqa import collect


@shared_task(
    name="annotation.collection_run", ignore_result=True, **retry_when_the_database_returns("JOB_STALE_SECONDS")
)
def collection_run(collection_id: int) -> None:
    collect.collection_run(collection_id=collection_id)
