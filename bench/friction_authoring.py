"""Keys, clicks and page loads the Wikipedia-QA author's friction points cost, measured in a browser.

    .venv/bin/python bench/friction_authoring.py [--root DIR]

`--root` measures another checkout (the code before a change: `git archive <commit> | tar -x -C DIR`); each
task takes the best keyboard path that checkout offers (it looks for the find box, the keys and the panels).
Each run uses a fresh SQLite database in a temporary folder and `manage.py runserver` (the embedded default).

Tasks:
- evidence: one evidence span chosen by keyboard in a Cantonese (with 𨋢 𠵱), a Bavarian and an Arabic lead.
  Before: the caret from the lead's start (`l`), word steps (Ctrl+Right, by the browser's word segmenter) and
  character steps, the fewest of them; after: `/`, the span's first characters typed, Enter, Shift+Down to the
  clause's end. Counted: command keys (characters typed into the find box are counted apart), and the offsets
  checked against the stored text.
- whole article: reading the whole standard article from a lead item (page loads and keys).
- not possible: recording "not possible" from the item (keys), and the keys to get back to the panel after a
  verification button (focus).
- resubmit: resubmitting a rewritten item from its page; submitting the pair from the document-QA page.
- sent back: page loads from home to the item a reviewer sent back.
- over-long: of an item saved with an over-long question, how many of its other fields were saved; banners on a
  refused submit with three problems.
- phone: at 390×844, pixels of the field being edited under the sticky lead.
- skip: pairs counted as waiting for a person whose only pair left is one they skipped; keys to undo a skip.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PORT = 8119
PASSWORD = "bench-friction-password"  # noqa: S105 (a throwaway user in a throwaway database)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]  # tests/browser/conftest.py

LEADS = {
    "yue": (
        "𨋢，即係升降機，喺香港好常見。香港第一部𨋢喺一八九零年代出現，𠵱家全港有六萬幾部𨋢，大部分由機電工程署監管。"
        "最舊仲行緊嘅𨋢喺中環一棟唐樓入面，一九零八年開始行，到今日都仲有人用，街坊叫佢做「鐵籠𨋢」。",
        "一九零八年開始行",
        "一九",
    ),
    "bar": (
        "De Weißwuascht is a Brühwuascht aus Kaibfleisch und Schweinespeck, de wo traditionell in Minga und im "
        "ganzn südlichn Bayern gessn wead. Gwiazt wead s mit Petersilie, Zitronenschoin und Zwiefe. Da Legende noch "
        "is s am 22. Februar 1857 im Wirtshaus Zum Ewign Licht am Marienplatz erfundn woan. Gessn wead s "
        "traditionell vor zwo\u0308lfe, mit siaßm Senf und a Brezn.",
        "am 22. Februar 1857 im Wirtshaus Zum Ewign Licht am Marienplatz erfundn woan",
        "am 22",
    ),
    "arz": (
        "الكُشَري أكلة شعبية مصرية، بتتعمل من الرز والمكرونة والعدس والصلصة والبصل المحمّر، وبيتاكل في كل حتة في مصر. "
        "ظهر في القرن التسعتاشر، ومن ساعتها بقى أكلة الغلابة والأغنيا مع بعض، وأشهر محلاته في وسط البلد وفي "
        "السيدة زينب، وبيتباع في عربيات في الشوارع كمان.",
        "وأشهر محلاته في وسط البلد وفي السيدة زينب",
        "وأشهر",
    ),
}
STANDARD = {"yue": ("cmn", "电梯是一种垂直运输工具。"), "bar": ("deu", "Die Weißwurst ist eine Brühwurst."),
            "arz": ("arb", "الكشري طبق مصري.")}  # fmt: skip
STANDARD_TEXT = "电梯是一种垂直运输工具。\n== 历史 ==\n香港最早的电梯于1908年启用。\n== 数量 ==\n香港现有电梯约六万部。"

SETUP = f"""
from django.contrib.auth import get_user_model
from annotation.services.items import qa_item_create
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_give_back, pair_screen
from annotation.services.projects import project_create
from annotation.services.submission import pair_submit
from annotation.models import PagePair, Project, QAItem
from review import judging, queue
users = {{name: get_user_model().objects.create_user(name, name + "@example.org", {PASSWORD!r})
         for name in ("bench-annotator", "bench-other", "bench-reviewer")}}
leads = {LEADS!r}
standard = {STANDARD!r}
paths = {{}}
for local, (lead, _target, _start) in leads.items():
    code, standard_lead = standard[local]
    project = project_create(name="Bench " + local, slug="bench-" + local, local_language=local,
                                      standard_language=code, lead_qa_min=1, collect_document_qa=True)
    membership_set(project=project, user=users["bench-annotator"], roles={{"annotator"}})
    membership_set(project=project, user=users["bench-other"], roles={{"annotator"}})
    membership_set(project=project, user=users["bench-reviewer"], roles={{"reviewer"}})
    for number in (1, 2, 3):
        PagePair.objects.create(project=project, local_title=f"{{local}} {{number}}",
            standard_title=f"{{code}} {{number}}", local_lead=lead, standard_lead=standard_lead,
            local_lead_length=len(lead), standard_lead_length=len(standard_lead),
            local_text=lead + "\\n== Gschicht ==\\n" + lead,
            standard_text={STANDARD_TEXT!r} if local == "yue" else "")
    pair = pair_claim_next(project=project, user=users["bench-annotator"])
    pair_screen(pair=pair, user=users["bench-annotator"], decision="annotate")
    item = qa_item_create(pair=pair, user=users["bench-annotator"], question="Q?", answer_standard="约六万部",
                                   answer_local="A")
    paths[local] = (pair.get_absolute_url(), item.pk)
# yue: a pair sent back (flagged) for the rewrite and home tasks; a skip for the counts
yue = Project.objects.get(slug="bench-yue")
other = pair_claim_next(project=yue, user=users["bench-other"])
pair_screen(pair=other, user=users["bench-other"], decision="annotate")
lead = leads["yue"][0]
flagged = qa_item_create(pair=other, user=users["bench-other"], question="香港有几部电梯？",
    answer_standard="六万", answer_local="六萬", spans=[{{"start": 0, "end": 1, "text": lead[0]}}])
pair_submit(pair=other, user=users["bench-other"])
slot = queue.review_claim(item=QAItem.objects.get(pk=flagged.pk), user=users["bench-reviewer"])
judgments = {{c["key"]: {{"verdict": "pass", "comment": ""}} for c in yue.review_criteria}}
judgments[yue.review_criteria[0]["key"]] = {{"verdict": "flag", "comment": "Tippfehler"}}
judging.review_submit(slot=slot, user=users["bench-reviewer"], version=slot.version, judgments=judgments)
last = pair_claim_next(project=yue, user=users["bench-other"])
pair_give_back(pair=last, user=users["bench-other"])
paths["rewrite"] = f"/projects/bench-yue/items/{{flagged.pk}}/rewrite/"
print(repr(paths))
"""

WORD_BOUNDS_JS = """() => {
    const lead = document.getElementById("local-lead");
    const text = JSON.parse(document.getElementById("local-lead-text").textContent);
    const chars = Array.from(text);
    const cp = (utf16) => Array.from(text.slice(0, utf16)).length;
    const bounds = new Set([0, chars.length]);
    for (const {segment, index, isWordLike} of new Intl.Segmenter(lead.lang, {granularity: "word"}).segment(text)) {
        if (!isWordLike) continue;
        bounds.add(cp(index)); bounds.add(cp(index + segment.length));
    }
    return Array.from(bounds).sort((a, b) => a - b);
}"""


def steps(bounds: list[int], start: int, target: int) -> tuple[int, int]:
    """The fewest (word steps, character steps) from `start` forward to `target` with word steps then characters."""
    best = (0, target - start)
    words, position = 0, start
    for bound in bounds:
        if bound <= position:
            continue
        if bound > target:
            break
        words, position = words + 1, bound
        if words + target - position < sum(best):
            best = (words, target - position)
    return best


class Measure:
    def __init__(self, page) -> None:
        self.page = page
        self.keys = 0
        self.typed = 0
        self.loads = 0
        page.on("load", lambda _page: setattr(self, "loads", self.loads + 1))

    def key(self, *names: str) -> None:
        for name in names:
            self.page.keyboard.press(name)
            self.keys += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.typed += len(text)

    def reset(self) -> None:
        self.keys = self.typed = self.loads = 0

    def tab_to(self, selector: str, limit: int = 300) -> None:
        for _ in range(limit):
            if self.page.evaluate("(s) => Boolean(document.activeElement?.matches(s))", selector):
                return
            self.key("Tab")
        raise RuntimeError(f"Tab never reached {selector}")

    def settle(self) -> None:
        self.page.wait_for_load_state("load")
        self.page.wait_for_function("() => !document.querySelector('.htmx-request, form.item-form.is-dirty')")


def evidence(m: Measure, local: str, path: str, item_id: int) -> tuple[int, int]:
    page = m.page
    lead, target, start_text = LEADS[local]
    page.goto(path)
    m.settle()
    page.locator(f"#item-{item_id}").focus()
    m.reset()
    if not _has_find(page):
        m.key("l")
        page.wait_for_function("() => document.activeElement?.id === 'local-lead'")
        m.key("Home")
        bounds = page.evaluate(WORD_BOUNDS_JS)
        begin = len(lead[: lead.index(target)])
        end = begin + len(target)
        on = "ArrowLeft" if local == "arz" else "ArrowRight"  # the arrows move visually: right to left in Arabic
        words, chars = steps(bounds, 0, begin)
        m.key(*[f"Control+{on}"] * words, *[on] * chars)
        words, chars = steps(bounds, begin, end)
        m.key(*[f"Control+Shift+{on}"] * words, *[f"Shift+{on}"] * chars)
    else:
        m.key("/")
        m.type(start_text)
        m.key("Enter")
        for _ in range(20):
            if page.evaluate("(t) => window.getSelection().toString().length >= t.length", target):
                break
            m.key("Shift+ArrowDown")
    page.wait_for_function("(t) => window.getSelection().toString() === t", arg=target)
    m.key("Enter")
    page.locator(f"#item-{item_id} .chip-text", has_text=target).wait_for()
    return m.keys, m.typed


def _has_find(page) -> bool:
    return bool(page.evaluate("() => document.querySelector('.hint')?.textContent.includes('press /')"))


def whole_article(m: Measure, path: str, item_id: int) -> tuple[int, int]:
    page = m.page
    page.goto(path)
    m.settle()
    page.locator(f"#item-{item_id}").focus()
    m.reset()
    if page.locator(f"#item-{item_id} details.whole-article").count():
        m.key("w")
        page.locator(f"#item-{item_id} .article-body .wiki-heading").first.wait_for()
        return m.keys, m.loads
    # Before: only the verification page lists every sentence; no key or link from a draft item leads there.
    page.goto(f"/projects/{path.split('/')[2]}/items/{item_id}/verify/")
    page.locator(".sentence").first.wait_for()
    page.go_back()
    m.settle()
    return m.keys, m.loads


def focus_after_button(m: Measure, path: str, item_id: int) -> tuple[int, int]:
    """Keys to record "not found" from the item, then to be back on that panel's buttons."""
    page = m.page
    page.goto(path)
    m.settle()
    page.locator(f"#item-{item_id}").focus()
    m.reset()
    m.key("x")
    page.locator(f"#item-{item_id}-verify.is-recorded").wait_for()
    record = m.keys
    page.wait_for_timeout(300)
    m.tab_to(f"#item-{item_id}-verify .record-not-found")
    return record, m.keys - record


def not_possible(m: Measure, path: str, item_id: int) -> int:
    page = m.page
    page.goto(path)
    m.settle()
    page.locator(f"#item-{item_id}").focus()
    m.reset()
    if page.locator(f"#item-{item_id} .record-not-possible").count():
        m.key("p")
    else:
        m.tab_to(f"#item-{item_id}-verify button[type=submit]")
        m.key("Enter")
    page.locator(f"#item-{item_id}-verify.is-recorded").wait_for()
    return m.keys


def resubmit(m: Measure, path: str) -> tuple[int, int]:
    page = m.page
    page.goto(path)
    m.settle()
    page.locator("textarea[name=question]").fill("香港现在有几部电梯？")  # the rewrite itself (not counted)
    page.wait_for_timeout(1500)
    m.settle()
    page.locator("#local-lead").focus()
    m.reset()
    if "Ctrl" in (page.locator("#resubmit").text_content() or ""):
        m.key("Control+Enter")
    else:
        m.tab_to("#resubmit")
        m.key("Enter")
    page.wait_for_url("**/my-items/")
    m.settle()
    return m.keys, m.loads


def document_submit(m: Measure, pair_path: str) -> tuple[int, int]:
    """From the document-QA page (its item started), keys and loads until the pair's submit is sent."""
    page = m.page
    page.goto(pair_path + "document-qa/")
    m.settle()
    if page.locator("#start-document-qa").count():
        page.locator("#start-document-qa").click()
        m.settle()
    m.reset()
    if page.locator("#submit-next").count():
        m.key("Control+Enter")
    else:
        m.tab_to(f"a[href='{pair_path}']")
        m.key("Enter")
        m.settle()
        m.key("Control+Enter")
    m.settle()
    return m.keys, m.loads


def sent_back(m: Measure, rewrite_path: str) -> tuple[int, int]:
    page = m.page
    page.goto("/")
    m.settle()
    m.reset()
    if page.locator(f'#sent-back a[href="{rewrite_path}"]').count():
        m.tab_to(f'#sent-back a[href="{rewrite_path}"]')
        m.key("Enter")
    else:
        m.tab_to("a[href='/projects/bench-yue/']")
        m.key("Enter")
        m.settle()
        m.tab_to(f'a[href="{rewrite_path}"]')
        m.key("Enter")
    page.wait_for_url(f"**{rewrite_path}")
    m.settle()
    return m.keys, m.loads


def over_long(m: Measure, path: str, item_id: int) -> tuple[int, int]:
    """Fields saved besides an over-long question (of 2), and error banners on a refused submit (3 problems)."""
    page = m.page
    page.goto(path)
    m.settle()
    form = f"#item-{item_id} form.item-form"
    page.locator(f"{form} textarea[name=question]").fill("問" * 5003)
    page.locator(f"{form} textarea[name=answer_standard]").fill("姓陈")
    page.locator(f"{form} textarea[name=answer_local]").fill("姓陳")
    page.wait_for_timeout(2000)
    saved = page.evaluate(
        """async (url) => (await (await fetch(url)).text())""", f"/api/projects/bench-yue/items/{item_id}/"
    )
    fields = sum(1 for text in ("姓陈", "姓陳") if text in saved)
    page.locator(f"{form} textarea[name=question]").fill("")
    page.locator(f"{form} textarea[name=answer_local]").fill("")
    page.wait_for_timeout(1500)
    page.locator("#submit-pair").click()
    m.settle()
    banners = page.locator(".messages .message.error, .message.error").count()
    return fields, banners


def phone(m: Measure, path: str, item_id: int) -> float:
    page = m.page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(path)
    m.settle()
    page.locator(f"#item-{item_id}").focus()
    worst = 0.0
    for name in ("question", "answer_standard", "answer_local"):
        page.locator(f"#item-{item_id} textarea[name={name}]").focus()
        page.wait_for_timeout(100)
        worst = max(
            worst,
            page.evaluate(
                """() => {
                    const lead = document.querySelector(".lead-column").getBoundingClientRect();
                    const field = document.activeElement.getBoundingClientRect();
                    return Math.max(0, Math.min(lead.bottom, field.bottom) - Math.max(lead.top, field.top));
                }"""
            ),
        )
    page.set_viewport_size({"width": 1440, "height": 900})
    return worst


def skip(m: Measure) -> tuple[str, str]:
    page = m.page
    page.goto("/projects/bench-yue/")
    m.settle()
    facts = page.locator("#step-next-pair .step-facts li").first.inner_text()
    undo = "1 key (u after the skip) or 1 click (Undo skip)" if page.locator(".undo-skip").count() else "not possible"
    return facts, undo


def serve(root: Path, database: Path) -> tuple[subprocess.Popen, dict]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "DEBUG": "true", "LOGIN_MAX_FAILURES": "1000"}
    env.pop("REDIS_URL", None)
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=root, env=env, check=True)
    out = subprocess.run(
        [python, "manage.py", "shell", "-c", SETUP], cwd=root, env=env, check=True, capture_output=True
    )
    paths = eval(out.stdout.decode().strip().splitlines()[-1])  # noqa: S307 (our own setup's repr)
    server = subprocess.Popen(
        [python, "manage.py", "runserver", "--noreload", f"127.0.0.1:{PORT}"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    wait_for_server()
    return server, paths


def wait_for_server(port: int = PORT) -> None:
    """Until the server on `port` answers its sign-in page (30 s at most)."""
    for _ in range(150):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2)
            return
        except OSError:
            time.sleep(0.2)


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
    args = parser.parse_args()
    print(f"checkout: {args.root}")
    with tempfile.TemporaryDirectory() as tmp:
        server, paths = serve(args.root, Path(tmp) / "bench.sqlite3")
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
                m = Measure(page)
                log_in(page, "bench-annotator")
                for local in LEADS:
                    path, item_id = paths[local]
                    keys, typed = evidence(m, local, path, item_id)
                    print(f"evidence {local}: {keys} keys, {typed} characters typed into the find box")
                yue_path, yue_item = paths["yue"]
                keys, loads = whole_article(m, yue_path, yue_item)
                print(f"whole standard article from a lead item: {keys} keys, {loads} page loads")
                record, back = focus_after_button(m, yue_path, yue_item)
                print(f"not found: {record} keys; back on the panel's buttons after it: {back} keys")
                bar_path, bar_item = paths["bar"]
                print(f"not possible (no standard full text): {not_possible(m, bar_path, bar_item)} keys")
                print(f"phone 390x844: {phone(m, yue_path, yue_item):.0f} px of the edited field under the lead")
                fields, banners = over_long(m, yue_path, yue_item)
                print(f"over-long question: {fields} of 2 other fields saved; refused submit: {banners} banners")
                arz_path, _ = paths["arz"]
                keys, loads = document_submit(m, arz_path)
                print(f"document-QA page to the pair's submit: {keys} keys, {loads} page loads")
                log_in(page, "bench-other")
                keys, loads = sent_back(m, paths["rewrite"])
                print(f"home to the item sent back: {keys} keys, {loads} page loads")
                keys, loads = resubmit(m, paths["rewrite"])
                print(f"resubmit from the rewrite page: {keys} keys, {loads} page loads")
                facts, undo = skip(m)
                print(f"only pair left is one this person skipped: shows '{facts}'; undo: {undo}")
                browser.close()
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
