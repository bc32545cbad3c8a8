"""Benchmark: `pairs_import` of N synthetic page pairs on PostgreSQL; pairs per second and peak memory.

    DATABASE_URL=postgres://… python bench/import_pairs.py [--sizes 10000 100000]

For each N it writes a JSONL file of N pairs (Cantonese with characters outside
the BMP, Bavarian, Egyptian Arabic; leads of a few hundred code points, like
real leads, and full-text lengths), creates a fresh project, and runs
`manage.py pairs_import` in a child process, timing the import and reading the
child's peak resident memory. The project is deleted afterwards. Prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SAMPLES = {
    "yue": "𠮶間茶餐廳喺深水埗開咗六十幾年，招牌菜係菠蘿油同埋鴛鴦，𨋢口有個報紙檔，𡃁仔成日喺度等巴士。",
    "bar": "Da Maibaam is a hocha, gschmückta Baam, der wo am easchtn Mai in vui Deafa aufgstäit wead. ",
    "arz": "القهوة البلدى فى وسط البلد من أقدم القهاوى فى مصر، واتفتحت سنة ١٨٩٠ وكانت بيتجمع فيها الأدبا. ",
}


def text(rng: random.Random, sample: str, length: int) -> str:
    out: list[str] = []
    while sum(map(len, out)) < length:
        start = rng.randrange(len(sample))
        out.append(sample[start:] + sample[:start])
    return "".join(out)[:length]


def write_pairs(path: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    languages = list(SAMPLES)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            sample = SAMPLES[languages[i % 3]]
            local_lead = text(rng, sample, rng.randint(250, 700))
            row = {
                "local_title": f"{sample[:6]} {i}",
                "standard_title": f"Standard {i}",
                "local_url": f"https://bar.wikipedia.org/wiki/P{i}",
                "standard_url": f"https://de.wikipedia.org/wiki/P{i}",
                "local_lead": local_lead,
                "standard_lead": text(rng, sample, rng.randint(80, 250)),
                "local_text_length": rng.randint(1000, 9000),
                "standard_text_length": rng.randint(300, 5000),
                "metadata": {"rank": i},
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def child(slug: str, path: str) -> None:
    """Run in a child process: import the file, print seconds and peak memory as JSON."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command

    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    call_command("pairs_import", slug, path, stdout=open(os.devnull, "w"))  # noqa: SIM115
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mib": peak_kib() / 1024}))


def peak_kib() -> int:
    """This process's peak resident memory. VmHWM, not ru_maxrss: ru_maxrss survives exec, so a child
    would report its parent's peak (the parent deletes 100,000 pairs between runs)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run(n: int, folder: Path) -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.db import connection

    from annotation.models import Project
    from annotation.services.projects import project_create

    path = folder / f"pairs-{n}.jsonl"
    write_pairs(path, n)
    slug = f"bench-{n}-{os.getpid()}"
    Project.objects.filter(slug=slug).delete()
    project = project_create(name=slug, slug=slug, local_language="bar", standard_language="deu")
    try:
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, __file__, "--child", slug, str(path)], capture_output=True, text=True, check=True
        )
        wall = time.perf_counter() - started
        measured = json.loads(result.stdout.strip().splitlines()[-1])
        assert project.pairs.count() == n, "not every pair was imported"
    finally:
        with connection.cursor() as cursor:  # without loading 100,000 pairs into this process
            cursor.execute("DELETE FROM annotation_pagepair WHERE project_id = %s", [project.pk])
        project.delete()
    return {
        "n": n,
        "mib": path.stat().st_size / 2**20,
        "seconds": measured["seconds"],
        "wall": wall,
        "rate": n / measured["seconds"],
        "cpu_rate": n / measured["cpu"],
        "peak": measured["peak_mib"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--repeat", type=int, default=3, help="Runs per size; the table shows the fastest and the median (default 3)."
    )
    parser.add_argument("--child", nargs=2, metavar=("SLUG", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("Set DATABASE_URL to a PostgreSQL database: the benchmark measures the import on PostgreSQL.")
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("ALLOWED_HOSTS", "localhost")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-0123456789")
    # base64 of "bench-only-key-not-a-real-secret": encrypts nothing worth keeping
    os.environ.setdefault("ENCRYPTION_KEYS", "YmVuY2gtb25seS1rZXktbm90LWEtcmVhbC1zZWNyZXQ=")
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)  # the benchmark database may lag behind the code
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in args.sizes:
            runs = sorted((run(n, Path(folder)) for _ in range(args.repeat)), key=lambda r: r["seconds"])
            rows.append((runs[0], runs[len(runs) // 2], max(r["peak"] for r in runs)))
    print(
        f"{'pairs':>9} {'file MiB':>9} {'best s':>8} {'best pairs/s':>13} {'median pairs/s':>15} "
        f"{'pairs/CPU s':>12} {'peak MiB':>9}"
    )
    for best, median, peak in rows:
        print(
            f"{best['n']:>9,} {best['mib']:>9.1f} {best['seconds']:>8.2f} {best['rate']:>13,.0f} "
            f"{median['rate']:>15,.0f} {best['cpu_rate']:>12,.0f} {peak:>9.1f}"
        )
    print(
        f"({args.repeat} run{'s' if args.repeat != 1 else ''} per size; wall-clock import time inside the command "
        "process; pairs/CPU s counts the command's own CPU time, not PostgreSQL's, so load hardly moves it; "
        "peak MiB is the command process's VmHWM)"
    )


if __name__ == "__main__":
    main()
