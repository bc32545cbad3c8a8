"""Keys, page loads and what is readable for the coordinator's friction points, measured in a browser.

    .venv/bin/python bench/friction_coordinator.py [--root DIR] [--port 8141] [--tasks NAME,...] [--people ...]

`--root` measures another checkout (the code before a change: `git archive <commit> | tar -x -C DIR`). Each run
uses a fresh SQLite database in a temporary folder, `manage.py demo_setup` and `manage.py runserver` (the
embedded default), Chromium at 1440x900, and takes the best keyboard path the checkout offers: a filter or search
box where the page has one, else paging through the list with its Next link (reached by Tab or Shift+Tab, the
fewer) and reading every row. A task whose page the checkout lacks prints "—" and why.

Before the server starts, yue-cmn gets a second release after one accepted item's standard answer changed, then
150 submitted items (every fifth by annotator2, the rest by annotator1; four questions hold the word 电车, each
with its submitted revision, so its history names the author) and 10 accepted lead items, 4 of them with an
imported check against the standard page.

Tasks:
- words: the phone walk of tests/browser/test_every_page.py (each demo person follows every link, one URL of each
  page per person, a queue's Next pressed once, 390x844): distinct snake_case codes where people read.
- lists: the items of annotator2, and the items whose question holds 电车, in the coordinator's item list and in
  the review list: keys (typed characters apart), page loads, and rows a person reads to find them.
- readiness: each verification link of release readiness: the count it states, the items the list it opens shows.
- new project: each kind's new-project form filled by keyboard (its required fields, the slug typed where the
  form requires it, the fields the kind cannot do without): keys, characters typed, whether it was created.
- compare: the compare page of the two releases (v1 to v2): values of the changed answer a person reads on it,
  and the clicks to read the old and the new answer.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections import deque
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.friction_authoring import CHROMIUM_ARGS, wait_for_server

HERE = Path(__file__).resolve().parent.parent
PORT = 8141
PASSWORD = "localqa-demo"  # noqa: S105 (demo_setup's published password, in a throwaway database)
AUTHOR = "annotator2"
WORD = "电车"
NEW_ANSWER = "约六万部（二〇二六年）"

SEED = f"""
import json, re
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from annotation.models import PagePair, Project, QAItem, QAItemRevision
from exports import services as exports

User = get_user_model()
project = Project.objects.get(slug="yue-cmn")
coordinator = User.objects.get(username="coordinator")
changed = QAItem.objects.filter(project=project, status="accepted").order_by("pk").first()
old = changed.answer_standard
QAItem.objects.filter(pk=changed.pk).update(answer_standard={NEW_ANSWER!r})
exports.release_build_now(project=project, user=coordinator, changelog="One answer changed")

authors = {{name: User.objects.get(username=name) for name in ("annotator1", "annotator2")}}
pairs = list(PagePair.objects.filter(project=project).order_by("pk"))
start = timezone.now() - timedelta(days=2)
items = []
for number in range(160):
    accepted = number >= 150
    author = authors["annotator2"] if number % 5 == 0 else authors["annotator1"]
    question = f"第{{number}}个问题：这座楼有多高？"
    if number in (7, 48, 91, 133):
        question = f"第{{number}}个问题：香港的{WORD}哪一年开始行驶？"
    items.append(QAItem(
        project=project, pair=pairs[number % len(pairs)], author=author, question=question,
        answer_standard=f"答案{{number}}", answer_local=f"答案{{number}}",
        status="accepted" if accepted else "submitted",
        submitted_at=start + timedelta(minutes=number),
        metadata={{"verification": {{"result": "found"}}}} if accepted and number % 3 == 0 else {{}},
    ))
items = QAItem.objects.bulk_create(items)
QAItemRevision.objects.bulk_create([
    QAItemRevision(item=item, number=1, question=item.question, answer_standard=item.answer_standard,
                   answer_local=item.answer_local, author=item.author, reason="submitted")
    for item in items
])

def patterns(resolvers, prefix=""):
    for entry in resolvers:
        regex = prefix + entry.pattern.regex.pattern.lstrip("^")
        if isinstance(entry, URLResolver):
            yield from patterns(entry.url_patterns, regex.removesuffix(r"\\Z"))
        elif isinstance(entry, URLPattern) and entry.name:
            yield entry.name, re.sub(r"\\(\\?P<\\w+>", "(?:", regex)

print(json.dumps({{
    "changed": changed.pk, "old": old, "new": {NEW_ANSWER!r},
    "author_items": QAItem.objects.filter(project=project, author__username={AUTHOR!r}).exclude(status="draft").count(),
    "word_items": QAItem.objects.filter(project=project, question__contains={WORD!r}).count(),
    "urls": list(patterns(get_resolver().url_patterns)),
}}))
"""


class Counter:
    """Keys pressed, characters typed, clicks and main-frame page loads."""

    def __init__(self, page) -> None:
        self.page = page
        self.keys = self.typed = self.clicks = self.loads = 0
        page.on("load", self._loaded)

    def _loaded(self, _page) -> None:
        self.loads += 1

    def reset(self) -> None:
        self.keys = self.typed = self.clicks = self.loads = 0

    def press(self, key: str) -> None:
        self.keys += 1
        self.page.keyboard.press(key)

    def press_and_load(self, key: str) -> None:
        with self.page.expect_navigation(wait_until="load"):
            self.press(key)

    def type(self, text: str) -> None:
        self.typed += len(text)
        self.page.keyboard.type(text)

    def focused(self, selector: str) -> bool:
        return bool(self.page.evaluate("(s) => Boolean(document.activeElement?.matches(s))", selector))

    def _distance(self, selector: str, key: str, limit: int) -> int | None:
        """Presses of `key` from the page as it opens (the focus nowhere) until `selector` has the focus."""
        self.page.reload(wait_until="load")  # blur() would leave Chromium's Tab starting point where it was
        for presses in range(1, limit + 1):
            self.page.keyboard.press(key)
            if self.focused(selector):
                return presses
        return None

    def reach(self, selector: str, limit: int = 400) -> None:
        """From the page as it opens, Tab forward or Shift+Tab back (from the page's start this Chromium goes to
        its last control) to `selector`, whichever takes fewer keys: both tried, the fewer counted. The reloads
        that put the focus back at the start are not counted as page loads."""
        loads = self.loads
        forward = self._distance(selector, "Tab", limit)
        back = self._distance(selector, "Shift+Tab", min(limit, forward or limit))
        if forward is None and back is None:
            raise SystemExit(f"{selector} not reached by {limit} Tabs on {self.page.url}")
        key, presses = (
            ("Shift+Tab", back) if back is not None and (forward is None or back < forward) else ("Tab", forward)
        )
        self._distance(selector, key, limit)
        self.keys += presses or 0
        self.loads = loads

    def tab_on(self, selector: str, limit: int = 60) -> None:
        """Tab from where the focus is until `selector` has it."""
        for _ in range(limit):
            if self.focused(selector):
                return
            self.press("Tab")
        raise SystemExit(f"{selector} not reached by Tab on {self.page.url}")


def log_in(page, username: str) -> None:
    page.context.clear_cookies()
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("load")


# Words: the phone walk's check (tests/browser/test_every_page.py, CODES), its walk without the layout checks.

CODES = """() => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const found = new Set();
    while (walker.nextNode()) {
        const node = walker.currentNode;
        if (node.parentElement.closest("code, kbd, pre, samp, script, style, textarea, [hidden]")) continue;
        const codes = node.textContent.matchAll(/\\b[a-z]{2,}(?:_[a-z0-9]{2,})+\\b(?!\\.\\w)/g);
        for (const match of codes) found.add(match[0]);
    }
    return [...found];
}"""
LINKS = """() => [...document.querySelectorAll("a[href]")]
    .filter((a) => a.origin === location.origin)
    .map((a) => [a.pathname + a.search, a.hasAttribute("download")])"""
NEXT_FORMS = """() => [...document.forms]
    .filter((form) => form.method === "post")
    .map((form) => new URL(form.action, location.href).pathname)"""
SUBMIT = """(action) => [...document.forms]
    .find((form) => new URL(form.action, location.href).pathname === action)
    .requestSubmit()"""
PEOPLE = ["coordinator", "annotator1", "annotator2", "reviewer", "researcher", "admin"]
SKIPPED_PREFIXES = ("/api/", "/admin/", "/static/", "/media/")


def page_namer(urls: list[list[str]]):
    compiled = [(name, re.compile(regex)) for name, regex in urls]

    def name_of(path: str) -> str | None:
        if path.startswith(SKIPPED_PREFIXES):
            return None
        bare = urlsplit(path).path.lstrip("/")
        for name, regex in compiled:
            if regex.match(bare):
                return None if name == "logout" else name
        return None

    return name_of


def words(page, name_of, people: list[str]) -> tuple[dict[str, set[str]], int]:
    from playwright.sync_api import Error

    codes: dict[str, set[str]] = {}
    loads = 0
    page.set_viewport_size({"width": 390, "height": 844})
    for person in people:
        log_in(page, person)
        mine: set[str] = set()
        queue: deque[str] = deque(["/"])
        seen: set[str] = set()
        next_forms: deque[tuple[str, str]] = deque()
        pressed: set[str] = set()
        while queue or next_forms:
            if not queue:
                source, action = next_forms.popleft()
                page.goto(source)
                with page.expect_navigation():
                    page.evaluate(SUBMIT, action)
                queue.append(urlsplit(page.url).path)
                seen.discard(queue[0])
            path = queue.popleft()
            name = name_of(path)
            if path in seen or name is None or name in mine:
                continue
            seen.add(path)
            try:
                response = page.goto(path)
            except Error as error:  # a file sent without the link saying so
                if "Download is starting" not in str(error):
                    raise
                continue
            if (
                response is None
                or response.status != 200
                or "text/html" not in response.headers.get("content-type", "")
            ):
                continue
            mine.add(name)
            loads += 1
            for code in page.evaluate(CODES):
                codes.setdefault(code, set()).add(name)
            for link, download in page.evaluate(LINKS):
                if not download and link not in seen:
                    queue.append(link)
            for action in page.evaluate(NEXT_FORMS):
                if (name_of(action) or "").endswith("_next") and action not in pressed:
                    pressed.add(action)
                    next_forms.append((path, action))
    page.set_viewport_size({"width": 1440, "height": 900})
    return codes, loads


# Lists


def rows_of(page, table: str) -> list[str]:
    return page.locator(f"{table} tbody tr:not(:has(td.empty))").all_inner_texts()


def page_through(count: Counter, table: str) -> tuple[int, list[str]]:
    """Every page of the list by its Next link; the pages seen and every row read."""
    pages, rows = 1, rows_of(count.page, table)
    while count.page.locator("nav.pager a", has_text="Next").count():
        count.reach("nav.pager a:last-of-type")  # Next (Previous comes before it)
        count.press_and_load("Enter")
        pages += 1
        rows += rows_of(count.page, table)
    return pages, rows


def filter_by(count: Counter, field: str, value: str, button: str) -> None:
    """The filter's field reached by keyboard, the value typed (a menu picks it by typing its name), the form
    sent: Enter in a search box, else Tab on to the Filter button and Enter."""
    count.reach(field)
    count.type(value)
    if count.page.evaluate("() => document.activeElement.tagName") == "SELECT":
        if count.page.evaluate("() => document.activeElement.value") != value:
            raise SystemExit(f"typing {value!r} did not pick it in {field}")
        count.tab_on(button)
    count.press_and_load("Enter")


def list_task(page, path: str, table: str, form: str, field: str, value: str, truth, what: str) -> str:
    count = Counter(page)
    page.goto(path)
    if page.locator(table).count() == 0:
        return f"— (no list at {path})"
    count.reset()
    if page.locator(f"{form} {field}").count():
        filter_by(count, f"{form} {field}", value, f"{form} button[type=submit]")
        pages, rows = page_through(count, table)
        found = sum(1 for row in rows if truth(row))
        how = "the filter" if "select" in field or "author" in field else "the search"
        return (
            f"{count.keys} keys + {count.typed} characters, {count.loads} load(s), {len(rows)} rows to read "
            f"({found} {what}; {how})"
        )
    pages, rows = page_through(count, table)
    found = sum(1 for row in rows if truth(row))
    return (
        f"{count.keys} keys, {count.loads + 1} loads ({pages} pages), {len(rows)} rows to read "
        f"({found} {what} among them; no {'search' if 'text' in field else 'filter'})"
    )


def review_author_without_filter(page, path: str, author: str) -> str:
    """The review list shows no author: each item's history names it (one page per item)."""
    count = Counter(page)
    page.goto(path)
    count.reset()
    pages, rows = page_through(count, "#review-items")
    measured = f"{count.keys} keys, {count.loads + 1} loads ({pages} pages), {len(rows)} rows, no author column"
    page.goto(path)
    first = page.locator("#review-items a", has_text="History").first.get_attribute("href")
    page.goto(first)
    text = page.inner_text("main")
    named = any(name in text for name in ("annotator1", author))  # the seeded items' authors
    return f"{measured}: +{len(rows)} history pages to read the author" + (
        "" if named else " (the history does not name it either)"
    )


def lists(page, facts: dict) -> list[tuple[str, str]]:
    author_truth = lambda row: AUTHOR in row.split("\t")  # noqa: E731 (the item list's author cell)
    word_truth = lambda row: WORD in row  # noqa: E731
    items, review = "/projects/yue-cmn/items/", "/projects/yue-cmn/review/"
    results = [
        (
            f"item list: items of {AUTHOR}",
            list_task(page, items, "main table.table", "form.filters", "select[name=author]", AUTHOR,
                      author_truth, "of theirs"),
        ),
        (
            f"item list: questions with “{WORD}”",
            list_task(page, items, "main table.table", "form.filters", "input[name=text]", WORD, word_truth,
                      "with the word"),
        ),
    ]  # fmt: skip
    page.goto(review)
    if page.locator("#review-items").count() == 0:
        return [*results, ("review list", f"— (no review list at {review})")]
    if page.locator("form.filters select[name=author]").count():
        shown = list_task(page, review, "#review-items", "form.filters", "select[name=author]", AUTHOR,
                          lambda row: True, "listed")  # fmt: skip
    else:
        shown = review_author_without_filter(page, review, AUTHOR)
    results.append((f"review list: items of {AUTHOR} (the list's default: waiting for review)", shown))
    results.append(
        (
            f"review list: questions with “{WORD}”",
            list_task(page, review, "#review-items", "form.filters", "input[name=text]", WORD, word_truth,
                      "with the word"),
        )
    )  # fmt: skip
    return results


def readiness(page) -> list[tuple[str, str]]:
    page.goto("/projects/yue-cmn/releases/")
    checks = page.locator("#readiness li[data-check^=items_verification], #readiness li[data-check=items_not_verified]")
    if checks.count() == 0:
        return [("readiness: verification links", "— (no verification check on the releases page)")]
    found = []
    for index in range(checks.count()):
        check = checks.nth(index)
        label = check.locator(".readiness-label").inner_text()
        stated = int(check.locator(".readiness-count").inner_text())
        href = check.locator("a").get_attribute("href")
        page.goto(href)
        shown = int(page.locator("h1 small").inner_text())
        page.goto("/projects/yue-cmn/releases/")
        found.append((f"readiness: “{label}”", f"link states {stated}, its list shows {shown} ({href})"))
    return found


# New project

FORMS = {
    "Wikipedia QA": ("/projects/new/", {}),
    "validation": ("/validation/new/", {"location": "Qatar"}),
    "trivia": ("/trivia/new/", {"categories": "Food"}),
    "entity questions": (
        "/entities/new/",
        {"attribute-0-label": "Founding year", "attribute-0-inductive": "In which year was {entity} founded?",
         "attribute-0-deductive": "Which company was founded in {value}?"},
    ),
}  # fmt: skip
EMPTY_REQUIRED = """(form) => [...document.querySelector(form).elements]
    .filter((field) => field.required && !field.value && field.type !== "hidden").map((field) => field.name)"""


def new_project(page) -> list[tuple[str, str]]:
    results = []
    for kind, (path, needed) in FORMS.items():
        count = Counter(page)
        response = page.goto(path)
        if response is None or response.status != 200:
            results.append((f"new project: {kind}", f"— ({path} answers {response and response.status})"))
            continue
        form = "main form[method=post]:has(input[name=name])"
        name = f"Bench {kind} 2"
        values = {field: "" for field in page.evaluate(EMPTY_REQUIRED, form)}
        values.update(needed)
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        values = {field: name if field == "name" else slug if field == "slug" else value or "x"
                  for field, value in values.items()}  # fmt: skip
        order = page.evaluate(
            "([form, names]) => [...document.querySelector(form).elements].map((f) => f.name)"
            ".filter((n) => names.includes(n))",
            [form, list(values)],
        )
        missing = set(values) - set(order)
        if missing:
            results.append((f"new project: {kind}", f"— (the form has no {', '.join(sorted(missing))})"))
            continue
        count.reset()
        count.reach(f"{form} [name='{order[0]}']")
        for field in order:
            count.tab_on(f"{form} [name='{field}']")
            count.type(values[field])
        if page.evaluate("() => document.activeElement.tagName") == "TEXTAREA":
            count.tab_on(f"{form} button[type=submit]")
        count.press_and_load("Enter")
        created = not urlsplit(page.url).path.endswith("/new/")
        typed = ", ".join(field for field in order)
        results.append(
            (
                f"new project: {kind}",
                f"{count.keys} keys + {count.typed} characters ({typed}); "
                + ("created" if created else "refused: " + page.locator(".error, .errorlist").first.inner_text()),
            )
        )
    return results


# Compare


def compare(page, facts: dict) -> list[tuple[str, str]]:
    page.goto("/projects/yue-cmn/releases/compare/")
    if page.locator("main form.filters").count() == 0:
        return [("release compare", "— (no compare page)")]
    count = Counter(page)
    count.reset()
    count.reach("main form.filters button[type=submit]")
    count.press_and_load("Enter")
    diff = page.locator("#diff")
    text = diff.inner_text()
    readable = sum(1 for value in (facts["old"], facts["new"]) if value in text)
    changed_rows = page.locator("#diff table tbody tr").all_inner_texts()
    shows = " / ".join(" | ".join(cell.strip() for cell in row.split("\t")) for row in changed_rows)
    clicks = 0 if readable == 2 else None
    if clicks is None:  # the values live in the releases' files: the list of releases, each one's archive
        clicks, seen = 1, []
        page.locator("main a[href$='/releases/']").first.click()
        page.wait_for_load_state("load")
        for version, value in (("1", facts["old"]), ("2", facts["new"])):
            row = page.locator("main table tr", has=page.locator(f"a:text-is('v{version}')"))
            with page.expect_download() as download:
                row.locator("a", has_text="Download").first.click()
            clicks += 1
            with zipfile.ZipFile(download.value.path()) as archive:
                seen.append(any(value in archive.read(name).decode(errors="replace") for name in archive.namelist()))
        readable_by_clicks = f"{clicks} clicks (the releases' list, each release's archive; then searched by the id)"
        if not all(seen):
            readable_by_clicks += f"; values found in the archives: {seen}"
    else:
        readable_by_clicks = "0 clicks"
    return [
        ("release compare: the changed item's row", shows or "(no row)"),
        ("release compare: old and new answer readable on the page", f"{readable} of 2; {readable_by_clicks}"),
    ]


TASKS = ["words", "lists", "readiness", "new project", "compare"]


def serve(root: Path, database: Path, port: int) -> tuple[subprocess.Popen, dict]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DEBUG": "true", "LOGIN_MAX_FAILURES": "1000"}
    env.pop("REDIS_URL", None)
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=root, env=env, check=True)
    subprocess.run([python, "manage.py", "demo_setup"], cwd=root, env=env, check=True, capture_output=True)
    out = subprocess.run([python, "manage.py", "shell", "-c", SEED], cwd=root, env=env, check=True, capture_output=True)
    facts = json.loads(out.stdout.decode().strip().splitlines()[-1])
    server = subprocess.Popen(
        [python, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    wait_for_server(port)
    return server, facts


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    parser.add_argument("--port", type=int, default=PORT, help="the port the measured server listens on")
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated, of: " + ", ".join(TASKS))
    parser.add_argument("--people", default=",".join(PEOPLE), help="who walks the pages in the words task")
    args = parser.parse_args()
    names = [name.strip() for name in args.tasks.split(",")]
    unknown = [name for name in names if name not in TASKS]
    if unknown:
        parser.error(f"unknown task(s): {', '.join(unknown)}")
    print(f"checkout: {args.root}")
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        server, facts = serve(args.root, Path(tmp) / "bench.sqlite3", args.port)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), headless=True, args=CHROMIUM_ARGS
                )
                context = browser.new_context(
                    base_url=f"http://127.0.0.1:{args.port}", viewport={"width": 1440, "height": 900}, locale="en-GB"
                )
                context.set_default_timeout(30_000)
                page = context.new_page()
                for name in TASKS:  # words first: the others add projects and releases the walk would see
                    if name not in names:
                        continue
                    if name == "words":
                        codes, walked = words(page, page_namer(facts["urls"]), args.people.split(","))
                        listed = "; ".join(
                            f"{code} ({', '.join(sorted(pages))})" for code, pages in sorted(codes.items())
                        )
                        rows.append(
                            (f"words: snake_case codes where people read ({walked} pages walked)",
                             f"{len(codes)} on {len(set().union(*codes.values()))} pages"
                             + (f": {listed}" if listed else ""))
                        )  # fmt: skip
                        continue
                    log_in(page, "coordinator")
                    if name == "lists":
                        rows += lists(page, facts)
                    elif name == "readiness":
                        rows += readiness(page)
                    elif name == "new project":
                        rows += new_project(page)
                    elif name == "compare":
                        rows += compare(page, facts)
                browser.close()
        finally:
            server.terminate()
            server.wait(10)
    width = max(len(task) for task, _ in rows)
    for task, measured in rows:
        print(f"{task:<{width}}  {measured}")


if __name__ == "__main__":
    main()
