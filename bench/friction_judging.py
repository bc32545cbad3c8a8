"""Keys and page loads a judging screen costs per decision, measured in a browser on the demo's projects.

    .venv/bin/python bench/friction_judging.py [--root DIR] [--decisions 3] [--port 8119] [--tasks NAME,...]

`--root` measures another checkout (the code before a change: `git archive <commit> | tar -x -C DIR`). Each run
uses a fresh SQLite database in a temporary folder, `manage.py demo_setup` and `manage.py runserver` (the
embedded default), Chromium at 1440x900, and takes the best keyboard path the checkout offers: a form that
listens for one-key choices (`data-choice-keys`) is driven by its keys; a form without them by Tab to each
control and Enter or Space, as a keyboard user would.

Before the server starts, `--decisions` trivia items are added in review and `--decisions` more accepted and
waiting for a translator (annotator2's, through the services), so the trivia tasks have enough to do.

Tasks:
- entity verification (reviewer): accept `--decisions` generated questions in a row, from the entity project's page.
- validation (reviewer): judge `--decisions` collected pairs in a row (every task the form asks for, first choice
  each), from the validation project's page.
- trivia review (reviewer): `--decisions` items in a row, every criterion met, from the trivia project's page.
- translation (annotator1): translate `--decisions` items in a row (the question and each candidate typed), from
  the trivia project's page.
- labels (coordinator): topic and region of each kept pair the coordinator has not labelled (the demo holds 2, in
  yue-cmn), from the first pair the list of pairs to label opens.
Printed per task: decisions made, keys per decision (typed text apart, as characters), page loads per decision.
Reaching the first item of a task is not counted; what it takes to reach each next one is.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.friction_authoring import CHROMIUM_ARGS, PORT, wait_for_server

SEED = """
from django.contrib.auth import get_user_model
from annotation.models import Project
try:
    from multichoice.services.items import trivia_item_create, trivia_items
    from multichoice.services.reviews import trivia_review
except ImportError:  # a checkout from before services became packages
    from multichoice.services import trivia_item_create, trivia_items, trivia_review

User = get_user_model()
project = Project.objects.get(slug="bavaria-trivia")
author, reviewer = User.objects.get(username="annotator2"), User.objects.get(username="reviewer")
for number in range({decisions}):
    for stage in ("review", "translate"):
        item = trivia_item_create(
            project=project, user=author, category="Essen und Trinken", subset="local", difficulty="easy",
            question=f"Bench {{stage}} {{number}}: Wann stellt man in Bayern den Maibaum auf?",
            candidates=["Am 1. Mai", "Am 1. Juni", "Zu Ostern", "Zu Pfingsten"], answer=0,
        )
        if stage == "translate":
            met = {{criterion["key"]: True for criterion in project.review_criteria}}
            trivia_review(item=trivia_items(project).get(pk=item.pk), user=reviewer, criteria=met, comment="")
"""

HERE = Path(__file__).resolve().parent.parent
PASSWORD = "localqa-demo"  # noqa: S105 (demo_setup's published password, in a throwaway database)


class Counter:
    """Keys pressed, characters typed and main-frame page loads, for one task."""

    def __init__(self, page) -> None:
        self.page = page
        self.keys = 0
        self.typed = 0
        self.loads = 0
        page.on("load", self._loaded)

    def type(self, text: str) -> None:
        self.typed += len(text)
        self.page.keyboard.type(text)

    def focused(self, selector: str) -> bool:
        return bool(self.page.evaluate("(s) => document.activeElement && document.activeElement.matches(s)", selector))

    def _loaded(self, _page) -> None:
        self.loads += 1

    def press(self, key: str) -> None:
        self.keys += 1
        self.page.keyboard.press(key)

    def press_and_load(self, key: str) -> None:
        """A key that sends a form or follows a link: returns once the page it opens has loaded."""
        with self.page.expect_navigation(wait_until="load"):
            self.press(key)

    def tab_to(self, selector: str, limit: int = 200) -> None:
        """Tab from the page's start until `selector` has the focus; each Tab counted."""
        self.page.evaluate("document.activeElement && document.activeElement.blur()")
        self.page.evaluate("window.scrollTo(0, 0)")
        for _ in range(limit):
            if self.focused(selector):
                return
            self.press("Tab")
        raise SystemExit(f"{selector} not reached by {limit} Tabs on {self.page.url}")


class Result(NamedTuple):
    decisions: int
    keys: float  # per decision
    typed: float  # characters typed per decision
    loads: float  # per decision


def result(count: Counter, start: tuple[int, int, int], decisions: int) -> Result:
    keys, typed, loads = start
    return Result(
        decisions,
        (count.keys - keys) / decisions,
        (count.typed - typed) / decisions,
        (count.loads - loads) / decisions,
    )


def started(count: Counter) -> tuple[int, int, int]:
    return count.keys, count.typed, count.loads


def refused(page, task: str) -> None:
    if page.locator(".message.error").count():
        raise SystemExit(f"{task} refused: {page.locator('.message.error').first.inner_text()}")


def entity_verification(page, decisions: int) -> Result:
    page.goto("/projects/bavaria-companies/entities/")
    count = Counter(page)
    count.tab_to("#entity-verify-next")
    count.press_and_load("Enter")
    start = started(count)  # reaching the first question is not a decision
    for _ in range(decisions):
        page.wait_for_selector("#entity-verify-form")
        if page.locator("#entity-verify-form[data-keys-ready]").count():
            page.locator("h1").click()  # the focus on the page (a click, not a key: the screen opens this way)
            count.press_and_load("a")
        else:  # Tab to Accept, Enter; the project page; Tab to Verify next, Enter
            count.tab_to("#entity-verify-form button[value=accept]")
            count.press_and_load("Enter")
            count.tab_to("#entity-verify-next")
            count.press_and_load("Enter")
        refused(page, "entity verification")
    return result(count, start, decisions)


CHOICE_GROUPS = """() => {
    const form = document.querySelector("#validation-form");
    const groups = new Map();
    for (const input of form.querySelectorAll("input[type=radio]")) {
        if (!groups.has(input.name)) groups.set(input.name, input);
    }
    return [...groups.values()].map((input) => [input.name, input.dataset.key || "", input.id || ""]);
}"""


def validation(page, decisions: int) -> Result:
    page.goto("/projects/doha-val/validation/")
    count = Counter(page)
    count.tab_to("#validation-next")
    count.press_and_load("Enter")
    start = started(count)
    for _ in range(decisions):
        page.wait_for_selector("#validation-form")
        keyed = page.locator("#validation-form[data-keys-ready]").count() > 0
        groups = page.evaluate(CHOICE_GROUPS)
        if keyed:
            page.locator("h1").click()
        for name, key, _id in groups:
            if keyed and name.startswith("likert_"):
                count.press("4")  # scores the first row not scored yet (likert_keys.js)
            elif keyed and key:
                count.press(key)
            else:
                count.tab_to(f"#validation-form input[name={name}]")
                count.press("Space")
        if keyed:
            count.press_and_load("Enter")
        else:
            count.tab_to("#validation-form button[type=submit]")
            count.press_and_load("Enter")
        if page.locator("#form-errors").count():
            raise SystemExit(f"validation: the form was refused: {page.locator('#form-errors').inner_text()}")
    return result(count, start, decisions)


def trivia_review(page, decisions: int) -> Result:
    page.goto("/projects/bavaria-trivia/trivia/")
    count = Counter(page)
    count.tab_to("#trivia-review-next")
    count.press_and_load("Enter")
    start = started(count)
    for _ in range(decisions):
        page.wait_for_selector("#trivia-review-form")
        criteria = page.locator("#trivia-review-form input[name=criteria]")
        if page.locator("#trivia-review-form[data-keys-ready] button[data-key=a]").count():
            page.locator("h1").click()
            count.press_and_load("a")  # every criterion met, saved, the next item opens
        elif page.locator("#trivia-review-form[data-keys-ready]").count():
            page.locator("h1").click()
            for index in range(criteria.count()):
                count.press(criteria.nth(index).get_attribute("data-key") or "")
            count.press_and_load("Enter")
        else:  # Tab to each criterion, Space; Tab to the save button, Enter; the project page; Review next
            for index in range(criteria.count()):
                count.tab_to(
                    f"#trivia-review-form input[name=criteria][value={criteria.nth(index).get_attribute('value')}]"
                )
                count.press("Space")
            count.tab_to("#trivia-review-form button[type=submit]")
            count.press_and_load("Enter")
            if not page.locator("#trivia-review-form").count():
                count.tab_to("#trivia-review-next")
                count.press_and_load("Enter")
        refused(page, "trivia review")
    return result(count, start, decisions)


def translation(page, decisions: int) -> Result:
    page.goto("/projects/bavaria-trivia/trivia/")
    count = Counter(page)
    count.tab_to("#trivia-translate-next")
    count.press_and_load("Enter")
    start = started(count)
    for number in range(decisions):
        page.wait_for_selector("#trivia-translate-form")
        form = "#trivia-translate-form"
        fields = [f"{form} textarea[name=target_question]"] + [
            f"{form} input[name=target{index}]"
            for index in range(page.locator(f"{form} input[name^=target]:not([type=hidden])").count())
        ]
        if not count.focused(fields[0]):
            count.tab_to(fields[0])
        for index, field in enumerate(fields):
            if index:
                count.press("Tab")
                if not count.focused(field):
                    raise SystemExit(f"translation: Tab did not lead to {field} on {page.url}")
            count.type(f"Bench {number}.{index}: when is the maypole raised?" if index == 0 else f"Answer {index}")
        if page.locator(f"{form}[data-keys-ready] [data-save-next]").count():
            count.press_and_load("Control+Enter")  # saved, the next item to translate opens
        else:  # Tab to Save the translation, Enter; the project page; Tab to Translate next, Enter
            count.tab_to(f"{form} button[type=submit]")
            count.press_and_load("Enter")
            refused(page, "translation")
            count.tab_to("#trivia-translate-next")
            count.press_and_load("Enter")
        refused(page, "translation")
    return result(count, start, decisions)


def labels(page, decisions: int) -> Result:
    page.goto("/projects/yue-cmn/labels/?todo=1")
    links = page.locator("main table a[href$='/labels/']")
    decisions = min(decisions, links.count())
    count = Counter(page)
    count.tab_to("main table a[href$='/labels/']")
    count.press_and_load("Enter")
    start = started(count)
    for number in range(decisions):
        page.wait_for_selector("#label-form")
        topic = "#label-form select[name=topic]"
        if not count.focused(topic):
            count.tab_to(topic)
        count.press("h")  # history, by its first letter
        count.press("Tab")
        count.press("l")  # local
        count.press("Tab")  # the finer region, left empty
        count.press_and_load("Enter")  # the form's first button: Save and next pair
        refused(page, "labels")
        if number + 1 < decisions and not page.locator("#label-form").count():
            raise SystemExit(f"labels: the next pair did not open ({page.url})")
    return result(count, start, decisions)


TASKS = {
    "entity verification": ("reviewer", entity_verification),
    "validation": ("reviewer", validation),
    "trivia review": ("reviewer", trivia_review),
    "translation": ("annotator1", translation),
    "labels": ("coordinator", labels),
}


def serve(root: Path, database: Path, port: int, decisions: int) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DEBUG": "true", "LOGIN_MAX_FAILURES": "1000"}
    env.pop("REDIS_URL", None)
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=root, env=env, check=True)
    subprocess.run([python, "manage.py", "demo_setup"], cwd=root, env=env, check=True, capture_output=True)
    seed = SEED.format(decisions=decisions)
    subprocess.run([python, "manage.py", "shell", "-c", seed], cwd=root, env=env, check=True, capture_output=True)
    server = subprocess.Popen(
        [python, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    wait_for_server(port)
    return server


def log_in(page, username: str) -> None:
    page.context.clear_cookies()
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("load")


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    parser.add_argument("--decisions", type=int, default=3, help="decisions in a row per task")
    parser.add_argument("--port", type=int, default=PORT, help="the port the measured server listens on")
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated, of: " + ", ".join(TASKS))
    args = parser.parse_args()
    names = [name.strip() for name in args.tasks.split(",")]
    unknown = [name for name in names if name not in TASKS]
    if unknown:
        parser.error(f"unknown task(s): {', '.join(unknown)}")
    print(f"checkout: {args.root}")
    with tempfile.TemporaryDirectory() as tmp:
        server = serve(args.root, Path(tmp) / "bench.sqlite3", args.port, args.decisions)
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
                print("task                 decisions  keys per decision  characters typed  page loads per decision")
                for name in names:
                    user, task = TASKS[name]
                    log_in(page, user)
                    done = task(page, args.decisions)
                    print(
                        f"{name:<20} {done.decisions:>9}  {done.keys:>17.1f}  {done.typed:>16.1f}  {done.loads:>23.1f}"
                    )
                browser.close()
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
