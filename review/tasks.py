"""Celery tasks of the review app: they take ids and call services.

No automatic retry (but for a database outage, common/jobs.py): a failed report
is recorded on its row (status and error) for someone to compute again. A worker killed mid-report leaves the message
unacknowledged (acks_late), so it comes back; the service takes the report
over only once its heartbeat has gone stale, and a second delivery of a
finished report finds nothing to claim.
"""

from celery import shared_task

from common.jobs import retry_when_the_database_returns
from review import reports


@shared_task(name="review.agreement_report_compute", **retry_when_the_database_returns("AGREEMENT_STALE_SECONDS"))
def agreement_report_task(report_id: int) -> None:
    reports.agreement_report_compute(report_id=report_id)
