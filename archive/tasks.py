"""Celery tasks of the archive app: they take ids and call services.

A failed job is recorded on its row. A worker killed mid-job leaves the message unacknowledged
(acks_late), so it comes back; the service takes the job over once its heartbeat is stale. When the
database goes away mid-job the task is sent again for just after that (common/jobs.py).
"""

from celery import shared_task

from archive import services
from common.jobs import retry_when_the_database_returns


@shared_task(name="archive.export", **retry_when_the_database_returns("ARCHIVE_STALE_SECONDS"))
def archive_export_task(archive_id: int) -> None:
    services.archive_export_run(archive_id=archive_id)


@shared_task(name="archive.import", **retry_when_the_database_returns("ARCHIVE_STALE_SECONDS"))
def archive_import_task(archive_id: int) -> None:
    services.archive_import_run(archive_id=archive_id)
