import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("localqa")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def requeue_pending_jobs(**kwargs: object) -> None:
    """Jobs queued while the broker was down (their rows still pending) start now: see config/enqueue.py."""
    from config.enqueue import requeue_pending

    requeue_pending()
