"""How many of the review screen's one-key shortcuts take effect with an Arabic keyboard layout active, in a browser.

    .venv/bin/python bench/arabic_layout_keys.py [--root DIR] [--port 8119]

`--root` measures another checkout (`git archive <commit> | tar -x -C DIR`). A fresh SQLite database in a temporary
folder with the demo (`demo_setup`), `manage.py runserver`, Chromium at 1440x900. The reviewer opens the next item
of bar-deu (the demo's pair in review) by keyboard. The shortcuts are read from the screen's own list of keys (the
`?` dialog: every single character in it). Each is then sent as the key event the browser gives with an Arabic
(101) layout active: `key` the Arabic character, `code` the physical key (as tests/browser/test_author_walk.py
does), and once more as a Latin layout gives it, for comparison. A shortcut takes effect when the screen changes:
a choice ticked, the focus moved or the dialog opened. The screen is put back (choices cleared, dialog closed,
focus on the page) before each key.
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

# The Arabic (101) layout: what each printed key gives, and its physical key (`KeyboardEvent.code`).
ARABIC = dict(
    zip(
        "qwertyuiop[]asdfghjkl;'zxcvnm,./1234567890",
        "ضصثقفغعهخحجدشسيبلاتنمكطئءؤرىةوزظ١٢٣٤٥٦٧٨٩٠",
        strict=True,
    )
)
CODES = {",": "Comma", ".": "Period", "/": "Slash", ";": "Semicolon", "'": "Quote", "[": "BracketLeft"}
CODES["]"] = "BracketRight"

SHORTCUTS = """() => [...new Set([...document.querySelectorAll("#review-keys kbd")]
    .map((kbd) => kbd.textContent.trim().toLowerCase()).filter((text) => text.length === 1))]"""

STATE = """() => JSON.stringify([
    [...document.querySelectorAll("#judgment-form input:checked")].map((input) => input.name + "=" + input.value),
    document.activeElement ? document.activeElement.outerHTML.slice(0, 80) : "",
    Boolean(document.querySelector("dialog[open]")),
])"""

RESET = """() => {
    document.querySelector("#judgment-form").reset();
    document.querySelectorAll("dialog[open]").forEach((dialog) => dialog.close());
    if (document.activeElement) document.activeElement.blur();
}"""

PRESS = """([key, code, shiftKey]) => {
    const target = document.activeElement || document.body;
    target.dispatchEvent(new KeyboardEvent("keydown", {key, code, shiftKey, bubbles: true, cancelable: true}));
}"""


def event_of(shortcut: str, layout: str) -> tuple[str, str, bool]:
    """The key, code and Shift of the key event for `shortcut` with the `layout` ("latin" or "arabic") active."""
    if shortcut == "?":  # Shift and the key printed "/"; the Arabic layout gives its own question mark
        return ("؟" if layout == "arabic" else "?"), "Slash", True
    if shortcut.isdigit():
        code = f"Digit{shortcut}"
    elif shortcut.isalpha():
        code = f"Key{shortcut.upper()}"
    else:
        code = CODES[shortcut]
    return (ARABIC[shortcut] if layout == "arabic" else shortcut), code, False


def shortcuts_taking_effect(page) -> tuple[list[str], dict[str, list[str]]]:
    page.goto("/projects/bar-deu/review/")
    count = Counter(page)
    count.tab_to("#review-next")
    count.press_and_load("Enter")
    page.wait_for_selector("#judgment-form")
    shortcuts = page.evaluate(SHORTCUTS)
    worked: dict[str, list[str]] = {"latin": [], "arabic": []}
    for layout, keys in worked.items():
        for shortcut in shortcuts:
            page.evaluate(RESET)
            before = page.evaluate(STATE)
            page.evaluate(PRESS, list(event_of(shortcut, layout)))
            if page.evaluate(STATE) != before:
                keys.append(shortcut)
    return shortcuts, worked


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
                log_in(page, "reviewer")
                shortcuts, worked = shortcuts_taking_effect(page)
                print(f"the screen's one-key shortcuts: {' '.join(shortcuts)}")
                for layout, keys in worked.items():
                    missing = [key for key in shortcuts if key not in keys]
                    print(
                        f"{layout + ' layout':<15} {len(keys)} of {len(shortcuts)} take effect"
                        + (f" (nothing on {' '.join(missing)})" if missing else "")
                    )
                browser.close()
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
