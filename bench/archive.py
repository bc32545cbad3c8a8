"""Time and peak memory of a project archive export and import, per project size.

Usage: DATABASE_URL=postgres://… python bench/archive.py [ITEMS ...]
For each size: creates a throw-away project with ITEMS accepted lead QAs (one span and one revision each, two
per pair) in the database DATABASE_URL points at, runs `manage.py project_archive_export` and
`manage.py project_archive_import --slug …` as separate processes under /usr/bin/time, prints wall time, CPU time
(user + system), archive size and the peak resident memory of each, then deletes both projects. Memory that does not
grow with ITEMS is the point: the export streams rows with .iterator(); the import reads line by line in batches and
keeps one integer pair per row (its id map).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# As in production: with DEBUG on, Django keeps the SQL of the last 9,000 queries (bulk inserts of a thousand rows
# each), which the commands measured here would count as their own memory.
os.environ.setdefault("DEBUG", "false")

import django  # noqa: E402

django.setup()

from annotation.models import Project  # noqa: E402
from tests import factories  # noqa: E402
from tests.exports.conftest import bulk_accepted_items  # noqa: E402


def measured(*args: str) -> tuple[float, float, int]:
    """(seconds, CPU seconds, peak RSS in MiB) of `manage.py args` in its own process."""
    start = time.perf_counter()
    result = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if result.returncode:
        raise SystemExit(result.stderr[-2000:])
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr)
    assert found is not None, "no peak memory in /usr/bin/time's report"
    peak = int(found.group(1))
    cpu = sum(float(value) for value in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", result.stderr))
    return seconds, cpu, peak // 1024


def main(sizes: list[int]) -> None:
    owner = factories.user(f"bench-{uuid.uuid4().hex[:8]}")
    print(
        f"{'items':>8} {'export s':>9} {'CPU s':>6} {'export MiB':>11} {'zip MB':>7} {'import s':>9} {'CPU s':>6} "
        f"{'import MiB':>11}"
    )
    for size in sizes:
        slug = f"bench-archive-{uuid.uuid4().hex[:8]}"
        project = factories.project(owner, slug=slug)
        bulk_accepted_items(project, size)
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "bench.zip"
            try:
                export_s, export_cpu, export_mb = measured("project_archive_export", slug, "--out", str(out))
                import_s, import_cpu, import_mb = measured("project_archive_import", str(out), "--slug", f"{slug}-copy")
                print(
                    f"{size:>8} {export_s:>9.1f} {export_cpu:>6.1f} {export_mb:>11} {out.stat().st_size / 1e6:>7.1f} "
                    f"{import_s:>9.1f} {import_cpu:>6.1f} {import_mb:>11}",
                    flush=True,
                )
            finally:
                Project._base_manager.filter(slug__in=[slug, f"{slug}-copy"]).delete()
    owner.delete()


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [2_000, 20_000])
