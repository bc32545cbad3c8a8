"""Keys and page loads a judging screen costs per decision, measured in a browser on the demo's projects.

    .venv/bin/python bench/friction_judging.py [--root DIR] [--decisions 3]

`--root` measures another checkout (the code before a change: `git archive <commit> | tar -x -C DIR`). Each run
uses a fresh SQLite database in a temporary folder, `manage.py demo_setup` and `manage.py runserver` (the
embedded default), Chromium at 1440x900, and takes the best keyboard path the checkout offers: a form that
listens for one-key choices (`data-choice-keys`) is driven by its keys; a form without them by Tab to each
control and Enter or Space, as a keyboard user would.

Tasks (the demo's reviewer, who verifies entity questions and validates collected pairs):
- entity verification: accept `--decisions` generated questions in a row, from the entity project's page.
- validation: judge `--decisions` collected pairs in a row (every task the form asks for, first choice each),
  from the validation project's page.
Printed per task: keys per decision and page loads per decision, averaged over the decisions.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.friction_authoring import CHROMIUM_ARGS, PORT, wait_for_server

HERE = Path(__file__).resolve().parent.parent
PASSWORD = "localqa-demo"  # noqa: S105 (demo_setup's published password, in a throwaway database)


class Counter:
    """Keys pressed and main-frame page loads, for one task."""

    def __init__(self, page) -> None:
        self.page = page
        self.keys = 0
        self.loads = 0
        page.on("load", self._loaded)

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
            if self.page.evaluate("(s) => document.activeElement && document.activeElement.matches(s)", selector):
                return
            self.press("Tab")
        raise SystemExit(f"{selector} not reached by {limit} Tabs on {self.page.url}")


def entity_verification(page, decisions: int) -> tuple[float, float]:
    page.goto("/projects/bavaria-companies/entities/")
    count = Counter(page)
    count.tab_to("#entity-verify-next")
    count.press_and_load("Enter")
    start_keys, start_loads = count.keys, count.loads  # reaching the first question is not a decision
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
        if page.locator(".message.error").count():
            raise SystemExit(f"entity verification refused: {page.locator('.message.error').first.inner_text()}")
    return (count.keys - start_keys) / decisions, (count.loads - start_loads) / decisions


CHOICE_GROUPS = """() => {
    const form = document.querySelector("#validation-form");
    const groups = new Map();
    for (const input of form.querySelectorAll("input[type=radio]")) {
        if (!groups.has(input.name)) groups.set(input.name, input);
    }
    return [...groups.values()].map((input) => [input.name, input.dataset.key || "", input.id || ""]);
}"""


def validation(page, decisions: int) -> tuple[float, float]:
    page.goto("/projects/doha-val/validation/")
    count = Counter(page)
    count.tab_to("#validation-next")
    count.press_and_load("Enter")
    start_keys, start_loads = count.keys, count.loads
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
    return (count.keys - start_keys) / decisions, (count.loads - start_loads) / decisions


def serve(root: Path, database: Path) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DEBUG": "true", "LOGIN_MAX_FAILURES": "1000"}
    env.pop("REDIS_URL", None)
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=root, env=env, check=True)
    subprocess.run([python, "manage.py", "demo_setup"], cwd=root, env=env, check=True, capture_output=True)
    server = subprocess.Popen(
        [python, "manage.py", "runserver", "--noreload", f"127.0.0.1:{PORT}"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    wait_for_server()
    return server


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    parser.add_argument("--decisions", type=int, default=3, help="decisions in a row per task")
    args = parser.parse_args()
    print(f"checkout: {args.root}")
    with tempfile.TemporaryDirectory() as tmp:
        server = serve(args.root, Path(tmp) / "bench.sqlite3")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), headless=True, args=CHROMIUM_ARGS
                )
                context = browser.new_context(
                    base_url=f"http://127.0.0.1:{PORT}", viewport={"width": 1440, "height": 900}, locale="en-GB"
                )
                context.set_default_timeout(20_000)
                page = context.new_page()
                page.goto("/accounts/login/")
                page.get_by_label("Username").fill("reviewer")
                page.get_by_label("Password").fill(PASSWORD)
                page.get_by_role("button", name="Log in").click()
                page.wait_for_load_state("load")
                print("task                     keys per decision  page loads per decision")
                for name, task in (("entity verification", entity_verification), ("validation", validation)):
                    keys, loads = task(page, args.decisions)
                    print(f"{name:<24} {keys:>17.1f}  {loads:>23.1f}")
                browser.close()
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
