"""What a server process would otherwise do on its first requests, done while it loads the application.

Django imports the URLconf (and with it every view, DRF and the OpenAPI tools), compiles each URL pattern's
regular expression and each template on first use: some 250 ms of CPU (300 for a page) that the first requests
of every fresh worker waited for, all at once on a gunicorn worker's threads (after a deploy or a restart, the
first annotators' claims took 100-250 ms where they take 15).
`config/wsgi.py` calls `server_warm_up()` when it makes the application: with `gunicorn --preload` once, before
the workers fork; without, in each worker before it takes a request.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.template import TemplateSyntaxError
from django.template.loader import get_template
from django.urls import URLPattern, URLResolver, get_resolver


def _patterns_compiled(resolver: URLResolver) -> int:
    """Import every URLconf under `resolver` and compile every pattern's regular expression; how many."""
    count = 0
    for entry in resolver.url_patterns:
        entry.pattern.regex  # noqa: B018 - compiled (and kept) on first access
        count += 1
        if isinstance(entry, URLResolver):
            count += _patterns_compiled(entry)
        elif not isinstance(entry, URLPattern):  # pragma: no cover - Django has no third kind
            raise TypeError(f"Unknown URL entry {entry!r}")
    return count


def _templates_loaded() -> int:
    """Parse every template of the project's template folders into the template loader's cache; how many."""
    count = 0
    folders: list[Path] = list(settings.TEMPLATES[0]["DIRS"])  # type: ignore[call-overload]
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.html")):
            try:
                get_template(path.relative_to(folder).as_posix())
            except TemplateSyntaxError:  # a broken template fails where it is used, with its page
                continue
            count += 1
    return count


def server_warm_up() -> dict[str, Any]:
    """Load what the first requests would load; what was done. Needs no database."""
    started = time.perf_counter()
    done: dict[str, Any] = {}
    resolver = get_resolver()
    done["url_patterns"] = _patterns_compiled(resolver)
    resolver.reverse_dict  # noqa: B018 - reverse()'s tables, made once per process
    done["templates"] = _templates_loaded()
    done["seconds"] = round(time.perf_counter() - started, 3)
    return done
