"""Moving servers: an archive imported into a fresh database by another process gives the same project, same ids.

The other server is `manage.py` in a subprocess with its own DATABASE_URL (a database created and migrated
for this test on the same PostgreSQL, or a file of its own on SQLite) and its own MEDIA_ROOT; it imports the
archive and prints its canonical dump, which must equal this server's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from annotation.models import PagePair, QAItem
from archive import services
from exports.models import Release
from tests.archive.canonical import canonical_dump

PROJECT_DIR = Path(__file__).resolve().parents[2]
DUMP = """
import json
from annotation.models import Project, QAItem
from django.contrib.auth import get_user_model
from tests.archive.canonical import canonical_dump
project = Project._base_manager.get(slug={slug!r})
people = {{u.username: [u.is_active, u.has_usable_password(), u.is_staff, u.is_superuser]
          for u in get_user_model().objects.all()}}
items = sorted(QAItem._base_manager.filter(project=project).values_list("pk", flat=True))
dump = canonical_dump(project)
from tests import factories
fresh = factories.pair(project, local_title="after the move").pk  # the id sequences were moved past the kept ids
print(json.dumps({{"dump": dump, "project_pk": project.pk, "people": people, "item_pks": items, "fresh": fresh}}))
"""


def _url(name: str) -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = f"{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}"
    return f"postgres://{db.get('USER') or 'postgres'}{password}@{host}/{name}"


@pytest.fixture
def other_server(tmp_path) -> Iterator[dict[str, str]]:
    env = {
        **os.environ,
        "MEDIA_ROOT": str(tmp_path / "other-media"),
        "DEBUG": "true",
        "REDIS_URL": "",
        "CELERY_TASK_ALWAYS_EAGER": "true",
    }
    if connection.vendor == "sqlite":
        # The embedded default: the other server's database is a file of its own.
        env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'other-server.sqlite3'}"
        run(env, "migrate", "-v0")
        yield env
        return
    name = f"{connection.settings_dict['NAME']}_other_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_url("postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    env["DATABASE_URL"] = _url(name)
    try:
        run(env, "migrate", "-v0")
        yield env
    finally:
        with psycopg.connect(_url("postgres"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_a_project_moved_to_a_fresh_server_is_identical_with_the_same_ids(rich_project, media, tmp_path, other_server):
    out = tmp_path / "move.zip"
    services.archive_write_to(project=rich_project, out=out)

    run(other_server, "project_archive_import", str(out))

    there = json.loads(run(other_server, "shell", "-c", DUMP.format(slug=rich_project.slug)).splitlines()[-1])
    fresh = there.pop("fresh")
    assert there["dump"] == canonical_dump(rich_project)
    assert fresh > max(PagePair._base_manager.filter(project=rich_project).values_list("pk", flat=True))
    assert there["project_pk"] == rich_project.pk
    items = QAItem._base_manager.filter(project=rich_project)
    assert there["item_pks"] == sorted(items.values_list("pk", flat=True))
    # Everyone arrives inactive, without a password, without privileges.
    assert there["people"]["annotator"] == [False, False, False, False]
    assert there["people"].keys() >= {"annotator", "reviewer", "coordinator", "coordinator2", "annotator2"}
    for release in Release.objects.filter(project=rich_project).exclude(path=""):
        for entry in release.files:
            mine = (Path(media) / release.path / entry["name"]).read_bytes()
            theirs = (Path(other_server["MEDIA_ROOT"]) / release.path / entry["name"]).read_bytes()
            assert theirs == mine, entry["name"]
