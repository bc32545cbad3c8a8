"""Actions an annotator spends on one pair: screen it, write two lead QAs with evidence, verify both on the
standard page (one found, one not found), submit, and reach the next pair. By mouse and by keyboard.

    /work/main/.venv/bin/python bench/annotator_actions.py [--root DIR]

`--root` runs the flows against another checkout (the code before a change: `git archive <commit> | tar -x
-C DIR`); the flows know both pages, the one with keys and verification inside the item and the one before.
Each run uses a fresh SQLite database in /tmp and `manage.py runserver` (the embedded default, DEBUG on).

Counted: clicks (a drag across the evidence is one), command keys (Tab, arrows, Enter, shortcuts; not the
characters of the text typed, which is the same in every flow and printed apart) and page loads. The
keyboard flows select evidence with the arrow keys from the lead's start in both versions (the same keys),
so the difference is everything around the text.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PORT = 8117
PASSWORD = "bench-actions-password"  # noqa: S105 (a throwaway user in a throwaway database)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]  # tests/browser/conftest.py
LEAD = "𠮶間茶餐廳喺深水埗開咗六十幾年，招牌菜係菠蘿油同埋鴛鴦，老闆姓陳，逢星期三休息。"
STANDARD_LEAD = "这是一家位于深水埗的茶餐厅，以菠萝包闻名。"
STANDARD_TEXT = "这是一家位于深水埗的茶餐厅，以菠萝包闻名。\n== 制作 ==\n老板姓陈。店铺每逢星期三休息。"
ITEMS = [  # evidence, question, answer (standard), answer (local), found on the standard page
    ("老闆姓陳", "这家茶餐厅的老板姓什么？", "姓陈", "姓陳", True),
    ("菠蘿油", "这家茶餐厅的招牌菜是什么？", "菠萝油和鸳鸯", "菠蘿油同埋鴛鴦", False),
]

SETUP = f"""
from django.contrib.auth import get_user_model
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next
from annotation.services.projects import project_create
from annotation.models import PagePair, Project
user = get_user_model().objects.create_user("bench-annotator", "b@example.org", {PASSWORD!r})
project = project_create(name="Bench actions", slug="bench-actions", local_language="yue",
                                  standard_language="cmn")
membership_set(project=project, user=user, roles={{"annotator"}})
for number in (1, 2):
    PagePair.objects.create(project=project, local_title=f"茶餐廳 {{number}}", standard_title=f"茶餐厅 {{number}}",
        local_lead={LEAD!r}, standard_lead={STANDARD_LEAD!r}, standard_text={STANDARD_TEXT!r},
        local_lead_length={len(LEAD)}, standard_lead_length={len(STANDARD_LEAD)})
pair = pair_claim_next(project=project, user=user)
print(pair.get_absolute_url())
"""

SELECT_JS = """(needle) => {
    const lead = document.getElementById("local-lead");
    const walker = document.createTreeWalker(lead, NodeFilter.SHOW_TEXT);
    const nodes = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
    const whole = nodes.map((n) => n.data).join("");
    const at = whole.indexOf(needle);
    const point = (offset) => {
        let total = 0;
        for (const n of nodes) {
            if (offset < total + n.data.length) return [n, offset - total];
            total += n.data.length;
        }
    };
    const rect = (offset) => {
        const [node, inNode] = point(offset);
        const range = document.createRange();
        range.setStart(node, inNode);
        range.setEnd(node, inNode + 1);
        const r = range.getClientRects()[0];
        return {left: r.left, right: r.right, y: r.top + r.height / 2};
    };
    return {first: rect(at), last: rect(at + needle.length - 1)};
}"""


@dataclass
class Count:
    clicks: int = 0
    keys: int = 0
    typed: int = 0
    loads: int = 0
    selecting: int = 0  # of the keys: the arrows that select evidence (the same in every version)

    @property
    def actions(self) -> int:
        return self.clicks + self.keys + self.loads


class Flow:
    def __init__(self, page, count: Count) -> None:
        self.page, self.count = page, count
        page.on("load", lambda _page: setattr(count, "loads", count.loads + 1))

    def click(self, selector: str) -> None:
        self.page.locator(selector).first.click()
        self.count.clicks += 1

    def drag(self, text: str) -> None:
        box = self.page.evaluate(SELECT_JS, text)
        mouse = self.page.mouse
        mouse.move(box["first"]["left"] + 1, box["first"]["y"])
        mouse.down()
        mouse.move(box["last"]["right"] - 1, box["last"]["y"], steps=4)
        mouse.up()
        self.count.clicks += 1

    def key(self, *names: str) -> None:
        for name in names:
            self.page.keyboard.press(name)
            self.count.keys += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.count.typed += len(text)

    def fill_click(self, selector: str, text: str) -> None:
        self.click(selector)
        self.type(text)

    def tab_to(self, selector: str, limit: int = 250) -> None:
        """Press Tab until the focus is on `selector` (counting each press)."""
        for _ in range(limit):
            if self.page.evaluate("(s) => document.activeElement && document.activeElement.matches(s)", selector):
                return
            self.key("Tab")
        raise RuntimeError(f"Tab never reached {selector}")

    def settle(self) -> None:
        self.page.wait_for_load_state("load")
        self.page.wait_for_function(
            "() => !document.querySelector('form.item-form.is-dirty, form.item-form.htmx-request, .htmx-request')"
        )

    def select_by_keys(self, text: str) -> None:
        keys_before = self.count.keys
        self.key("Home")
        for _ in range(len(list(LEAD[: LEAD.index(text)]))):
            self.key("ArrowRight")
        for _ in range(len(text)):
            self.key("Shift+ArrowRight")
        self.page.wait_for_function("(t) => window.getSelection().toString() === t", arg=text)
        self.count.selecting += self.count.keys - keys_before

    def new_card(self, before: int) -> str:
        cards = self.page.locator("#items-list .item-card")
        self.page.wait_for_function("(n) => document.querySelectorAll('#items-list .item-card').length > n", arg=before)
        return f"#item-{cards.last.get_attribute('data-item-id')}"


def has_keys(page) -> bool:
    return page.locator("#keys-toggle").count() > 0


# The page before: screening by radio, verification on its own page after submitting.


def my_items_row(page, question: str) -> str:
    item_id = page.locator("#my-items tbody tr", has_text=question).get_attribute("data-item-id")
    return f'#my-items tr[data-item-id="{item_id}"]'


def before_mouse(flow: Flow) -> None:
    page = flow.page
    flow.click("text=Annotate this pair")
    flow.click("#screen-submit")
    flow.settle()
    for evidence, question, standard, local, _found in ITEMS:
        before = page.locator("#items-list .item-card").count()
        flow.click("#add-item")
        card = flow.new_card(before)
        flow.drag(evidence)
        flow.click(f"{card} .add-evidence")
        flow.fill_click(f"{card} textarea[name=question]", question)
        flow.fill_click(f"{card} textarea[name=answer_standard]", standard)
        flow.fill_click(f"{card} textarea[name=answer_local]", local)
        flow.settle()
    flow.click("#submit-pair")
    flow.settle()
    for _evidence, question, _s, _l, found in ITEMS:
        flow.click(".topbar a:text-is('My items')")
        flow.settle()
        row = my_items_row(page, question)
        flow.click(f"{row} a:text-is('Verify')")
        flow.settle()
        if found:
            flow.click(".sentence.match-exact input[type=checkbox]")
            flow.click("#record-found")
        else:
            flow.click("#record-not-found")
        flow.settle()
    flow.click(".topbar .crumbs a")
    flow.settle()
    flow.click("#next-pair")
    flow.settle()


def before_keyboard(flow: Flow) -> None:
    page = flow.page
    flow.tab_to("input[name=decision][value=annotate]")
    flow.key("Space")
    flow.tab_to("#screen-submit")
    flow.key("Enter")
    flow.settle()
    for evidence, question, standard, local, _found in ITEMS:
        before = page.locator("#items-list .item-card").count()
        flow.tab_to("#add-item")
        flow.key("Enter")
        card = flow.new_card(before)
        page.evaluate("() => document.activeElement.blur()")  # Tab then starts from the top, as after a reload
        flow.tab_to("#local-lead")
        flow.select_by_keys(evidence)
        flow.key("Enter")
        flow.tab_to(f"{card} textarea[name=question]")
        flow.type(question)
        flow.key("Tab")
        flow.type(standard)
        flow.key("Tab")
        flow.type(local)
        flow.settle()
    flow.tab_to("#submit-pair")
    flow.key("Enter")
    flow.settle()
    for _evidence, question, _s, _l, found in ITEMS:
        flow.tab_to(".topbar a[href$='/my-items/']")
        flow.key("Enter")
        flow.settle()
        row = my_items_row(page, question)
        flow.tab_to(f"{row} a[href$='/verify/']")
        flow.key("Enter")
        flow.settle()
        if found:
            flow.tab_to(".sentence.match-exact input[type=checkbox]")
            flow.key("Space")
            flow.tab_to("#record-found")
        else:
            flow.tab_to("#record-not-found")
        flow.key("Enter")
        flow.settle()
    flow.tab_to(".topbar .crumbs a:first-child")
    flow.key("Enter")
    flow.settle()
    flow.tab_to("#next-pair")
    flow.key("Enter")
    flow.settle()


# The page with keys and the verification inside each item.


def after_mouse(flow: Flow) -> None:
    page = flow.page
    flow.click("#screen-submit")  # "Annotate this pair"
    flow.settle()
    for evidence, question, standard, local, found in ITEMS:
        before = page.locator("#items-list .item-card").count()
        flow.click("#add-item")
        card = flow.new_card(before)
        flow.drag(evidence)
        flow.click(f"{card} .add-evidence")
        flow.fill_click(f"{card} textarea[name=question]", question)
        flow.fill_click(f"{card} textarea[name=answer_standard]", standard)
        flow.fill_click(f"{card} textarea[name=answer_local]", local)
        flow.settle()
        if found:
            page.locator(f"{card} .sentence.match-exact input").wait_for()  # the search follows the answer
            flow.click(f"{card} .sentence.match-exact input[type=checkbox]")
            flow.click(f"{card} .record-found")
        else:
            flow.click(f"{card} .record-not-found")
        page.locator(f"{card} .verify-panel.is-recorded").wait_for()
    flow.click("#submit-next")
    flow.settle()


def after_keyboard(flow: Flow) -> None:
    page = flow.page
    flow.key("1")
    flow.settle()
    for evidence, question, standard, local, found in ITEMS:
        before = page.locator("#items-list .item-card").count()
        flow.key("n")
        card = flow.new_card(before)
        page.wait_for_function("(c) => document.activeElement === document.querySelector(c)", arg=card)
        flow.key("l")
        flow.select_by_keys(evidence)
        flow.key("Enter", "q")
        flow.type(question)
        flow.key("Tab")
        flow.type(standard)
        flow.key("Tab")
        flow.type(local)
        flow.key("Escape")
        flow.settle()
        if found:
            page.locator(f"{card} .sentence.match-exact input").wait_for()
            flow.key("v")
            flow.tab_to(f"{card} .sentence.match-exact input[type=checkbox]")
            flow.key("Space", "f")
        else:
            flow.key("x")
        page.locator(f"{card} .verify-panel.is-recorded").wait_for()
    flow.key("Control+Enter")
    flow.settle()


def serve(root: Path, database: Path) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DEBUG": "true", "LOGIN_MAX_FAILURES": "1000"}
    env.pop("REDIS_URL", None)
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=root, env=env, check=True)
    out = subprocess.run(
        [python, "manage.py", "shell", "-c", SETUP], cwd=root, env=env, check=True, capture_output=True
    )
    path = out.stdout.decode().strip().splitlines()[-1]
    server = subprocess.Popen(
        [python, "manage.py", "runserver", "--noreload", f"127.0.0.1:{PORT}"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/accounts/login/", timeout=2)
            break
        except OSError:
            time.sleep(0.2)
    return server, path


def run(root: Path, way: str) -> Count:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        server, path = serve(root, Path(tmp) / "bench.sqlite3")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), headless=True, args=CHROMIUM_ARGS
                )
                context = browser.new_context(
                    base_url=f"http://127.0.0.1:{PORT}", viewport={"width": 1440, "height": 900}, locale="en-GB"
                )
                context.set_default_timeout(15_000)
                page = context.new_page()
                page.goto("/accounts/login/")
                page.get_by_label("Username").fill("bench-annotator")
                page.get_by_label("Password").fill(PASSWORD)
                page.get_by_role("button", name="Log in").click()
                page.wait_for_load_state("load")
                page.goto(path)
                count = Count()
                flow = Flow(page, count)
                new = has_keys(page)
                {"mouse": after_mouse if new else before_mouse, "keyboard": after_keyboard if new else before_keyboard}[
                    way
                ](flow)
                if "/pairs/" not in page.url or page.url.endswith(path):
                    raise RuntimeError(f"the flow did not end on the next pair: {page.url}")
                browser.close()
        finally:
            server.terminate()
            server.wait(10)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    args = parser.parse_args()
    print(f"checkout: {args.root}")
    print("per submitted pair: screen, two lead QAs with evidence, both verified, submit, next pair")
    print(f"{'way':<10}{'clicks':>8}{'keys':>8}{'(selecting)':>13}{'loads':>8}{'actions':>9}{'typed chars':>13}")
    for way in ("mouse", "keyboard"):
        c = run(args.root, way)
        print(f"{way:<10}{c.clicks:>8}{c.keys:>8}{c.selecting:>13}{c.loads:>8}{c.actions:>9}{c.typed:>13}")


if __name__ == "__main__":
    main()
