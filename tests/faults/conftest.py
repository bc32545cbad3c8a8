"""Throwaway services for fault tests: never the shared PostgreSQL on :5432 or Redis on :6379."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ThrowawayRedis:
    port: int
    folder: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None


@pytest.fixture
def throwaway_redis(tmp_path) -> Iterator[ThrowawayRedis]:
    redis = ThrowawayRedis(port=free_port(), folder=tmp_path)
    redis.start()
    yield redis
    redis.stop()


def _postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name))
    return found[-1].parent if found else None


@dataclass
class ThrowawayPostgres:
    """A PostgreSQL cluster of the test's own: its own data folder under /tmp and its own port.

    initdb refuses to run as root, so as root every command runs as the `postgres` user (runuser), which
    owns the folder. Every command has a timeout; `destroy` stops the cluster at once and removes it.
    """

    bin: Path
    folder: Path
    port: int

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "localqa") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def run(self, *command: str, timeout: float = 60) -> subprocess.CompletedProcess:
        argv = [str(self.bin / command[0]), *command[1:]]
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=True, cwd=self.folder)

    def create(self) -> None:
        self.run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        self.start()
        self.run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "localqa", timeout=30)

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
        self.run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"), "-w", "-t", "30",
                 "start", timeout=40)  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "20", "stop", timeout=30)

    def destroy(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self.stop("immediate")
        except (subprocess.SubprocessError, OSError):
            pass
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def throwaway_postgres() -> Iterator[ThrowawayPostgres]:
    bin = _postgres_bin()
    if bin is None:
        pytest.skip("No PostgreSQL server binaries in /usr/lib/postgresql/*/bin.")
    folder = Path(tempfile.mkdtemp(prefix="localqa-faults-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    postgres = ThrowawayPostgres(bin=bin, folder=folder, port=free_port())
    try:
        postgres.create()
        yield postgres
    finally:
        postgres.destroy()
