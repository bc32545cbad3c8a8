"""The Wikipedia-QA author's and reviewer's walk, by keyboard alone with an Arabic layout active: claim, screen,
evidence by find-in-lead (Cantonese with 𨋢 𠵱, Bavarian with combining marks, Arabic right to left), items,
verification (whole article, focus kept, a changed answer needing a new check), submit; a reviewer flags; the
author finds it on home, rewrites with the verification panel and resubmits by key; skip and undo; sign-out in
another tab and the Back button keep what was typed; the phone layout never covers the field being edited."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from annotation.models import EvidenceSpan, PagePair, PairSkip, QAItem
from annotation.services.items import qa_item_create
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_update
from review.models import Judgment, Verification
from tests import factories
from tests.browser.conftest import log_in, open_account_menu
from tests.browser.test_authoring import wait_saved

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/shots-author")
CANTONESE = "𨋢喺香港叫做升降機，𠵱家全港有六萬幾部𨋢，最舊嗰部喺中環，一九零八年開始行。"
MANDARIN = "电梯是一种垂直运输工具。"
MANDARIN_TEXT = "电梯是一种垂直运输工具。\n== 历史 ==\n香港最早的电梯于1908年启用。\n== 数量 ==\n香港现有电梯约六万部。"
BAVARIAN = "De Weißwuascht is a Brühwuascht aus Kaibfleisch, de wo se z Minga vor zwölfe isst. Dazua ghead a Brezn."
BAVARIAN = BAVARIAN.replace("ö", "o\u0308")  # a combining mark: two code points for one letter
ARABIC = "الكُشَري أكلة شعبية مصرية، بتتعمل من الرز والمكرونة والعدس، وأشهر محلاته في وسط البلد."

# An Arabic (101) layout: the key printed "n" gives "ى", "/" gives "ظ"; shortcuts match by physical key.
ARABIC_KEYS = {
    "1": ("١", "Digit1"),
    "a": ("ش", "KeyA"),
    "h": ("ا", "KeyH"),
    "l": ("م", "KeyL"),
    "n": ("ى", "KeyN"),
    "/": ("ظ", "Slash"),
    "q": ("ض", "KeyQ"),
    "v": ("ر", "KeyV"),
    "f": ("ب", "KeyF"),
    "x": ("ء", "KeyX"),
    "w": ("ص", "KeyW"),
    "s": ("س", "KeyS"),
    "u": ("ع", "KeyU"),
    "e": ("ث", "KeyE"),
}


def arabic(page: Page, letter: str) -> None:
    """A shortcut pressed with an Arabic layout active: `key` is the Arabic letter, `code` the physical key."""
    key, code = ARABIC_KEYS[letter]
    page.evaluate(
        """([key, code]) => {
            const target = document.activeElement || document.body;
            const event = new KeyboardEvent("keydown", {key, code, bubbles: true, cancelable: true});
            target.dispatchEvent(event);
        }""",
        [key, code],
    )


def press(page: Page, *keys: str) -> None:
    for name in keys:
        page.keyboard.press(name)


def tab_to(page: Page, selector: str, limit: int = 80) -> None:
    for _ in range(limit):
        if page.evaluate("(s) => Boolean(document.activeElement && document.activeElement.matches(s))", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def find_evidence(page: Page, start: str, item_id: int, expected: str, clause: bool = True) -> None:
    """Find-in-lead: '/', type the start, Enter; Shift+Down to the clause's end; Enter adds it."""
    arabic(page, "/")
    expect(page.locator(".lead-find-input")).to_be_focused()
    page.keyboard.type(start)
    press(page, "Enter")
    expect(page.locator("#local-lead")).to_be_focused()
    if clause:
        press(page, "Shift+ArrowDown")
    page.wait_for_function("(t) => window.getSelection().toString() === t", arg=expected)
    press(page, "Enter")
    expect(page.locator(f"#item-{item_id} .chip-text")).to_have_text([expected])


def new_item(page: Page) -> int:
    count = page.locator("#items-list .item-card").count()
    arabic(page, "n")
    expect(page.locator("#items-list .item-card")).to_have_count(count + 1)
    item_id = page.locator("#items-list .item-card").last.get_attribute("data-item-id")
    assert item_id is not None
    return int(item_id)


def write(page: Page, item_id: int, question: str, standard: str, local: str) -> None:
    arabic(page, "q")
    expect(page.locator(f"#item-{item_id} textarea[name=question]")).to_be_focused()
    page.keyboard.type(question)
    press(page, "Tab")
    page.keyboard.type(standard)
    press(page, "Tab")
    page.keyboard.type(local)
    press(page, "Escape")
    wait_saved(page, item_id)


def verify_found(page: Page, item_id: int) -> None:
    panel = page.locator(f"#item-{item_id}-verify")
    expect(panel.locator(".sentence.match-exact")).to_have_count(1)
    arabic(page, "v")
    expect(panel.locator(".verify-q")).to_be_focused()
    tab_to(page, f"#item-{item_id}-verify .sentence.match-exact input")
    press(page, "Space")
    arabic(page, "f")
    expect(panel).to_have_class(re.compile(r"\bis-recorded\b"))
    # The focus stays on the button pressed, in the panel that came back.
    page.wait_for_function("() => document.activeElement.classList.contains('record-found')")


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)


def _offsets_exact(pair: PagePair, lead: str) -> list[str]:
    spans = EvidenceSpan.objects.filter(item__pair=pair).order_by("item_id", "start")
    assert all(lead[s.start : s.end] == s.text for s in spans)
    return [s.text for s in spans]


def test_author_and_reviewer_walk_by_keyboard_with_an_arabic_layout(
    page: Page, context: BrowserContext, project, annotator, reviewer
):
    project_update(project=project, lead_qa_min=2, verification_required=True)
    pair = factories.pair(project, local_lead=CANTONESE, standard_lead=MANDARIN, standard_text=MANDARIN_TEXT)
    following = factories.pair(project, local_lead=CANTONESE, standard_lead=MANDARIN, standard_text=MANDARIN_TEXT)
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, "annotator")
    # Every mouse press on every page of the walk is counted (none is expected).
    context.add_init_script(
        "document.addEventListener('mousedown', () => {"
        " sessionStorage.mouse = String(Number(sessionStorage.mouse || 0) + 1); }, true);"
    )
    page.goto(f"/projects/{project.slug}/")
    expect(page.locator("#step-next-pair")).to_contain_text("2 pairs waiting for you")
    tab_to(page, "#next-pair")
    press(page, "Enter")
    expect(page).to_have_url(re.compile(rf"/pairs/{pair.pk}/$"))
    expect(page.locator("#keys-toggle")).to_be_visible()
    arabic(page, "1")  # annotate
    expect(page.locator("#add-item")).to_be_visible()
    expect(page.locator("#protocol")).to_have_count(1)  # in the guidelines panel, from the settings
    expect(page.locator("#lead-count")).to_contain_text("2–3 lead-section QAs per pair")

    first = new_item(page)
    find_evidence(page, "六萬", first, "六萬幾部𨋢")
    write(page, first, "香港现在有多少部电梯？", "约六万部", "六萬幾部𨋢")
    verify_found(page, first)
    arabic(page, "w")  # the whole standard article, its wiki headings as headings
    article = page.locator(f"#item-{first}-verify .article-body")
    expect(article.locator(".wiki-heading")).to_have_text(["历史", "数量"])
    expect(article).not_to_contain_text("==")
    shot(page, "authoring-verified-whole-article-1440")
    arabic(page, "w")

    # The answer changes: the verification no longer speaks for it, at once and after a reload.
    arabic(page, "q")
    press(page, "Tab", "Control+a")
    page.keyboard.type("约六万台")
    panel = page.locator(f"#item-{first}-verify")
    expect(panel).to_have_class(re.compile(r"\bis-outdated\b"))
    expect(panel.locator(".verify-result")).to_have_text("needs a new check")
    press(page, "Escape")
    wait_saved(page, first)
    page.reload()
    expect(page.locator(f"#item-{first}-verify")).to_have_class(re.compile(r"\bis-outdated\b"))
    expect(page.locator(f"#item-{first}-verify-outdated")).to_contain_text("约六万部")
    shot(page, "authoring-verification-outdated-1440")
    page.locator(f"#item-{first}").focus()
    arabic(page, "x")  # the new answer is not on the page: not found, for this text
    expect(page.locator(f"#item-{first}-verify")).to_have_class(re.compile(r"\bis-recorded\b"))
    page.wait_for_function("() => document.activeElement.classList.contains('record-not-found')")

    second = new_item(page)
    find_evidence(page, "一九", second, "一九零八年開始行")
    write(page, second, "香港第一部电梯是哪一年启用的？", "1908年", "一九零八年")
    verify_found(page, second)
    expect(page.locator("#verification-reminder")).to_be_hidden()
    press(page, "Control+Enter")
    expect(page).to_have_url(re.compile(rf"/pairs/{following.pk}/$"))
    assert page.evaluate("Number(sessionStorage.mouse || 0)") == 0

    pair.refresh_from_db()
    assert pair.status == PagePair.Status.SUBMITTED
    assert _offsets_exact(pair, CANTONESE) == ["六萬幾部𨋢", "一九零八年開始行"]
    items = list(QAItem.objects.filter(pair=pair).order_by("id"))
    latest = [Verification.objects.filter(item=item).latest("number") for item in items]
    assert [(v.result, v.answer) for v in latest] == [("not_found", "约六万台"), ("found", "1908年")]

    # A reviewer flags the first item, by keys with the Arabic layout (Q W E flag, 1 2 3 pass).
    open_account_menu(page)
    page.locator(".topbar").get_by_role("button", name="Log out").click()
    log_in(page, "reviewer")
    page.goto(f"/projects/{project.slug}/review/")
    page.evaluate("sessionStorage.mouse = '0'")  # signing in and out was by mouse; the work is not
    tab_to(page, "#review-next")
    press(page, "Enter")
    expect(page.locator("#judgment-form")).to_be_visible()
    page.wait_for_load_state("load")
    page.evaluate(
        """() => {
            for (const [key, code] of [["١", "Digit1"], ["٣", "Digit3"], ["ص", "KeyW"]]) {
                const event = new KeyboardEvent("keydown", {key, code, bubbles: true, cancelable: true});
                document.activeElement.dispatchEvent(event);
            }
        }"""
    )
    reason = page.locator('fieldset[data-criterion="standalone"] textarea')
    expect(reason).to_be_focused()
    page.keyboard.type("Which city? Say Hong Kong in the question.")
    press(page, "Control+Enter")
    expect(page.locator(".message.success")).to_contain_text("Review recorded")
    flag = Judgment.objects.get(verdict="flag")
    assert flag.comment == "Which city? Say Hong Kong in the question."
    flagged = flag.item
    assert page.evaluate("Number(sessionStorage.mouse || 0)") == 0

    # The author finds it on home, rewrites with the verification panel there, resubmits by key.
    open_account_menu(page)
    page.locator(".topbar").get_by_role("button", name="Log out").click()
    log_in(page, "annotator")
    page.goto("/")
    page.evaluate("sessionStorage.mouse = '0'")
    expect(page.locator("#sent-back")).to_contain_text("Say Hong Kong in the question")
    rewrite_url = f"/projects/{project.slug}/items/{flagged.pk}/rewrite/"
    tab_to(page, f'#sent-back a[href="{rewrite_url}"]')
    press(page, "Enter")
    expect(page).to_have_url(re.compile(re.escape(rewrite_url) + "$"))
    panel = page.locator(f"#item-{flagged.pk}-verify")
    expect(panel).to_have_class(re.compile(r"\bis-recorded\b"))
    shot(page, "rewrite-with-verification-1440")
    page.locator(f"#item-{flagged.pk}").focus()
    arabic(page, "q")
    press(page, "Control+a")
    page.keyboard.type("香港现在有多少部电梯（升降机）？")
    press(page, "Tab", "Control+a")
    page.keyboard.type("约六万部")
    expect(panel).to_have_class(re.compile(r"\bis-outdated\b"))
    press(page, "Escape")
    wait_saved(page, flagged.pk)
    verify_found(page, flagged.pk)
    press(page, "Control+Enter")
    expect(page.locator(".message.success")).to_contain_text("Resubmitted")
    flagged.refresh_from_db()
    assert flagged.status == QAItem.Status.SUBMITTED and flagged.answer_standard == "约六万部"
    assert page.evaluate("Number(sessionStorage.mouse || 0)") == 0
    assert Verification.objects.filter(item=flagged).latest("number").answer == "约六万部"


def test_skip_is_undone_by_key_and_typing_survives_sign_out_and_back(
    page: Page, context: BrowserContext, project, annotator
):
    first = factories.pair(project, local_lead=CANTONESE, standard_lead=MANDARIN)
    second = factories.pair(project, local_lead=CANTONESE, standard_lead=MANDARIN)
    pair_claim_next(project=project, user=annotator)
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, "annotator")
    page.goto(first.get_absolute_url())
    expect(page.locator("#keys-toggle")).to_be_visible()
    arabic(page, "s")
    expect(page.locator("#give-back input[name=reason]")).to_be_focused()
    page.keyboard.type("太多俚語")
    press(page, "Control+Enter")
    expect(page).to_have_url(re.compile(rf"/pairs/{second.pk}/$"))
    expect(page.locator("#skip-undo")).to_contain_text("You skipped")
    shot(page, "skip-undo-390")
    arabic(page, "u")
    expect(page).to_have_url(re.compile(rf"/pairs/{first.pk}/$"))
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.assignee == annotator and second.assignee is None
    assert PairSkip.objects.get(pair=first).undone_at is not None

    # Phone: the sticky lead never covers the field being edited.
    arabic(page, "1")
    expect(page.locator("#add-item")).to_be_visible()
    item_id = new_item(page)
    arabic(page, "q")
    question = page.locator(f"#item-{item_id} textarea[name=question]")
    expect(question).to_be_focused()
    for field in ("question", "answer_standard", "answer_local"):
        covered = page.evaluate(
            """() => {
                const lead = document.querySelector(".lead-column").getBoundingClientRect();
                const field = document.activeElement.getBoundingClientRect();
                return field.top < lead.bottom - 1;
            }"""
        )
        assert not covered, f"the sticky lead covers the {field} field"
        page.keyboard.type("六萬")
        if field != "answer_local":
            press(page, "Tab")
    shot(page, "authoring-phone-field-below-lead-390")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    # Signed out in another tab: what is typed stays, and is saved after signing in here.
    other = context.new_page()
    other.goto("/")
    open_account_menu(other)
    other.locator(".topbar").get_by_role("button", name="Log out").click()
    page.keyboard.type("部")
    expect(page.locator("#signed-out")).to_be_visible()
    page.locator("#signin-open").focus()
    press(page, "Enter")
    page.locator("#signin-dialog").get_by_label("Password").fill(factories.PASSWORD)
    press(page, "Enter")
    wait_saved(page, item_id)
    assert QAItem.objects.get(pk=item_id).answer_local == "六萬部"

    # The Back button: away and back, the text is still there.
    page.locator(f"#item-{item_id} textarea[name=question]").focus()
    page.keyboard.type("？")
    page.goto(f"/projects/{project.slug}/")
    page.go_back()
    expect(page.locator(f"#item-{item_id} textarea[name=question]")).to_have_value("六萬？")


@pytest.mark.parametrize(
    ("lead", "language", "start", "expected"),
    [
        (BAVARIAN, ("bar", "deu"), "z Minga", "z Minga vor zwo\u0308lfe isst"),
        (ARABIC, ("arz", "arb"), "بتتعمل", "بتتعمل من الرز والمكرونة والعدس"),
    ],
)
def test_find_in_lead_gives_exact_code_point_offsets_in_bavarian_and_arabic(
    page: Page, coordinator, annotator, lead, language, start, expected
):
    project = factories.project(coordinator, local_language=language[0], standard_language=language[1])
    membership_set(project=project, user=annotator, roles={"annotator"})
    factories.pair(project, local_lead=lead, standard_lead="-")
    pair = pair_claim_next(project=project, user=annotator)
    assert pair is not None
    pair_screen(pair=pair, user=annotator, decision="annotate")
    log_in(page, "annotator")
    page.goto(pair.get_absolute_url())
    expect(page.locator("#keys-toggle")).to_be_visible()
    item_id = new_item(page)
    find_evidence(page, start, item_id, expected)
    press(page, "Control+s")
    wait_saved(page, item_id)
    assert _offsets_exact(pair, lead) == [expected]
    shot(page, f"find-in-lead-{language[0]}-1400")


def test_the_document_qa_page_shows_wiki_headings_and_keeps_exact_offsets_after_them(page: Page, project, annotator):
    project_update(project=project, collect_document_qa=True)
    local_text = CANTONESE + "\n== 歷史 ==\n𠵱家嘅𨋢多數係自動門。"
    factories.pair(project, local_lead=CANTONESE, local_text=local_text, standard_text=MANDARIN_TEXT)
    pair = pair_claim_next(project=project, user=annotator)
    assert pair is not None
    pair_screen(pair=pair, user=annotator, decision="annotate")
    item = qa_item_create(pair=pair, user=annotator, kind="document")
    log_in(page, "annotator")
    page.goto(f"/projects/{project.slug}/pairs/{pair.pk}/document-qa/")
    expect(page.locator("#local-lead .wiki-heading")).to_have_text(["== 歷史 =="])
    expect(page.locator("#standard-full-text .wiki-heading")).to_have_text(["历史", "数量"])
    page.locator(f"#item-{item.pk}").focus()
    find_evidence(page, "自動", item.pk, "自動門")  # to the sentence's end, after the heading and 𠵱 𨋢
    press(page, "Control+s")
    wait_saved(page, item.pk)
    span = EvidenceSpan.objects.get(item=item)
    assert local_text[span.start : span.end] == span.text == "自動門"
    shot(page, "document-qa-headings-1400")
