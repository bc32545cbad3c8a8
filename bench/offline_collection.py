"""How long a Wikipedia collection keeps the coordinator waiting when Wikipedia cannot be reached, and what it says.

    .venv/bin/python bench/offline_collection.py [--root DIR] [--titles 3]

The embedded default (SQLite, tasks run in the request), a fresh database in a temporary folder with the demo
(`demo_setup`); Wikipedia is out of reach by pointing WIKIPEDIA_API_URL at a closed local port (every request is a
refused connection, as on a machine without network; the client's own retries and waits are the defaults). The
coordinator starts a collection of `--titles` titles on the Bavarian project's page. Printed: the seconds until the
page answers, the collection's status and reason, and each title's outcome. `--root` measures another checkout
(`git archive <commit> | tar -x -C DIR`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
TITLES = ["Weißwurscht", "Minga", "Oktobafest", "Brezn", "Maibaam", "Leberkas", "Obazda", "Radi", "Kini", "Wiesn"]

MEASURE = """
import time
from django.contrib.auth import get_user_model
from django.test import Client
from annotation.models import Collection

client = Client()
client.force_login(get_user_model().objects.get(username="coordinator"))
started = time.monotonic()
response = client.post("/projects/bar-deu/collect/", {{"titles": {titles!r}}}, HTTP_HOST="localhost")
seconds = time.monotonic() - started
collection = Collection.objects.order_by("-pk").first()
print(f"answered        {{response.status_code}} after {{seconds:.1f}} s")
print(f"status          {{collection.status}}")
print(f"reason          {{collection.error or '(none)'}}")
for title in collection.titles.order_by("position"):
    print(f"title           {{title.title}}: {{title.outcome}}{{' (' + title.error + ')' if title.error else ''}}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    parser.add_argument("--titles", type=int, default=3, help=f"titles in the collection (at most {len(TITLES)})")
    args = parser.parse_args()
    titles = "\n".join(TITLES[: args.titles])
    print(f"checkout: {args.root}")
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{Path(tmp) / 'bench.sqlite3'}",
            "DEBUG": "true",
            "WIKIPEDIA_API_URL": "http://127.0.0.1:9/{wiki}/w/api.php",  # the discard port: nothing listens
        }
        for name in ("REDIS_URL", "CELERY_BROKER_URL", "WIKIPEDIA_MAX_RETRIES", "WIKIPEDIA_RETRY_WAIT"):
            env.pop(name, None)
        python = sys.executable
        subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=args.root, env=env, check=True)
        subprocess.run([python, "manage.py", "demo_setup"], cwd=args.root, env=env, check=True, capture_output=True)
        measured = subprocess.run(
            [python, "manage.py", "shell", "-c", MEASURE.format(titles=titles)],
            cwd=args.root, env=env, check=True, capture_output=True, text=True,
        )  # fmt: skip
        shown = ("answered", "status", "reason", "title")  # not the shell's banner nor the client's request log
        print("\n".join(line for line in measured.stdout.splitlines() if line.startswith(shown)))


if __name__ == "__main__":
    main()
