"""Benchmark: bulk in and out as a coordinator and a researcher wait for them, on PostgreSQL and on SQLite.

    .venv/bin/python bench/bulk.py [--engines postgres sqlite] [--sizes 10000 100000] [--repeat 1]

For each engine and size it starts the stack a person uses (gunicorn, 2 workers x 4 threads, and one Celery
worker at its usual niceness, on Redis db 4 and a queue of its own), warms it with a ten-pair import and a
release, and then measures, through the API with a token, exactly what a person waits for:

- import: POST a JSONL file of N page pairs (bench/import_pairs.py's synthetic pairs) to the imports API,
  poll the job every 50 ms until it has ended; wall seconds from the upload's first byte to "done";
- release: POST a release request for a project of N accepted lead QAs (bench/release_build.py's finished
  study), poll until it is published, then download the zip whole; wall seconds from the request to the last
  byte of the zip, and the moment it was published.

Server CPU is the CPU seconds the web and worker processes used during the measurement (user + system, read
from /proc for every process of their sessions); database CPU is PostgreSQL's backends of the bench database
(SQLite works inside the app's processes, so it is in the server figure). Peak memory is the largest VmHWM
of a worker process and of a web process: the stack is started afresh for every measurement, so it is that
measurement's own peak (after the warm-up). The stack runs in a temporary MEDIA_ROOT; the PostgreSQL database
is `localqa_bulk_bench`, the SQLite one a temporary file. Prints one table; `--json` prints the rows.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

POSTGRES = "postgres://postgres@127.0.0.1:5432/localqa_bulk_bench"
REDIS = "redis://127.0.0.1:6379/4"
QUEUE = "localqa-bulk-bench"
PORT = 8140
TOKEN_NAME = "bulk bench"  # noqa: S105 - a token label, not a secret


def stack_env(database_url: str, media: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=database_url,
        REDIS_URL=REDIS,
        CELERY_QUEUE=QUEUE,
        CACHE_KEY_PREFIX="localqa-bulk-bench",
        DEBUG="false",
        SECRET_KEY="bench-only-secret-key-not-for-production-0123456789",  # noqa: S106
        # base64 of "bench-only-key-not-a-real-secret": encrypts nothing worth keeping
        ENCRYPTION_KEYS="YmVuY2gtb25seS1rZXktbm90LWEtcmVhbC1zZWNyZXQ=",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        API_THROTTLE_USER="1000000/min",
        API_THROTTLE_ANON="1000000/min",
        CONN_MAX_AGE="60",
        STATIC_MANIFEST="false",
        MEDIA_ROOT=media,
        LOG_LEVEL="ERROR",
        CELERY_TASK_ALWAYS_EAGER="false",
    )
    return env


# Processes and their CPU and memory, from /proc


def _session_pids(sid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid:  # field 6 of stat: the session id
                pids.append(int(entry.name))
    return pids


def _cpu(pid: int) -> float:
    """CPU seconds of a process and of its children that it waited for (user + system)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def _hwm_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Stack:
    """gunicorn and a Celery worker, each in a session of its own (killed by session, never by name)."""

    def __init__(self, env: dict[str, str]) -> None:
        bin_dir = Path(sys.executable).parent
        self.web = subprocess.Popen(
            [str(bin_dir / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{PORT}",
             "--workers", "2", "--worker-class", "gthread", "--threads", "4", "--log-level", "warning",
             "--timeout", "300", "--preload"],
            cwd=ROOT, env=env, start_new_session=True,
        )  # fmt: skip
        self.worker = subprocess.Popen(
            [str(bin_dir / "celery"), "-A", "config", "worker", "--queues", QUEUE, "--concurrency", "1",
             "--loglevel", "WARNING", "--hostname", f"bulk-bench-{os.getpid()}@%h"],
            cwd=ROOT, env=env, start_new_session=True,
        )  # fmt: skip

    def pids(self) -> dict[str, list[int]]:
        return {"web": _session_pids(self.web.pid), "worker": _session_pids(self.worker.pid)}

    def cpu(self) -> float:
        return sum(_cpu(pid) for pids in self.pids().values() for pid in pids)

    def peaks(self) -> dict[str, float]:
        return {role: max((_hwm_mib(pid) for pid in pids), default=0.0) for role, pids in self.pids().items()}

    def stop(self) -> None:
        for process in (self.web, self.worker):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in (self.web, self.worker):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


class DatabaseClock:
    """Database CPU between two moments: backends that live through both count their difference, new ones whole."""

    def __init__(self) -> None:
        self.before = self._snapshot()

    @staticmethod
    def _snapshot() -> dict[int, float]:
        from django.db import connection

        if connection.vendor != "postgresql":
            return {}
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            return {pid: _cpu(pid) for (pid,) in cursor.fetchall()}

    def seconds(self) -> float:
        after = self._snapshot()
        return sum(cpu - self.before.get(pid, 0.0) for pid, cpu in after.items())


# The driver (one engine, in a process of its own)


def _client(token: str) -> Any:
    import httpx

    return httpx.Client(base_url=f"http://127.0.0.1:{PORT}", headers={"Authorization": f"Token {token}"}, timeout=600)


def _wait_ready(stack: Stack, client: Any) -> None:
    import httpx

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if stack.web.poll() is not None or stack.worker.poll() is not None:
            raise SystemExit("the bench stack stopped while starting")
        with contextlib.suppress(OSError, httpx.HTTPError):  # not listening yet
            if client.get("/api/projects/").status_code == 200:
                break
        time.sleep(0.2)
    else:
        raise SystemExit("the bench server did not answer within 90 s")
    # The worker is ready when it has answered a ping on its queue.
    from config.celery import app

    while time.monotonic() < deadline:
        if app.control.ping(timeout=0.5, destination=[f"bulk-bench-{os.getpid()}@{os.uname().nodename}"]):
            return
    raise SystemExit("the Celery worker did not answer within 90 s")


def _poll(client: Any, url: str, terminal: set[str], answers: dict[str, int]) -> dict[str, Any]:
    """Ask every 50 ms until the job has ended; `answers` counts the answers by status code (an error is
    counted and asked again: SQLite may refuse a read while the job writes)."""
    while True:
        response = client.get(url)
        answers[str(response.status_code)] = answers.get(str(response.status_code), 0) + 1
        if response.status_code == 200 and response.json()["status"] in terminal:
            return response.json()
        time.sleep(0.05)


def _import(client: Any, slug: str, path: Path) -> dict[str, Any]:
    started = time.perf_counter()
    with path.open("rb") as handle:
        response = client.post(
            f"/api/projects/{slug}/imports/", files={"files": (path.name, handle, "application/x-ndjson")}
        )
    assert response.status_code == 202, response.text[:500]
    job = response.json()
    answers: dict[str, int] = {}
    body = _poll(
        client, f"/api/projects/{slug}/imports/{job['id']}/", {"done", "refused", "failed", "cancelled"}, answers
    )
    wall = time.perf_counter() - started
    assert body["status"] == "done", json.dumps(body)[:800]
    return {"wall": wall, "created": body["report"]["created"], "polls": answers}


def _release(client: Any, slug: str) -> dict[str, Any]:
    started = time.perf_counter()
    response = client.post(f"/api/projects/{slug}/releases/", json={})
    assert response.status_code == 202, response.text[:500]
    version = response.json()["version"]
    answers: dict[str, int] = {}
    body = _poll(client, f"/api/projects/{slug}/releases/{version}/", {"done", "failed"}, answers)
    published = time.perf_counter() - started
    assert body["status"] == "done", json.dumps(body)[:800]
    size = 0
    with client.stream("GET", f"/api/projects/{slug}/releases/{version}/archive/") as download:
        assert download.status_code == 200, download.status_code
        for chunk in download.iter_bytes(1 << 20):
            size += len(chunk)
    wall = time.perf_counter() - started
    unpacked = sum(entry["size"] for entry in body["files"])
    return {"wall": wall, "published": published, "zip_mib": size / 2**20, "unpacked_mib": unpacked / 2**20,
            "files": len(body["files"]), "polls": answers}  # fmt: skip


def _measure(env: dict[str, str], token: str, what: str, run: Any) -> dict[str, Any]:
    """Start the stack, warm it, measure `run(client)`, stop it."""
    stack = Stack(env)
    try:
        with _client(token) as client:
            _wait_ready(stack, client)
            _import(client, "bulk-warm", WARM_FILE)  # every process has served an import and a release
            _release(client, "bulk-warm")
            time.sleep(0.5)
            clock, cpu = DatabaseClock(), stack.cpu()
            result = run(client)
            result["server_cpu"] = stack.cpu() - cpu
            result["database_cpu"] = clock.seconds()
            peaks = stack.peaks()
            result["peak_worker_mib"], result["peak_web_mib"] = peaks["worker"], peaks["web"]
    finally:
        stack.stop()
    result["what"] = what
    return result


WARM_FILE = Path(tempfile.gettempdir()) / f"bulk-bench-warm-{os.getpid()}.jsonl"


def drive(engine: str, sizes: list[int], repeat: int) -> list[dict[str, Any]]:
    """In the engine's own process (its DATABASE_URL set): prepare data, measure every size."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from accounts.tokens import api_token_create
    from annotation.models import Project
    from annotation.services.members import membership_set
    from annotation.services.projects import project_create
    from bench.import_pairs import write_pairs
    from bench.release_build import create_project
    from exports.models import Release

    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bulk-bench-coordinator")
    _, token = api_token_create(user=user, name=TOKEN_NAME)
    env = dict(os.environ)
    write_pairs(WARM_FILE, 10, seed=1)

    def fresh_import_project(slug: str) -> None:
        old = Project.objects.filter(slug=slug).first()
        if old is not None:
            Release.objects.filter(project=old).delete()
            old.delete()
        project_create(name=slug, slug=slug, local_language="bar", standard_language="deu", created_by=user)

    rows = []
    with tempfile.TemporaryDirectory(prefix="bulk-bench-") as folder:
        for size in sizes:
            path = Path(folder) / f"pairs-{size}.jsonl"
            write_pairs(path, size)
            release_slug = create_project(size, varied=True)
            project = Project.objects.get(slug=release_slug)
            membership_set(project=project, user=user, roles=["coordinator"])
            for attempt in range(repeat):
                fresh_import_project("bulk-warm")
                fresh_import_project("bulk-import")
                row = _measure(env, token, "import", lambda client, p=path: _import(client, "bulk-import", p))
                rows.append({"engine": engine, "n": size, "attempt": attempt, "file_mib": path.stat().st_size / 2**20,
                             **row})  # fmt: skip
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
                fresh_import_project("bulk-warm")
                Release.objects.filter(project=project).delete()
                row = _measure(env, token, "release", lambda client, s=release_slug: _release(client, s))
                rows.append({"engine": engine, "n": size, "attempt": attempt, **row})
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            Release.objects.filter(project=project).delete()
    WARM_FILE.unlink(missing_ok=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        f"{'engine':<9} {'items':>8} {'job':<8} {'wall s':>7} {'published s':>12} {'server CPU s':>13} "
        f"{'DB CPU s':>9} {'peak worker MiB':>16} {'peak web MiB':>13} {'zip MiB':>8} {'unpacked MiB':>13}"
        f" {'files':>6} {'polls (errors)':>15}"
    ]
    for row in rows:
        published = f"{row['published']:.2f}" if "published" in row else ""
        zipped = f"{row['zip_mib']:.1f}" if "zip_mib" in row else ""
        answers = row.get("polls", {})
        polls = f"{sum(answers.values())} ({sum(n for code, n in answers.items() if code != '200')})"
        unpacked = f"{row['unpacked_mib']:.1f}" if "unpacked_mib" in row else f"({row['file_mib']:.1f} in)"
        out.append(
            f"{row['engine']:<9} {row['n']:>8,} {row['what']:<8} {row['wall']:>7.2f} {published:>12} "
            f"{row['server_cpu']:>13.2f} {row['database_cpu']:>9.2f} {row['peak_worker_mib']:>16.0f} "
            f"{row['peak_web_mib']:>13.0f} {zipped:>8} {unpacked:>13} {row.get('files', ''):>6} {polls:>15}"
        )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", nargs="+", choices=["postgres", "sqlite"], default=["postgres", "sqlite"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=1, help="Measurements per engine and size (default 1).")
    parser.add_argument("--json", action="store_true", help="Print the rows as JSON too.")
    parser.add_argument("--drive", metavar="ENGINE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        print(json.dumps(drive(args.drive, args.sizes, args.repeat)))
        return
    rows: list[dict[str, Any]] = []
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    for engine in args.engines:
        with tempfile.TemporaryDirectory(prefix="bulk-bench-media-") as media:
            if engine == "postgres":
                import psycopg

                with psycopg.connect(POSTGRES.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
                    exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = 'localqa_bulk_bench'").fetchone()
                    if exists is None:
                        conn.execute('CREATE DATABASE "localqa_bulk_bench"')
                database = POSTGRES
            else:
                database = f"sqlite:///{media}/bench.sqlite3"
            command = [sys.executable, __file__, "--drive", engine, "--sizes", *map(str, args.sizes),
                       "--repeat", str(args.repeat)]  # fmt: skip
            output = subprocess.run(
                command, env=stack_env(database, media), cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True
            ).stdout
            rows += json.loads(output.strip().splitlines()[-1])
    load = os.getloadavg()
    print(table(rows))
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
