"""Every page at phone width: each demo person follows every link of the demo site in Chromium at 390 × 844;
no page scrolls sideways or shows a code (`needs_rewrite`) where people read words, and the tab shows the
site's icon. Every page the permission tables list as a GET page is reached by some link, so a new page joins
the walk (or is named below with the reason it is not)."""

from __future__ import annotations

import os
from collections import Counter, deque
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.urls import Resolver404, resolve
from playwright.sync_api import Browser, Error, Page, ViewportSize

from tests.browser.conftest import log_in

# A layout check of server-rendered pages: the same HTML on both engines, so it runs on the embedded default.
pytestmark = [pytest.mark.browser, pytest.mark.one_engine, pytest.mark.timeout(600)]

PHONE: ViewportSize = {"width": 390, "height": 844}
PEOPLE = ["coordinator", "annotator1", "annotator2", "reviewer", "researcher", "admin"]
VISITS_PER_PAGE = 1  # one URL of each page per person (a pair, a release…); each person sees other states
SKIPPED_PREFIXES = ("/api/", "/admin/", "/static/", "/media/")

# Pages the walk does not reach, and why. The last group is a gap of the demo, not of the pages: each is laid
# out by its own browser test, and belongs in the demo (and then in this walk) once the demo holds one.
NOT_LINKED = {
    "password_reset_confirm": "opened from the e-mailed link",
    "invitation_accept": "opened from the e-mailed link",
    "session_state": "JSON for the pages' scripts",
    "signed_in": "JSON for the pages' scripts",
    "password_change_done": "where a form sends its person",
    "password_reset_done": "where a form sends its person",
    "password_reset_complete": "where a form sends its person",
    "agreement_calculator_download": "the answer to the calculator's upload form",
    **dict.fromkeys(
        [
            "agreement_report", "agreement_download", "archive_import_detail", "collection_detail", "entity_job",
            "import_detail", "project_archive_detail", "project_archive_download", "trivia_job",
            "validation_import_job", "validation_search_detail", "endpoint_edit", "project_format", "document_qa",
            "trivia_resolve", "validation_model_job",
        ],
        "the demo holds none yet",
    ),
    "item_local_check": "polled by an item card (htmx) while its local-knowledge check runs; the demo checks no "
    "item (a check needs a model server); tests/browser/test_local_check.py watches it",
    "evaluation_nativqa": "linked from a validation project's evaluation pages, and the walk opens another "
    "project's evaluation pages first (one visit per page); tests/evaluation/test_nativqa.py opens it",
    # The demo's evaluation run is judged by no model: a judge needs a model server, and the demo asks none.
    **dict.fromkeys(
        ["evaluation_judgment", "evaluation_judge_check", "evaluation_judgment_csv"],
        "the demo holds no judgment (a judge needs a model server)",
    ),
}  # fmt: skip

# What the page's widest overflow is, for the failure message.
OVERFLOW = """() => {
    const width = document.documentElement.clientWidth;
    const sticksOut = (element) => element && element.getBoundingClientRect().right > width + 1;
    const label = (element) => element.tagName.toLowerCase() + (element.id ? "#" + element.id : "")
        + (typeof element.className === "string" && element.className.trim()
            ? "." + element.className.trim().split(/\\s+/).join(".") : "");
    // Where the overflow starts: an element sticking out of a parent that does not.
    const origins = [...document.querySelectorAll("body *")]
        .filter((element) => sticksOut(element) && !sticksOut(element.parentElement))
        .slice(0, 4)
        .map((element) => `${label(element)} in ${label(element.parentElement)}`
            + ` (right edge ${Math.round(element.getBoundingClientRect().right)})`);
    return {scroll: document.documentElement.scrollWidth, width, wide: origins};
}"""

LINKS = """() => [...document.querySelectorAll("a[href]")]
    .filter((a) => a.origin === location.origin)
    .map((a) => [a.pathname + a.search, a.hasAttribute("download")])"""


@pytest.fixture
def demo(_live_database):
    call_command("demo_setup", stdout=open(os.devnull, "w"))  # noqa: SIM115 -- closed with the process


def _page_name(path: str) -> str | None:
    if path.startswith(SKIPPED_PREFIXES):
        return None
    try:
        match = resolve(urlsplit(path).path)
    except Resolver404:
        return None
    if match.namespace == "admin" or match.url_name in {"logout", None}:
        return None
    return match.url_name


NEXT_FORMS = """() => [...document.forms]
    .filter((form) => form.method === "post")
    .map((form) => new URL(form.action, location.href).pathname)"""

SUBMIT = """(action) => [...document.forms]
    .find((form) => new URL(form.action, location.href).pathname === action)
    .requestSubmit()"""


CODES = """() => {
    // Text a person reads, outside code, keys, file names and what they typed: snake_case words are codes.
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const found = new Set();
    while (walker.nextNode()) {
        const node = walker.currentNode;
        if (node.parentElement.closest("code, kbd, pre, samp, script, style, textarea, [hidden]")) continue;
        // (a file name, `seed_queries.csv`, is a name, not a code)
        const codes = node.textContent.matchAll(/\\b[a-z]{2,}(?:_[a-z0-9]{2,})+\\b(?!\\.\\w)/g);
        for (const match of codes) found.add(match[0]);
    }
    return [...found];
}"""


def _walk(
    page: Page, visits: Counter, overflows: list[str], codes: set[str], person: str, shots: Path | None
) -> Counter:
    """Follow every link from the home page; a queue's *Next* button (a POST form) is pressed once each, so the
    pages a person only reaches through a queue are walked too."""
    mine: Counter = Counter()  # this person's visits of each page
    queue: deque[str] = deque(["/"])
    seen: set[str] = set()
    next_forms: deque[tuple[str, str]] = deque()  # (the page holding the form, its action)
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
        name = _page_name(path)
        if path in seen or name is None or mine[name] >= VISITS_PER_PAGE:
            continue
        seen.add(path)
        try:
            response = page.goto(path)
        except Error as error:  # a file sent without the link saying so: linked, not a page to lay out
            if "Download is starting" not in str(error):
                raise
            visits[name] += 1
            continue
        if response is None or response.status != 200 or "text/html" not in response.headers.get("content-type", ""):
            continue
        mine[name] += 1
        visits[name] += 1
        found = page.evaluate(OVERFLOW)
        if found["scroll"] > found["width"]:
            overflows.append(f"{path} ({name}) as {person}: {found['scroll']} px wide; {found['wide']}")
        codes.update(f"{path} ({name}): {code}" for code in page.evaluate(CODES))
        if shots:  # every page once per person, to look at
            page.screenshot(path=str(shots / f"{name}-{person}.png"), full_page=True)
        for link, download in page.evaluate(LINKS):
            if download:  # a file: linked, not a page to lay out
                visits[_page_name(link) or "not a page"] += 1
            elif link not in seen:
                queue.append(link)
        for action in page.evaluate(NEXT_FORMS):
            if (_page_name(action) or "").endswith("_next") and action not in pressed:
                pressed.add(action)
                next_forms.append((path, action))
    return mine


def test_every_page_fits_a_phone_and_is_reached_by_a_link(browser: Browser, live_server, demo):
    from tests.security.test_permission_matrix import page_tables

    shots = Path(os.environ["SHOTS_DIR"]) if os.environ.get("SHOTS_DIR") else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    visits: Counter = Counter()
    overflows: list[str] = []
    codes: set[str] = set()
    for person in PEOPLE:
        context = browser.new_context(base_url=live_server.url, viewport=PHONE, locale="en-GB")
        page = context.new_page()
        log_in(page, person, "localqa-demo")
        icon = page.evaluate("document.querySelector('link[rel=icon]').href")  # the tab shows localqa's icon
        assert context.request.get(icon).status == 200, icon
        _walk(page, visits, overflows, codes, person, shots)
        context.close()

    assert not overflows, "Pages wider than a phone:\n" + "\n".join(overflows)
    assert not codes, "Codes where people read words:\n" + "\n".join(sorted(codes))
    get_pages = {name for name, (method, _) in page_tables().items() if method == "get"}
    unreached = sorted(get_pages - set(visits) - set(NOT_LINKED) - {"api_schema", "api_docs", "home"})
    assert not unreached, f"No link leads to these pages (link them, or say why in NOT_LINKED): {unreached}"
    reached_after_all = sorted(set(NOT_LINKED) & set(visits))
    assert not reached_after_all, f"The walk reaches these now: take them out of NOT_LINKED: {reached_after_all}"
    print(f"\n{sum(visits.values())} page loads of {len(visits)} pages")
