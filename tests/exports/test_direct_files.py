"""Release files are written around the page cache (O_DIRECT) where the filesystem allows it: the bytes on disk,
their size and sha256 are exactly what was written, whatever the block boundaries, and a filesystem or a write
that refuses direct I/O gets the same file through the page cache. A write the system refuses (file size limit,
like a full disk) fails the build with its error and publishes nothing."""

from __future__ import annotations

import errno
import hashlib
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from exports import services
from exports.formats import base
from exports.formats.base import DirectFile, HashedFile, open_for_writing
from exports.models import Release
from tests.exports.conftest import bulk_accepted_items
from tests.worker import PROJECT_DIR, _database_url


def pieces(seed: int) -> list[bytes]:
    chooser = random.Random(seed)
    sizes = [0, 1, 4095, 4096, 4097, 8192, 3, 20_000, 1, 4096 * 3 - 7]
    sizes += [chooser.randrange(0, 12_000) for _ in range(60)]
    return [chooser.randbytes(size) for size in sizes]


def test_a_direct_file_holds_exactly_what_was_written_whatever_the_block_boundaries(tmp_path):
    data = pieces(1)
    path = tmp_path / "file.jsonl"
    handle = DirectFile(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644), staging_limit=8192)
    for piece in data:
        handle.write(piece)
    handle.close()
    assert path.read_bytes() == b"".join(data)


def test_a_hashed_file_reports_the_size_and_sha256_of_its_bytes_on_disk(tmp_path):
    data = pieces(2)
    handle = HashedFile(tmp_path, "nested/file.jsonl")
    assert isinstance(handle._file, DirectFile)  # this filesystem takes direct writes
    handle.write_lines(data[:40])
    for piece in data[40:]:
        handle.write(piece)
    entry = handle.close()
    on_disk = (tmp_path / "nested" / "file.jsonl").read_bytes()
    assert on_disk == b"\n".join(data[:40]) + b"\n" + b"".join(data[40:])
    assert (entry.size, entry.sha256, entry.lines) == (len(on_disk), hashlib.sha256(on_disk).hexdigest(), 40)


def test_a_filesystem_without_direct_io_gets_a_file_through_the_page_cache(tmp_path, monkeypatch):
    real_open = os.open

    def no_direct_io(path, flags, *args):  # what open(2) answers on a filesystem without O_DIRECT
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(base.os, "open", no_direct_io)
    handle = open_for_writing(tmp_path / "plain.jsonl")
    assert not isinstance(handle, DirectFile)
    handle.write(b"written\n")
    handle.close()
    assert (tmp_path / "plain.jsonl").read_bytes() == b"written\n"


def test_direct_writes_refused_half_way_go_on_through_the_page_cache(tmp_path, monkeypatch):
    data = pieces(3)
    path = tmp_path / "file.jsonl"
    handle = DirectFile(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644), staging_limit=8192)
    real_write = os.write
    calls = []

    def refuse_the_third_direct_write(fd, buffer):  # some filesystems refuse only some direct writes
        calls.append(len(buffer))
        if len(calls) == 3:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_write(fd, buffer)

    monkeypatch.setattr(base.os, "write", refuse_the_third_direct_write)
    for piece in data:
        handle.write(piece)
    handle.close()
    assert not handle._direct
    assert path.read_bytes() == b"".join(data)


BUILD_UNDER_A_FILE_SIZE_LIMIT = textwrap.dedent(
    """
    import resource, signal, sys
    import django
    django.setup()
    from exports import services
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
    services.release_build(release_id=int(sys.argv[1]))
    """
)


@pytest.mark.postgresql(
    reason="the file size limit would refuse the build's own database writes too: SQLite is a file of this process"
)
@pytest.mark.django_db(transaction=True)
def test_a_write_the_system_refuses_fails_the_build_with_its_error_and_publishes_nothing(project, coordinator, media):
    bulk_accepted_items(project, 300)  # about 2 MB of files: past the 64 KB limit
    release = services.release_request(project=project, user=coordinator, enqueue=False)
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "MEDIA_ROOT": str(media),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    run = subprocess.run(
        [sys.executable, "-c", BUILD_UNDER_A_FILE_SIZE_LIMIT, str(release.pk)],
        cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]

    release.refresh_from_db()
    assert release.status == Release.Status.FAILED
    assert "File too large" in release.error, release.error
    releases = Path(media) / "releases" / project.slug
    assert not (releases / f"v{release.version}").exists()
    assert not list((releases / ".building").iterdir())  # the half-written files are gone

    again = services.release_build_now(project=project, user=coordinator)  # no limit now: it builds
    assert again.status == Release.Status.DONE, again.error
    assert again.counts["lead_qa"] == 300
