import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()

# The first requests of a fresh process do not pay for imports and template parsing (common/warmup.py).
from common.warmup import server_warm_up  # noqa: E402 - needs the settings loaded above

server_warm_up()
