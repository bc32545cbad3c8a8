import os

from celery import Celery
from celery.signals import worker_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("localqa")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def lower_priority(**kwargs: object) -> None:
    """Background jobs yield the CPU to web requests: a release build beside the team leaves their requests alone.

    Set before the pool forks, so every child process inherits it; WORKER_NICE=0 turns it off.
    """
    from django.conf import settings

    if settings.WORKER_NICE:
        os.nice(settings.WORKER_NICE)


@worker_ready.connect
def requeue_pending_jobs(**kwargs: object) -> None:
    """Jobs queued while the broker was down (their rows still pending) start now: see common/enqueue.py."""
    from common.enqueue import requeue_pending

    requeue_pending()
