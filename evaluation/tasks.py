"""Celery tasks of the evaluation app: they take ids and call services."""

from celery import shared_task

from common.jobs import retry_when_the_database_returns
from evaluation import judging, local_checks, services


@shared_task(name="evaluation.score", **retry_when_the_database_returns("EVALUATION_STALE_SECONDS"))
def evaluation_run_score_task(run_id: int) -> None:
    services.evaluation_run_score(run_id=run_id)


@shared_task(name="evaluation.judge", **retry_when_the_database_returns("EVALUATION_STALE_SECONDS"))
def judgment_run_task(judgment_id: int) -> None:
    judging.judgment_run(judgment_id=judgment_id)


@shared_task(name="evaluation.local_check", ignore_result=True, **retry_when_the_database_returns("JOB_STALE_SECONDS"))
def local_check_run_task(check_id: int) -> None:
    local_checks.local_check_run(check_id=check_id)
