import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()

# The first requests of a fresh process do not pay for imports and template parsing (common/warmup.py).
from common.warmup import server_warm_up  # noqa: E402 - needs the settings loaded above

server_warm_up()

# Without a broker, jobs run on this process's threads: those left waiting when it last stopped start now.
from django.conf import settings  # noqa: E402

if settings.JOBS_IN_THREADS:
    from common.enqueue import requeue_on_server_start

    requeue_on_server_start()
