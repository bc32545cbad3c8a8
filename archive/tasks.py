"""Celery tasks of the archive app: they take ids and call services.

No automatic retry: a failed job is recorded on its row. A worker killed mid-job leaves the message
unacknowledged (acks_late), so it comes back; the service takes the job over once its heartbeat is stale.
"""

from celery import shared_task

from archive import services


@shared_task(name="archive.export")
def archive_export_task(archive_id: int) -> None:
    services.archive_export_run(archive_id=archive_id)


@shared_task(name="archive.import")
def archive_import_task(archive_id: int) -> None:
    services.archive_import_run(archive_id=archive_id)
