"""A server process loads what its first requests would (common/warmup.py): the URLconf with every view, the URL
patterns' expressions and the templates, and keeps no database connection for forked workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run in a fresh interpreter, as gunicorn loads the application: what is there before any request.
_PROBE = """
import json
import sys
import config.wsgi
from django.db import connections
from django.template import engines
loader = engines["django"].engine.template_loaders[0]
while not hasattr(loader, "get_template_cache"):  # the partials loader wraps Django's cached loader
    loader = loader.loaders[0]
print(json.dumps({
    "patterns_imported": "annotation.api" in sys.modules and "review.api" in sys.modules,
    "templates_cached": len(loader.get_template_cache),
    "connection_open": connections["default"].connection is not None,
}))
"""


def _fresh_server_state(database_url: str) -> dict:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_fresh_server_process_has_loaded_what_its_first_requests_use(tmp_path):
    state = _fresh_server_state(f"sqlite:///{tmp_path / 'fresh.sqlite3'}")

    assert state["patterns_imported"]
    assert state["templates_cached"] >= 50
    assert state["connection_open"] is False  # with --preload, no worker inherits a socket


def test_a_database_that_is_not_up_does_not_stop_the_warm_up(tmp_path):
    # A port nothing listens on: the server still starts, with its URLs and templates loaded.
    state = _fresh_server_state("postgres://postgres@127.0.0.1:9/nowhere")

    assert state["patterns_imported"] and state["templates_cached"] >= 50
    assert state["connection_open"] is False
