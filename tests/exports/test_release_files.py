"""Release files hold exactly what was written, with their size and sha256 computed on the way; a write the
system refuses (file size limit, like a full disk) fails the build with its error and publishes nothing."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from exports import services
from exports.formats.base import HashedFile
from exports.models import Release
from tests.exports.conftest import bulk_accepted_items
from tests.worker import PROJECT_DIR, _database_url


def pieces(seed: int) -> list[bytes]:
    chooser = random.Random(seed)
    sizes = [0, 1, 4095, 4096, 4097, 8192, 3, 20_000, 1, 4096 * 3 - 7]
    sizes += [chooser.randrange(0, 12_000) for _ in range(60)]
    return [chooser.randbytes(size) for size in sizes]


def test_a_hashed_file_reports_the_size_and_sha256_of_its_bytes_on_disk(tmp_path):
    data = pieces(2)
    handle = HashedFile(tmp_path, "nested/file.jsonl")
    handle.write_lines(data[:40])
    for piece in data[40:]:
        handle.write(piece)
    entry = handle.close()
    on_disk = (tmp_path / "nested" / "file.jsonl").read_bytes()
    assert on_disk == b"\n".join(data[:40]) + b"\n" + b"".join(data[40:])
    assert (entry.size, entry.sha256, entry.lines) == (len(on_disk), hashlib.sha256(on_disk).hexdigest(), 40)


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
