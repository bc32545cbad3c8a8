"""How long a Wikipedia collection keeps the coordinator waiting when Wikipedia cannot be reached, and what it says.

    .venv/bin/python bench/offline_collection.py [--root DIR] [--titles 3]

The embedded default (SQLite, no broker: the job runs on a thread of the web process, before in the request), a
fresh database in a temporary folder with the demo (`demo_setup`); Wikipedia is out of reach by pointing
WIKIPEDIA_API_URL at a closed local port (every request is a refused connection, as on a machine without network;
the client's own retries and waits are the defaults). The coordinator starts a collection of `--titles` titles on
the Bavarian project's page. Printed: the seconds until the start answers, what the collection's page then shows,
the seconds until its poll names the reason, the collection's status and reason, and each title's outcome. `--root`
measures another checkout (`git archive <commit> | tar -x -C DIR`).
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
import re
import time
from django.contrib.auth import get_user_model
from django.test import Client
from wikiqa.models import Collection

client = Client()
client.force_login(get_user_model().objects.get(username="coordinator"))
client.get("/projects/bar-deu/collect/", HTTP_HOST="localhost")  # the form, as the coordinator opens it first
started = time.monotonic()
response = client.post("/projects/bar-deu/collect/", {{"titles": {titles!r}}}, HTTP_HOST="localhost")
seconds = time.monotonic() - started
collection = Collection.objects.order_by("-pk").first()
url = f"/projects/bar-deu/collections/{{collection.pk}}/"
page = client.get(url, HTTP_HOST="localhost").content.decode()
state = re.search(r'id="collection-state">([^<]*)<', page).group(1)
print(f"answered        {{response.status_code}} after {{seconds:.1f}} s")
print(f"page shows      {{state}}{{' with a progress bar' if '<progress' in page else ''}}")
# The page's poll (htmx) until it names the reason; a job left running on a thread is waited for.
while 'id="collection-error"' not in page and time.monotonic() - started < 300:
    time.sleep(0.1)
    page = client.get(url, HTTP_HOST="localhost", HTTP_HX_REQUEST="true").content.decode()
reason = time.monotonic() - started
print(f"reason shown    after {{reason:.1f}} s" if 'id="collection-error"' in page else "reason shown    never")
collection.refresh_from_db()
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
        defaults = ("REDIS_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "JOBS_IN_THREADS", "JOB_THREADS")
        for name in (*defaults, "WIKIPEDIA_MAX_RETRIES", "WIKIPEDIA_RETRY_WAIT"):
            env.pop(name, None)
        python = sys.executable
        subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=args.root, env=env, check=True)
        subprocess.run([python, "manage.py", "demo_setup"], cwd=args.root, env=env, check=True, capture_output=True)
        measured = subprocess.run(
            [python, "manage.py", "shell", "-c", MEASURE.format(titles=titles)],
            cwd=args.root, env=env, check=True, capture_output=True, text=True,
        )  # fmt: skip
        # Not the shell's banner nor the client's request log.
        shown = ("answered", "page shows", "reason shown", "status", "reason", "title")
        print("\n".join(line for line in measured.stdout.splitlines() if line.startswith(shown)))


if __name__ == "__main__":
    main()
