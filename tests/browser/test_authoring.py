"""What only a browser can show: selecting evidence (mouse and keyboard, non-BMP and RTL text),
autosave with its offline and stale-edit paths, and the offset conversion module itself."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from annotation.models import EvidenceSpan, PagePair, QAItem
from annotation.services.items import qa_item_create
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

ARABIC_LEAD = (
    "الكُشَري أكلة شعبية مصرية، بتتعمل من الرز والمكرونة والعدس والصلصة والبصل المحمّر، "
    "وبيتاكل في كل حتة في مصر، وأشهر محلاته في وسط البلد."
)
ARABIC_STANDARD = "الكشري طبق مصري يتكون من الأرز والمعكرونة والعدس."


def select_text(page: Page, text: str) -> None:
    """Drag the mouse across `text` in the local lead, from its first character to its last."""
    box = page.evaluate(
        """(needle) => {
            const lead = document.getElementById("local-lead");
            const walker = document.createTreeWalker(lead, NodeFilter.SHOW_TEXT);
            const nodes = [];
            for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
            const whole = nodes.map((n) => n.data).join("");
            const at = whole.indexOf(needle);
            if (at < 0) throw new Error("not in the lead: " + needle);
            const point = (offset) => {
                let total = 0;
                for (const n of nodes) {
                    if (offset < total + n.data.length) return [n, offset - total];
                    total += n.data.length;
                }
            };
            const charRect = (offset) => {
                const [node, inNode] = point(offset);
                const range = document.createRange();
                const width = /[\\uD800-\\uDBFF]/.test(node.data[inNode]) ? 2 : 1;
                range.setStart(node, inNode);
                range.setEnd(node, inNode + width);
                const r = range.getClientRects()[0];
                return {left: r.left, right: r.right, y: r.top + r.height / 2};
            };
            const lastUnit = at + needle.length - 1;
            const last = /[\\uDC00-\\uDFFF]/.test(whole[lastUnit]) ? lastUnit - 1 : lastUnit;
            const rtl = getComputedStyle(lead).direction === "rtl";
            return {first: charRect(at), last: charRect(last), rtl};
        }""",
        text,
    )
    first, last = box["first"], box["last"]
    if box["rtl"]:
        start_x, end_x = first["right"] - 1, last["left"] + 1
    else:
        start_x, end_x = first["left"] + 1, last["right"] - 1
    page.mouse.move(start_x, first["y"])
    page.mouse.down()
    page.mouse.move((start_x + end_x) / 2, (first["y"] + last["y"]) / 2, steps=3)
    page.mouse.move(end_x, last["y"], steps=3)
    page.mouse.up()
    expect_selection(page, text)


def expect_selection(page: Page, text: str) -> None:
    page.wait_for_function("(t) => window.getSelection().toString() === t", arg=text)


def card(page: Page, item_id: int):
    return page.locator(f"#item-{item_id}")


def wait_saved(page: Page, item_id: int) -> None:
    form = card(page, item_id).locator("form.item-form")
    expect(form).not_to_have_class(re.compile(r"\b(is-dirty|htmx-request)\b"))
    expect(page.locator(f"#item-{item_id}-status")).to_have_text(re.compile(r"^\s*Saved · version \d+\s*$"))


def fill_item(page: Page, item_id: int, question: str, standard: str, local: str) -> None:
    item = card(page, item_id)
    item.locator("textarea[name=question]").fill(question)
    item.locator("textarea[name=answer_standard]").fill(standard)
    item.locator("textarea[name=answer_local]").fill(local)


def item_ids(page: Page) -> list[int]:
    return [int(i) for i in page.locator("#items-list .item-card").evaluate_all("cs => cs.map(c => c.dataset.itemId)")]


def add_item(page: Page) -> int:
    before = set(item_ids(page))
    count = len(before)
    page.locator("#add-item").click()
    expect(page.locator("#items-list .item-card")).to_have_count(count + 1)
    (new,) = set(item_ids(page)) - before
    return new


def test_annotator_screens_selects_evidence_after_a_non_bmp_character_and_submits(page: Page, project, annotator):
    pair = factories.pair(project)
    log_in(page, "annotator")
    page.goto(project.get_absolute_url())
    page.locator("#next-pair").click()
    expect(page).to_have_url(re.compile(rf"/pairs/{pair.pk}/$"))
    page.locator("#screen-submit").click()  # "Annotate this pair"
    expect(page.locator("#add-item")).to_be_visible()

    first = add_item(page)
    select_text(page, "菠蘿油")
    card(page, first).locator(".add-evidence").click()
    expect(card(page, first).locator(".chip-text")).to_have_text(["菠蘿油"])
    expect(page.locator("#local-lead mark.hl")).to_have_text("菠蘿油")
    fill_item(page, first, "这家茶餐厅的招牌菜是什么？", "菠萝油和鸳鸯", "菠蘿油同埋鴛鴦")
    wait_saved(page, first)

    page.reload()
    expect(card(page, first).locator("textarea[name=question]")).to_have_value("这家茶餐厅的招牌菜是什么？")
    expect(card(page, first).locator("textarea[name=answer_local]")).to_have_value("菠蘿油同埋鴛鴦")
    expect(card(page, first).locator(".chip-text")).to_have_text(["菠蘿油"])

    span = EvidenceSpan.objects.get(item_id=first)
    lead = factories.CANTONESE_LEAD
    assert (span.start, span.end) == (lead.index("菠蘿油"), lead.index("菠蘿油") + 3)
    assert lead[span.start : span.end] == span.text == "菠蘿油"

    second = add_item(page)
    select_text(page, "逢星期三休息")
    card(page, second).locator(".add-evidence").click()
    expect(card(page, second).locator(".chip-text")).to_have_text(["逢星期三休息"])
    fill_item(page, second, "这家茶餐厅星期几休息？", "星期三", "星期三")
    # Submitting straight after typing: the page saves the draft first, then submits.
    page.locator("#submit-pair").click()
    expect(page.locator(".message.success")).to_contain_text("Submitted for review")
    pair.refresh_from_db()
    assert pair.status == PagePair.Status.SUBMITTED
    span = EvidenceSpan.objects.get(item_id=second)
    assert lead[span.start : span.end] == span.text == "逢星期三休息"
    assert QAItem.objects.get(pk=second).answer_local == "星期三"


def test_keyboard_selection_past_a_non_bmp_character_adds_exact_evidence(page: Page, annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    page.goto(annotating_pair.get_absolute_url())
    lead = page.locator("#local-lead")
    lead.focus()
    page.keyboard.press("ArrowRight")  # past 𠮶, one code point but two UTF-16 units
    for _ in range(3):
        page.keyboard.press("Shift+ArrowRight")
    expect_selection(page, "間茶餐")
    page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.press("Shift+ArrowRight")
    expect_selection(page, "間茶餐")
    page.keyboard.press("Enter")
    expect(card(page, item.pk).locator(".chip-text")).to_have_text(["間茶餐"])
    wait_saved(page, item.pk)

    span = EvidenceSpan.objects.get(item=item)
    assert (span.start, span.end, span.text) == (1, 4, "間茶餐")
    assert factories.CANTONESE_LEAD[span.start : span.end] == span.text

    # Back over the non-BMP character from the right: the selection never splits it.
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    for _ in range(2):
        page.keyboard.press("Shift+ArrowLeft")
    expect_selection(page, "𠮶")

    # By word (Ctrl): the selection grows by whole words and still starts at a whole character.
    page.keyboard.press("Home")
    page.keyboard.press("Control+Shift+ArrowRight")
    assert page.evaluate("window.getSelection().toString()").startswith("𠮶")


def test_right_to_left_lead_evidence_has_exact_offsets(page: Page, coordinator, annotator):
    project = factories.project(coordinator, slug="arz-arb", local_language="arz", standard_language="arb")
    membership_set(project=project, user=annotator, roles={"annotator"})
    factories.pair(
        project,
        local_title="كشري",
        standard_title="كشري",
        local_lead=ARABIC_LEAD,
        standard_lead=ARABIC_STANDARD,
    )
    pair = pair_claim_next(project=project, user=annotator)
    assert pair is not None
    pair_screen(pair=pair, user=annotator, decision="annotate")
    item = qa_item_create(pair=pair, user=annotator)

    log_in(page, "annotator")
    page.goto(pair.get_absolute_url())
    expect(page.locator("#local-lead")).to_have_css("direction", "rtl")
    select_text(page, "الرز والمكرونة")
    card(page, item.pk).locator(".add-evidence").click()
    expect(card(page, item.pk).locator(".chip-text")).to_have_text(["الرز والمكرونة"])
    wait_saved(page, item.pk)

    span = EvidenceSpan.objects.get(item=item)
    assert ARABIC_LEAD[span.start : span.end] == span.text == "الرز والمكرونة"
    assert span.start == ARABIC_LEAD.index("الرز والمكرونة")


def test_stale_edit_shows_the_conflict_and_keeps_the_annotators_text(page: Page, context, annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    page.goto(annotating_pair.get_absolute_url())
    other = context.new_page()
    other.goto(annotating_pair.get_absolute_url())

    question = card(page, item.pk).locator("textarea[name=question]")
    question.focus()  # editing here (a tab that is not would reload the item when the other one saves)
    other.locator(f"#item-{item.pk} textarea[name=question]").fill("别处保存的问题？")
    wait_saved(other, item.pk)

    question.fill("我自己的问题？")
    conflict = page.locator(f"#item-{item.pk}-status .conflict")
    expect(conflict).to_be_visible()
    expect(conflict).to_contain_text("别处保存的问题？")
    expect(question).to_have_value("我自己的问题？")
    item.refresh_from_db()
    assert item.question == "别处保存的问题？"

    conflict.get_by_role("button", name="Keep mine as a new version").click()
    wait_saved(page, item.pk)
    item.refresh_from_db()
    assert item.question == "我自己的问题？"
    other.close()


def test_typing_offline_is_kept_and_saved_when_back_online(page: Page, context, annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    page.goto(annotating_pair.get_absolute_url())
    expect(page.locator(f"#item-{item.pk}-status")).to_contain_text("Saved")

    context.set_offline(True)
    card(page, item.pk).locator("textarea[name=question]").fill("离线时写的问题？")
    status = page.locator(f"#item-{item.pk}-status")
    expect(status).to_contain_text("Not saved — offline, retrying…")
    expect(status).to_have_class(re.compile(r"\bis-offline\b"))
    backup = page.evaluate(f"() => JSON.parse(localStorage.getItem('localqa:item:{item.pk}'))")
    assert backup["question"] == "离线时写的问题？"

    context.set_offline(False)
    wait_saved(page, item.pk)
    item.refresh_from_db()
    assert item.question == "离线时写的问题？"
    assert page.evaluate(f"() => localStorage.getItem('localqa:item:{item.pk}')") is None


def test_typing_while_the_server_cannot_be_reached_is_kept_and_saved_when_it_answers_again(
    page: Page, annotating_pair, annotator
):
    """The server is up but cannot save (its database restarting: a 503), then does not answer at all."""
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    page.goto(annotating_pair.get_absolute_url())
    expect(page.locator(f"#item-{item.pk}-status")).to_contain_text("Saved")
    outage: dict[str, Any] = {"mode": "503", "refused": 0}

    def save_route(route):
        if outage["mode"] == "503":
            outage["refused"] += 1
            route.fulfill(status=503, content_type="application/json", body='{"code": "database_unavailable"}')
        elif outage["mode"] == "unreachable":
            outage["refused"] += 1
            route.abort("connectionrefused")
        else:
            route.continue_()

    page.route(re.compile(rf".*/items/{item.pk}/save/$"), save_route)
    card(page, item.pk).locator("textarea[name=question]").fill("服务器断了时写的问题？")
    status = page.locator(f"#item-{item.pk}-status")
    expect(status).to_contain_text("Not saved — the server had a problem, retrying…")
    backup = page.evaluate(f"() => JSON.parse(localStorage.getItem('localqa:item:{item.pk}'))")
    assert backup["question"] == "服务器断了时写的问题？"

    outage["mode"] = "unreachable"
    expect(status).to_contain_text("Not saved — offline, retrying…", timeout=10_000)
    item.refresh_from_db()
    assert item.question != "服务器断了时写的问题？"

    outage["mode"] = "up"
    wait_saved(page, item.pk)
    item.refresh_from_db()
    assert item.question == "服务器断了时写的问题？"
    assert outage["refused"] >= 2
    assert page.evaluate(f"() => localStorage.getItem('localqa:item:{item.pk}')") is None


def test_a_local_backup_newer_than_the_server_is_restored_and_saved(page: Page, annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    page.goto("/accounts/login/")
    backup = {"question": "没保存的问题？", "answer_standard": "", "answer_local": "", "spans": "[]", "version": "1"}
    page.evaluate("([key, value]) => localStorage.setItem(key, value)", [f"localqa:item:{item.pk}", json.dumps(backup)])
    page.goto(annotating_pair.get_absolute_url())
    expect(card(page, item.pk).locator(".notice.restored, textarea[name=question]").first).to_be_visible()
    expect(card(page, item.pk).locator("textarea[name=question]")).to_have_value("没保存的问题？")
    wait_saved(page, item.pk)
    item.refresh_from_db()
    assert item.question == "没保存的问题？"


OFFSET_SAMPLES = [
    factories.CANTONESE_LEAD,
    "𠮶𠮶a𠀋b",
    "e\u0301te\u0301 cafe\u0301",  # combining acute accents
    ARABIC_LEAD,
    "مَرْحَبًا 𠮶 hello",
]


@pytest.mark.one_engine  # the module's own arithmetic in the page: no query
def test_offset_conversion_module_in_the_browser(page: Page, live_server):
    page.goto("/accounts/login/")
    expected = [
        {
            "text": text,
            "utf16": [len(text[:i].encode("utf-16-le")) // 2 for i in range(len(text) + 1)],
            "length": len(text),
        }
        for text in OFFSET_SAMPLES
    ]
    problems = page.evaluate(
        """async (samples) => {
            const m = await import("/static/js/offsets.js");
            const problems = [];
            const check = (ok, what) => { if (!ok) problems.push(what); };
            for (const {text, utf16, length} of samples) {
                check(m.codePointLength(text) === length, `length of ${text}`);
                utf16.forEach((u, cp) => {
                    check(m.codePointToUtf16(text, cp) === u, `cp ${cp} -> utf16 in ${text}`);
                    check(m.utf16ToCodePoint(text, u) === cp, `utf16 ${u} -> cp in ${text}`);
                    check(m.utf16ToCodePoint(text, u, "end") === cp, `utf16 ${u} -> cp (end) in ${text}`);
                });
                // Offsets inside a surrogate pair snap to the pair's start or end.
                for (let u = 1; u < text.length; u++) {
                    if (!utf16.includes(u)) {
                        const before = utf16.findLastIndex((x) => x < u);
                        check(m.utf16ToCodePoint(text, u) === before, `snap start at ${u} in ${text}`);
                        check(m.utf16ToCodePoint(text, u, "end") === before + 1, `snap end at ${u} in ${text}`);
                    }
                }
            }
            check(m.sliceCodePoints("𠮶間茶餐廳", 1, 3) === "間茶", "slice after non-BMP");
            check(m.sliceCodePoints("𠮶間", 0, 1) === "𠮶", "slice a non-BMP character");
            check(m.utf16ToCodePoint("ab", 99) === 2 && m.utf16ToCodePoint("ab", -3) === 0, "clamping");
            check(m.codePointToUtf16("𠮶", 5) === 2, "clamping past the end");
            return problems;
        }""",
        expected,
    )
    assert problems == []
    # The same slices in Python, for the record: the contract is text[start:end] == span_text.
    assert "𠮶間茶餐廳"[1:3] == "間茶"


def test_item_spans_json_is_what_the_server_validates(page: Page, annotating_pair, annotator):
    """A span added in the browser is stored as JSON code-point offsets the service accepts."""
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    page.goto(annotating_pair.get_absolute_url())
    select_text(page, "𠮶間")
    card(page, item.pk).locator(".add-evidence").click()
    value = json.loads(page.locator(f"#item-{item.pk}-spans").input_value())
    assert value == [{"start": 0, "end": 2, "text": "𠮶間"}]
    wait_saved(page, item.pk)
    card(page, item.pk).locator(".chip-remove").click()
    expect(card(page, item.pk).locator(".chip.empty")).to_be_visible()
    wait_saved(page, item.pk)
    assert not QAItem.objects.get(pk=item.pk).spans.exists()


def test_active_time_is_sent_when_the_annotator_leaves_the_page(page: Page, annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    page.goto(annotating_pair.get_absolute_url())
    card(page, item.pk).locator("textarea[name=question]").click()
    page.keyboard.type("问")
    # Active seconds accrue once a second while the tab is visible and in use.
    page.wait_for_function("(t0) => performance.now() > t0 + 2100", arg=page.evaluate("performance.now()"))
    page.goto("/accounts/login/")  # pagehide sends the beacon
    for _ in range(50):
        annotating_pair.refresh_from_db()
        if annotating_pair.active_seconds:
            break
        page.wait_for_timeout(100)
    assert 2 <= annotating_pair.active_seconds <= 10
    assert 2 <= QAItem.objects.get(pk=item.pk).active_seconds <= 10


STRICT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; object-src 'none'"
)


def test_authoring_works_under_a_content_security_policy_without_unsafe_inline(page: Page, annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")

    def with_csp(route):
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, "content-security-policy": STRICT_CSP})

    page.route(re.compile(r".*/pairs/\d+/$"), with_csp)
    page.add_init_script(
        "window.__cspViolations = [];"
        "document.addEventListener('securitypolicyviolation',"
        " (e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    page.goto(annotating_pair.get_absolute_url())
    page.locator("#local-lead").focus()
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Enter")
    card(page, item.pk).locator("textarea[name=question]").fill("问题？")
    wait_saved(page, item.pk)
    assert page.evaluate("window.__cspViolations") == []
    span = EvidenceSpan.objects.get(item=item)
    assert (span.start, span.end, span.text) == (0, 2, "𠮶間")
