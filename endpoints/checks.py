"""`manage.py check` names every MODEL_ALLOWED_HOSTS entry that is not a host (such an entry allows nothing)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register

from endpoints.hosts import allowed_host_parse


@register()
def allowed_hosts_check(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    return [
        Error(
            f"MODEL_ALLOWED_HOSTS entry {entry!r} is not a host: write a name or address, optionally with :port, "
            "or *.domain (no scheme, no path).",
            id="endpoints.E001",
        )
        for entry in settings.MODEL_ALLOWED_HOSTS
        if entry.strip() and allowed_host_parse(entry) is None
    ]
