"""Actions and seconds per judged item on the review screen, in Chromium at 1440x900.

    .venv/bin/python bench/review_actions.py                 # this checkout
    .venv/bin/python bench/review_actions.py --root /tmp/base  # another checkout (e.g. before the change)

A fresh SQLite database in a temporary directory gets a project with `--items` lead QAs in
review (three criteria, long leads); the checkout's development server serves it. A reviewer
logs in, opens the first item and judges every one the quickest way the screen offers,
every third item with one flag and its reason:

- by keyboard, where the screen has keys (`data-review-keys`): a flag key and the reason typed
  (Esc leaves the box) where flagged, A to pass the rest, Enter to submit and open the next;
- by mouse otherwise: a click per criterion verdict, a click into the comment, a scroll when
  the submit button is below the first screen, a click on "Record and review the next item".

Reported per judged item: the actions a person makes (a click, a key, a scroll, typing a
reason counts once), whether the item, its evidence and the submit button were all on the
first screen, the scripted seconds from one item's screen to the next (server and browser
time, no human in it), and a human estimate from the Keystroke-Level Model (Card, Moran &
Newell: K 0.28 s a key, P 1.1 s pointing, B 0.1 s a click, H 0.4 s moving a hand between
mouse and keyboard; reading and deciding are the same on both screens and left out; a
scroll counts as P + B).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
K, P, B, H = 0.28, 1.1, 0.1, 0.4
REASON = "Which restaurant? The question needs the article."

SEED = textwrap.dedent(
    """
    import sys
    import django
    django.setup()
    from django.core.management import call_command
    call_command("migrate", verbosity=0)
    from annotation.services.items import qa_item_create
    from annotation.services.members import membership_set
    from annotation.services.pairs import pair_claim_next, pair_screen
    from annotation.services.projects import project_update
    from annotation.services.submission import pair_submit
    from tests import factories
    items = int(sys.argv[1])
    coordinator = factories.user("bench-coordinator")
    annotator = factories.user("bench-annotator")
    reviewer = factories.user("bench-reviewer")
    project = factories.project(coordinator, slug="bench-review")
    project_update(project=project, lead_qa_min=1)
    membership_set(project=project, user=annotator, roles={"annotator"})
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    local = "\\n\\n".join([factories.CANTONESE_LEAD] * 4)
    standard = "\\n\\n".join([factories.MANDARIN_LEAD] * 4)
    for n in range(items):
        factories.pair(project, local_lead=local, standard_lead=standard)
        pair = pair_claim_next(project=project, user=annotator)
        pair_screen(pair=pair, user=annotator, decision="annotate")
        evidence = "深水埗" if n % 2 else "老闆姓陳"
        start = local.index(evidence)
        qa_item_create(
            pair=pair, user=annotator, question=f"第{n + 1}题：这家茶餐厅在哪里？", answer_standard="深水埗",
            answer_local=evidence, spans=[{"start": start, "end": start + len(evidence), "text": evidence}],
        )
        pair_submit(pair=pair, user=annotator)
    print(factories.PASSWORD)
    """
)


def serve(root: Path, items: int, port: int, workdir: Path) -> tuple[subprocess.Popen, str]:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
        "MEDIA_ROOT": str(workdir / "media"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "1",
        "PYTHONPATH": str(root),
    }
    seeded = subprocess.run(
        [sys.executable, "-c", SEED, str(items)], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    if seeded.returncode:
        raise SystemExit(seeded.stderr[-3000:])
    password = seeded.stdout.strip().splitlines()[-1]
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(100):
        try:
            import urllib.request

            urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=1)
            break
        except OSError:
            time.sleep(0.2)
    return server, password


def judge(page, flag: bool) -> tuple[int, float, bool, str]:
    """Judge the item on screen; (actions, KLM seconds, all on the first screen, strategy)."""
    height = page.viewport_size["height"]

    def on_screen(selector: str) -> bool:
        box = page.locator(selector).first.bounding_box()
        return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height

    criteria = page.locator("fieldset.criterion")
    count = criteria.count()
    keyboard = page.locator("[data-review-keys]").count() > 0
    submit = "#judgment-submit-next" if keyboard else 'button[name="then"][value="next"]'
    visible = all(on_screen(s) for s in (".item-summary .q", ".evidence-text mark", submit))
    actions, klm = 0, 0.0
    if keyboard:  # hands stay on the keyboard: a flag key and its reason where flagged, A passes the rest
        if flag:
            page.keyboard.press(criteria.nth(1).get_attribute("data-flag-key"))
            page.keyboard.type(REASON)
            page.keyboard.press("Escape")
            actions += 3
            klm += 3 * K
        page.keyboard.press("a")
        page.keyboard.press("Enter")
        actions += 2
        klm += 2 * K
        return actions, klm, visible, "keyboard"
    scrolls = 0

    def click(locator) -> None:
        """A click; first a scroll when the target is not on the screen (Playwright would scroll for us)."""
        nonlocal scrolls
        box = locator.bounding_box()
        if box is None or box["y"] < 0 or box["y"] + box["height"] > height:
            scrolls += 1
            locator.scroll_into_view_if_needed()
        locator.click()

    for index in range(count):
        fieldset = criteria.nth(index)
        verdict = "flag" if flag and index == 1 else "pass"
        click(fieldset.locator(f'input[value="{verdict}"]'))
        actions += 1
        klm += P + B
        if verdict == "flag":
            click(fieldset.locator("textarea"))
            page.keyboard.type(REASON)
            actions += 2  # click into the comment, type
            klm += P + B + H + K + H  # to the box, the hand to the keyboard (typing itself not counted), back
    click(page.locator(submit))
    actions += 1 + scrolls
    klm += P + B + scrolls * (P + B)
    return actions, klm, visible, "mouse"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout to serve")
    parser.add_argument("--items", type=int, default=6)
    parser.add_argument("--port", type=int, default=8117)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="review-bench-") as workdir:
        server, password = serve(args.root.resolve(), args.items, args.port, Path(workdir))
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
                )
                page = browser.new_page(viewport={"width": 1440, "height": 900}, locale="en-GB")
                base = f"http://127.0.0.1:{args.port}"
                page.goto(base + "/accounts/login/")
                page.get_by_label("Username").fill("bench-reviewer")
                page.get_by_label("Password").fill(password)
                page.get_by_role("button", name="Log in").click()
                page.goto(base + "/projects/bench-review/review/")
                page.get_by_role("button", name="Review the next item").click()
                page.wait_for_selector("#judgment-form")
                page_height = page.evaluate("document.documentElement.scrollHeight")
                rows = []
                for n in range(args.items):
                    started = time.perf_counter()
                    question = page.locator(".item-summary .q").inner_text()
                    actions, klm, visible, strategy = judge(page, flag=n % 3 == 2)
                    if n < args.items - 1:
                        page.wait_for_function(
                            "q => document.querySelector('.item-summary .q')?.innerText !== q", arg=question
                        )
                        page.wait_for_selector("#judgment-form")
                    else:
                        page.wait_for_url("**/review/")
                    rows.append((actions, klm, visible, time.perf_counter() - started, strategy))
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)
    strategy = rows[0][4]
    print(f"checkout: {args.root.resolve()}  strategy: {strategy}  items: {len(rows)} (every third flagged)")
    print(f"review page height at 1440x900: {page_height} px")
    print(f"item, evidence and submit on the first screen: {sum(r[2] for r in rows)} of {len(rows)}")
    print(f"actions per judged item: {statistics.mean(r[0] for r in rows):.2f}")
    print(f"  pass-only items: {statistics.mean(r[0] for i, r in enumerate(rows) if i % 3 != 2):.2f}")
    print(f"  flagged items: {statistics.mean(r[0] for i, r in enumerate(rows) if i % 3 == 2):.2f}")
    print(f"scripted seconds per judged item: {statistics.median(r[3] for r in rows):.2f} (median)")
    print(f"human input seconds per judged item (KLM estimate): {statistics.mean(r[1] for r in rows):.2f}")


if __name__ == "__main__":
    main()
