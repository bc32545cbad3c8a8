"""A server process loads what its first requests would (common/warmup.py): the URLconf with every view, the URL
patterns' expressions, the templates and the prepared SQL, and keeps no database connection for forked workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext

from annotation.models import PagePair
from common.prepared import Prepared, prepared_queries_compile

ROOT = Path(__file__).resolve().parent.parent

# Run in a fresh interpreter, as gunicorn loads the application: what is there before any request.
_PROBE = """
import json
import config.wsgi
from django.db import connections
from django.template import engines
from django.urls import get_resolver
from common import claims, prepared
every = list(prepared._EVERY)
loader = engines["django"].engine.template_loaders[0]
while not hasattr(loader, "get_template_cache"):  # the partials loader wraps Django's cached loader
    loader = loader.loaders[0]
print(json.dumps({
    "prepared": len(every),
    "compiled": sum("default" in query._compiled for query in every),
    "queues": len(claims._EVERY),
    "queue_reads": sum(queue._reads is not None for queue in claims._EVERY),
    "patterns_imported": "annotation.api" in __import__("sys").modules,
    "reverse_ready": get_resolver()._populated,
    "templates_cached": len(loader.get_template_cache),
    "connection_open": connections["default"].connection is not None,
}))
"""


def _fresh_server_state(tmp_path: Path, database_url: str) -> dict:
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_fresh_server_process_has_compiled_what_its_first_requests_use(tmp_path):
    state = _fresh_server_state(tmp_path, f"sqlite:///{tmp_path / 'fresh.sqlite3'}")

    assert state["patterns_imported"] and state["reverse_ready"]
    assert state["prepared"] >= 15 and state["compiled"] == state["prepared"]  # the token, claims, submit, review…
    assert state["queues"] >= 2 and state["queue_reads"] == state["queues"]  # the pair queue and the review queue
    assert state["templates_cached"] >= 50
    assert state["connection_open"] is False  # with --preload, no worker inherits the warm-up's socket


def test_a_database_that_is_not_up_leaves_the_queries_for_their_first_use(tmp_path):
    # A port nothing listens on: the server still starts, with its URLs and templates loaded.
    state = _fresh_server_state(tmp_path, "postgres://postgres@127.0.0.1:9/nowhere")

    assert state["patterns_imported"] and state["templates_cached"] >= 50
    assert state["compiled"] < state["prepared"]
    assert state["connection_open"] is False


@pytest.mark.django_db(transaction=True)  # a locking read compiles only in a transaction of its own
def test_prepared_queries_compile_compiles_each_query_once_including_locking_reads():
    def pairs_locked(pk: int) -> QuerySet[PagePair]:
        return PagePair.objects.select_for_update(skip_locked=True).filter(pk=pk)[:1]

    locking = Prepared(pairs_locked, int)
    plain = Prepared(lambda slug: PagePair.objects.filter(project__slug=slug), str)

    with CaptureQueriesContext(connection) as captured:
        assert prepared_queries_compile() >= 2
    # Compiled, not run: BEGIN and COMMIT around it (and SQLite's feature checks), no table read.
    assert captured.captured_queries and not [q for q in captured.captured_queries if "annotation_" in q["sql"]]
    assert "default" in locking._compiled and "default" in plain._compiled
    assert prepared_queries_compile() == 0  # each once
