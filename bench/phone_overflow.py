"""Pages of the demo site that scroll sideways on a phone (390x844), walked in Chromium as each demo person.

    .venv/bin/python bench/phone_overflow.py [--root DIR] [--port 8119] [--people coordinator,annotator1,...]

`--root` measures another checkout (the code before a change: `git worktree add --detach DIR <commit>`, with the
.venv linked in). Each run uses a fresh SQLite database in a temporary folder, `manage.py demo_setup` and
`manage.py runserver` (the embedded default).

The walk is tests/browser/test_every_page.py's: each person signs in and follows every same-site link from home,
one URL of each page (Django's URL name) per person, and presses each queue's *Next* form once so the pages only
a queue leads to are walked too; /api/, /admin/, /static/, /media/ and log-out are left out. The URL names come
from the measured checkout (a `manage.py shell` there resolves each path). A page scrolls sideways when
`document.documentElement.scrollWidth > innerWidth` once it has loaded (Chromium's scrollbars here are overlays:
innerWidth and clientWidth are both 390).

Printed: pages walked and how many scroll sideways, as visits (a page seen by a person) and as distinct pages;
then each page that does, with its width, the people who saw it so and where the overflow starts.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import defaultdict, deque
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.friction_authoring import CHROMIUM_ARGS, PORT
from bench.friction_judging import log_in, serve

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

HERE = Path(__file__).resolve().parent.parent
PEOPLE = ["coordinator", "annotator1", "annotator2", "reviewer", "researcher", "admin"]
PHONE: ViewportSize = {"width": 390, "height": 844}
SKIPPED_PREFIXES = ("/api/", "/admin/", "/static/", "/media/")

# The width and, when wider than the window, where the overflow starts: elements sticking out of a parent that
# does not (as tests/browser/test_every_page.py reports them).
OVERFLOW = """() => {
    const width = window.innerWidth;
    const sticksOut = (element) => element && element.getBoundingClientRect().right > width + 1;
    const label = (element) => element.tagName.toLowerCase() + (element.id ? "#" + element.id : "")
        + (typeof element.className === "string" && element.className.trim()
            ? "." + element.className.trim().split(/\\s+/).join(".") : "");
    const scroll = document.documentElement.scrollWidth;
    const origins = scroll <= width ? [] : [...document.querySelectorAll("body *")]
        .filter((element) => sticksOut(element) && !sticksOut(element.parentElement))
        .slice(0, 3)
        .map((element) => `${label(element)} in ${label(element.parentElement)}`);
    return {scroll, width, origins};
}"""

LINKS = """() => [...document.querySelectorAll("a[href]")]
    .filter((a) => a.origin === location.origin && !a.hasAttribute("download"))
    .map((a) => a.pathname + a.search)"""

NEXT_FORMS = """() => [...document.forms]
    .filter((form) => form.method === "post")
    .map((form) => new URL(form.action, location.href).pathname)"""

FORM = "[...document.forms].find((form) => new URL(form.action, location.href).pathname === action)"
HAS_FORM = f"(action) => Boolean({FORM})"
SUBMIT = f"(action) => {FORM}.requestSubmit()"

# Runs in the measured checkout: one path a line in, its URL name a line out ("" when it is not a page), marked
# (the shell may print other lines first).
RESOLVER = """
import sys
from urllib.parse import urlsplit
from django.urls import Resolver404, resolve
for line in sys.stdin:
    try:
        match = resolve(urlsplit(line.rstrip("\\n")).path)
        name = "" if match.namespace == "admin" or match.url_name in (None, "logout") else match.url_name
    except Resolver404:
        name = ""
    print("name:" + name, flush=True)
"""


class Names:
    """URL names of paths, from the measured checkout's own URLconf."""

    def __init__(self, root: Path, database: Path) -> None:
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DEBUG": "true"}
        env.pop("REDIS_URL", None)
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "shell", "-c", RESOLVER],
            cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.known: dict[str, str | None] = {}

    def __call__(self, path: str) -> str | None:
        if path.startswith(SKIPPED_PREFIXES):
            return None
        key = urlsplit(path).path
        if key not in self.known:
            assert self.process.stdin and self.process.stdout
            self.process.stdin.write(key + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
            while line and not line.startswith("name:"):
                line = self.process.stdout.readline()
            self.known[key] = line.strip().removeprefix("name:") or None
        return self.known[key]

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(10)


class Wide(NamedTuple):
    path: str
    person: str
    scroll: int
    origins: list[str]


def walk(page, names: Names, person: str, wide: dict[str, list[Wide]]) -> set[str]:
    """Every page this person reaches from home (one URL per page name); returns the names of the pages walked."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    walked: set[str] = set()
    queue: deque[str] = deque(["/"])
    seen: set[str] = set()
    next_forms: deque[tuple[str, str]] = deque()  # (the page holding the form, its action)
    pressed: set[str] = set()
    while queue or next_forms:
        if not queue:
            source, action = next_forms.popleft()
            page.goto(source)
            try:
                if not page.evaluate(HAS_FORM, action):
                    raise PlaywrightTimeoutError("the form is gone")
                with page.expect_navigation(timeout=15_000):
                    page.evaluate(SUBMIT, action)
            except PlaywrightTimeoutError:  # the queue changed since (another person's walk took its work)
                print(f"  ({person}: {action} from {source} led nowhere)", flush=True)
                continue
            queue.append(urlsplit(page.url).path)
            seen.discard(queue[0])
        path = queue.popleft()
        name = names(path)
        if path in seen or name is None or name in walked:
            continue
        seen.add(path)
        try:
            response = page.goto(path)
        except Exception as error:  # a file sent without the link saying so: not a page to lay out
            if "Download is starting" not in str(error):
                raise
            continue
        if response is None or response.status != 200 or "text/html" not in response.headers.get("content-type", ""):
            continue
        walked.add(name)
        found = page.evaluate(OVERFLOW)
        if found["scroll"] > found["width"]:
            wide[name].append(Wide(path, person, found["scroll"], found["origins"]))
        queue.extend(link for link in page.evaluate(LINKS) if link not in seen)
        for action in page.evaluate(NEXT_FORMS):
            if (names(action) or "").endswith("_next") and action not in pressed:
                pressed.add(action)
                next_forms.append((path, action))
    return walked


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    parser.add_argument("--port", type=int, default=PORT, help="the port the measured server listens on")
    parser.add_argument("--people", default=",".join(PEOPLE), help="comma-separated demo users to walk as")
    args = parser.parse_args()
    people = [person.strip() for person in args.people.split(",")]
    print(f"checkout: {args.root}")
    with tempfile.TemporaryDirectory() as tmp:
        database = Path(tmp) / "bench.sqlite3"
        server = serve(args.root, database, args.port, decisions=0)
        names = Names(args.root, database)
        wide: dict[str, list[Wide]] = defaultdict(list)
        visits = 0
        pages: set[str] = set()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), headless=True, args=CHROMIUM_ARGS
                )
                for person in people:
                    context = browser.new_context(
                        base_url=f"http://127.0.0.1:{args.port}", viewport=PHONE, locale="en-GB"
                    )
                    context.set_default_timeout(30_000)
                    page = context.new_page()
                    log_in(page, person)
                    before = sum(len(found) for found in wide.values())
                    walked = walk(page, names, person, wide)
                    visits += len(walked)
                    pages |= walked
                    now = sum(len(found) for found in wide.values())
                    print(f"{person:<12} {len(walked):>4} pages walked, {now - before:>3} scroll sideways")
                    context.close()
                browser.close()
        finally:
            names.close()
            server.terminate()
            server.wait(10)
    scrolling = sum(len(found) for found in wide.values())
    print(f"visits (a page seen by a person): {visits}, of which scroll sideways at 390 px: {scrolling}")
    print(f"distinct pages walked: {len(pages)}, of which scroll sideways for someone: {len(wide)}")
    for name in sorted(wide):
        found = wide[name]
        widest = max(found, key=lambda item: item.scroll)
        who = ", ".join(item.person for item in found)
        print(f"  {name}: {widest.scroll} px at {widest.path} ({who}); starts at {'; '.join(widest.origins)}")


if __name__ == "__main__":
    main()
