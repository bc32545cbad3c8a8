"""How long a Wikipedia collection keeps the coordinator waiting when Wikipedia cannot be reached, in a browser.

    .venv/bin/python bench/offline_collection.py [--root DIR] [--titles 3] [--port 8119]

The embedded default (SQLite, no broker: the job runs on a thread of the web server, before in the request), a
fresh database in a temporary folder with the demo (`demo_setup`), `manage.py runserver` (the server that runs the
threads), Chromium at 1440x900. Wikipedia is out of reach by pointing WIKIPEDIA_API_URL at a closed local port
(every request is a refused connection, as on a machine without network; the client's own retries and waits are
the defaults). The coordinator opens the collection form of the Bavarian project (bar-deu), types `--titles` titles
one a line and starts the collection, all by keyboard. Printed: the keys (typed text apart) and page loads that
took, the seconds until the page answers (the next page loaded), what it then shows, the seconds until the page
shows the reason (it polls with htmx), the reason, and each title's outcome as the page lists it on a reload.
`--root` measures another checkout (`git archive <commit> | tar -x -C DIR`); nothing of it is imported here.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.friction_authoring import CHROMIUM_ARGS, PORT
from bench.friction_judging import Counter, log_in, serve
from bench.friction_members import tab_on_to

HERE = Path(__file__).resolve().parent.parent
TITLES = ["Weißwurscht", "Minga", "Oktobafest", "Brezn", "Maibaam", "Leberkas", "Obazda", "Radi", "Kini", "Wiesn"]
WAIT_MS = 300_000  # the before code answers only after every retry

# Each title's outcome as the collection page's table lists it.
TITLE_ROWS = """() => [...document.querySelectorAll("main table:not(.outcomes) tbody tr")]
    .filter((row) => row.cells.length > 2)
    .map((row) => row.cells[1].innerText.trim() + ": "
        + row.cells[2].innerText.trim().replace(/\\s*\\n\\s*/g, " — "))"""


def offline_environment() -> None:
    """The server started by `serve` inherits this process's environment: Wikipedia on the discard port, no broker."""
    os.environ["WIKIPEDIA_API_URL"] = "http://127.0.0.1:9/{wiki}/w/api.php"  # nothing listens there
    defaults = ("REDIS_URL", "CELERY_BROKER_URL", "CELERY_TASK_ALWAYS_EAGER", "JOBS_IN_THREADS", "JOB_THREADS")
    for name in (*defaults, "WIKIPEDIA_MAX_RETRIES", "WIKIPEDIA_RETRY_WAIT"):
        os.environ.pop(name, None)


def collect(page, titles: list[str]) -> None:
    page.goto("/projects/bar-deu/collect/")
    count = Counter(page)
    count.tab_to("textarea[name=titles]")
    for index, title in enumerate(titles):
        if index:
            count.press("Enter")  # the next line
        count.type(title)
    tab_on_to(count, "main form button[type=submit]")
    started = time.monotonic()
    with page.expect_navigation(wait_until="load", timeout=WAIT_MS):
        count.press("Enter")
    answered = time.monotonic() - started
    state = page.locator("#collection-state")
    shown = state.inner_text() if state.count() else "no state"
    if page.locator("#collection-status progress").count():
        shown += ", with a progress bar"
    if page.locator("#collection-status[hx-get]").count():
        shown += " (and polls)"
    page.wait_for_selector("#collection-error", state="attached", timeout=WAIT_MS)  # the poll swaps it in
    reason = time.monotonic() - started
    print(f"keys            {count.keys} (and {count.typed} characters typed)")
    print(f"page loads      {count.loads}")
    print(f"answered        after {answered:.1f} s ({page.url.split('/projects/')[-1]})")
    print(f"page shows      {shown}")
    print(f"reason shown    after {reason:.1f} s")
    print(f"status          {page.locator('#collection-state').inner_text()}")
    print(f"reason          {page.locator('#collection-error').inner_text()}")
    page.reload()  # the titles' table is not polled; not part of the task
    for row in page.evaluate(TITLE_ROWS):
        print(f"title           {row}")


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    parser.add_argument("--titles", type=int, default=3, help=f"titles in the collection (at most {len(TITLES)})")
    parser.add_argument("--port", type=int, default=PORT, help="the port the measured server listens on")
    args = parser.parse_args()
    print(f"checkout: {args.root}")
    offline_environment()
    with tempfile.TemporaryDirectory() as tmp:
        server = serve(args.root, Path(tmp) / "bench.sqlite3", args.port, decisions=0)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), headless=True, args=CHROMIUM_ARGS
                )
                context = browser.new_context(
                    base_url=f"http://127.0.0.1:{args.port}", viewport={"width": 1440, "height": 900}, locale="en-GB"
                )
                context.set_default_timeout(20_000)
                page = context.new_page()
                log_in(page, "coordinator")
                collect(page, TITLES[: args.titles])
                browser.close()
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
