"""Celery tasks of the exports app: they take ids and call services.

No automatic retry (but for a database outage, common/jobs.py): a build creates
files, and a failed one is recorded on its row for a coordinator to build again. A worker killed mid-build leaves the
message unacknowledged (acks_late), so it comes back; the service takes the
build over only once its heartbeat has gone stale.
"""

from celery import shared_task

from common.jobs import retry_when_the_database_returns
from exports import services


@shared_task(name="exports.release_build", **retry_when_the_database_returns("RELEASE_STALE_SECONDS"))
def release_build_task(release_id: int) -> None:
    services.release_build(release_id=release_id)
