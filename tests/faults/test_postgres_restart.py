"""PostgreSQL restarts while the app runs: requests fail cleanly (a 503 that says why) and succeed afterwards
without restarting the app.

The app is a real gunicorn process on a throwaway PostgreSQL cluster (tests/faults/conftest.py), run as in
production (DEBUG off, persistent connections). Every wait is bounded and the processes are killed at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.faults.conftest import free_port

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

PROJECT_DIR = Path(__file__).resolve().parents[2]
REQUEST_TIMEOUT = 10

SETUP = """
import django
django.setup()
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.core.management import call_command
from rest_framework.authtoken.models import Token
call_command("migrate", verbosity=0)
user = get_user_model().objects.create_user("restart", password="a long enough password 1")
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(Token.objects.create(user=user).key, session.session_key)
"""


def fetch(url: str, headers: dict[str, str]) -> tuple[int, str, float]:
    """(status, body, seconds taken); never waits longer than REQUEST_TIMEOUT."""
    started = time.monotonic()
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - our own server
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:  # noqa: S310 - our own server
            return response.status, response.read().decode(), time.monotonic() - started
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), time.monotonic() - started


def test_requests_fail_cleanly_while_postgres_is_down_and_work_again_without_restarting_the_app(
    throwaway_postgres, tmp_path
):
    env = {
        **os.environ,
        "DATABASE_URL": throwaway_postgres.url(),
        "DEBUG": "false",
        "SECRET_KEY": "fault-test-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "STATIC_MANIFEST": "false",
        "CONN_MAX_AGE": "60",  # persistent connections: the harder case, they die with the restart
        "REDIS_URL": "",
        "CACHE_URL": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    setup = subprocess.run(
        [sys.executable, "-c", SETUP], cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=120
    )
    assert setup.returncode == 0, setup.stderr[-3000:]
    token, session = setup.stdout.split()
    port = free_port()
    log = (tmp_path / "gunicorn.log").open("wb")
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "config.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--threads", "2", "--timeout", "30", "--graceful-timeout", "5"],
        cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    api = (f"{base}/api/projects/", {"Authorization": f"Token {token}", "Accept": "application/json"})
    page = (f"{base}/", {"Cookie": f"sessionid={session}"})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if fetch(f"{base}/accounts/login/", {})[0] == 200:
                    break
            except OSError:
                pass
            assert server.poll() is None, (tmp_path / "gunicorn.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "gunicorn did not answer within 30 s"
            time.sleep(0.2)
        pid = server.pid

        status, body, _ = fetch(*api)
        assert status == 200, body
        assert json.loads(body)["count"] == 0
        status, body, _ = fetch(*page)
        assert status == 200, body

        throwaway_postgres.stop("fast")

        status, body, seconds = fetch(*api)
        assert status == 503, body
        assert json.loads(body)["code"] == "database_unavailable"
        assert "database cannot be reached" in json.loads(body)["detail"]
        assert seconds < 5
        status, body, seconds = fetch(*page)
        assert status == 503, body
        assert "database cannot be reached" in body and "Traceback" not in body
        assert seconds < 5

        throwaway_postgres.start()

        status, body, _ = fetch(*api)
        assert status == 200, body
        status, body, _ = fetch(*page)
        assert status == 200, body
        assert server.poll() is None and server.pid == pid, "the app was restarted"
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=10)
        log.close()
