"""Keys and page loads a coordinator spends changing one member's roles, measured in a browser on the demo.

    .venv/bin/python bench/friction_members.py [--root DIR] [--port 8119]

`--root` measures another checkout (the code before a change: `git worktree add --detach DIR <commit>`, with the
.venv linked in). Each run uses a fresh SQLite database in a temporary folder, `manage.py demo_setup` and
`manage.py runserver` (the embedded default), Chromium at 1440x900, the keyboard alone.

Task: on the Cantonese project's members page the coordinator makes an annotator a reviewer too, and saves. Where
the member's row holds their roles (a form per row) the row is used: Space on *Reviewer*, then the save. Where it
does not, the one form below: the user name typed again, every role the member keeps ticked again (Annotator) and
Reviewer, then the save. The save is taken two ways, each on its own annotator: Tab to the form's button and Enter
(annotator1), or Enter on the box just ticked, which sends the form as Enter in a field does (annotator2).

Printed per way: Tabs from the page's start to the first control of the task (the row's Reviewer box, or the form's
user name), keys from there to the saved page, characters typed, page loads, and the roles the page then shows.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.friction_authoring import CHROMIUM_ARGS, PORT
from bench.friction_judging import Counter, log_in, serve

HERE = Path(__file__).resolve().parent.parent
PROJECT = "yue-cmn"

# The roles the members table shows for a user: the ticked boxes of their row's form, else the cell's text.
ROLES_SHOWN = """(username) => {
    const row = [...document.querySelectorAll("#members tbody tr")]
        .find((tr) => tr.cells[0].innerText.trim().split(/\\s/)[0] === username);
    if (!row) return "not listed";
    const cell = row.querySelector("td[data-label=Roles]");
    const ticked = [...cell.querySelectorAll("input[name=roles]:checked")];
    const labels = ticked.map((box) => box.parentElement.textContent.trim());
    return cell.querySelector("input[name=roles]") ? labels.join(", ") : cell.textContent.trim();
}"""


def tab_on_to(count: Counter, selector: str, limit: int = 40) -> None:
    """Tab from where the focus is until `selector` has it; each Tab counted."""
    for _ in range(limit):
        if count.focused(selector):
            return
        count.press("Tab")
    raise SystemExit(f"{selector} not reached by {limit} Tabs on {count.page.url}")


def save(count: Counter, button: str, by_button: bool) -> None:
    if by_button:
        tab_on_to(count, button)
    count.press_and_load("Enter")  # on the button, or on the box: the form's first button sends it


def add_reviewer(page, username: str, by_button: bool) -> tuple[int, int, int, int, str]:
    """Tabs to the first control, keys after it, characters typed, page loads, and the roles shown after."""
    page.goto(f"/projects/{PROJECT}/members/")
    page.wait_for_load_state("load")
    count = Counter(page)
    row = f"#roles-{username}"
    if page.locator(row).count():  # the member's row holds their roles
        count.tab_to(f"{row} input[name=roles][value=reviewer]")
        reach = count.keys
        count.press("Space")
        save(count, f"{row} button[type=submit]", by_button)
    else:  # the form below the table: everything typed and ticked again
        form = "#add-person form"
        count.tab_to(f"{form} input[name=username]")
        reach = count.keys
        count.type(username)
        for role in ("annotator", "reviewer"):  # what the member keeps, and the new role
            tab_on_to(count, f"{form} input[name=roles][value={role}]")
            count.press("Space")
        save(count, f"{form} button[type=submit]", by_button)
    if page.locator(".message.error, .error[role=alert]").count():
        raise SystemExit(f"refused: {page.locator('.message.error, .error[role=alert]').first.inner_text()}")
    return reach, count.keys - reach, count.typed, count.loads, page.evaluate(ROLES_SHOWN, username)


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    parser.add_argument("--port", type=int, default=PORT, help="the port the measured server listens on")
    args = parser.parse_args()
    print(f"checkout: {args.root}")
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
                print(
                    "save by                  member      Tabs to the first control  keys after it  characters typed"
                    "  page loads  roles shown after"
                )
                for way, username, by_button in (
                    ("Tab to the button, Enter", "annotator1", True),
                    ("Enter on the box", "annotator2", False),
                ):
                    reach, keys, typed, loads, roles = add_reviewer(page, username, by_button)
                    print(f"{way:<24} {username:<11} {reach:>25}  {keys:>13}  {typed:>16}  {loads:>10}  {roles}")
                browser.close()
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
