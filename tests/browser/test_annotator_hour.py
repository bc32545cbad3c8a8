"""An annotator's hour in Chromium: signed out mid-edit, two tabs in conflict, the plain form's conflict,
a whole pair without the mouse, verification inside the item, skipping, limits, and the layout."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from annotation.models import PagePair, PairSkip, QAItem
from annotation.services.items import qa_item_create, qa_item_update
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_update
from review.models import Verification
from tests import factories
from tests.browser.conftest import log_in, open_account_menu
from tests.browser.test_authoring import card, wait_saved

pytestmark = pytest.mark.browser

STANDARD_TEXT = (
    "这是一家位于深水埗的茶餐厅，以菠萝包闻名。\n"
    "== 制作 ==\n"
    "老板姓陈。店铺每逢星期三休息。\n"
    "== 历史 ==\n"
    "茶餐厅开业超过六十年。"
)


@pytest.fixture
def verified_project(project):
    project_update(project=project, verification_required=True)
    project.refresh_from_db()
    return project


def open_pair(page: Page, pair: PagePair) -> None:
    page.goto(pair.get_absolute_url())
    expect(page.locator("#keys-toggle")).to_be_visible()  # the page's scripts have started


def log_out_in(other: Page) -> None:
    other.goto("/")
    open_account_menu(other)
    other.locator(".topbar").get_by_role("button", name="Log out").click()
    expect(other.locator(".topbar")).to_contain_text("Log in")


def test_signed_out_in_another_tab_the_text_is_kept_and_saved_after_signing_in_here(
    page: Page, context: BrowserContext, annotating_pair, annotator
):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    open_pair(page, annotating_pair)
    log_out_in(context.new_page())

    question = card(page, item.pk).locator("textarea[name=question]")
    question.click()
    question.type("深水埗那家茶餐厅开了多少年？")
    expect(page.locator("#signed-out")).to_be_visible()
    expect(page.locator(f"#item-{item.pk}-status")).to_contain_text("you are signed out")
    # No sign-in page inside the card, and the keystrokes stayed in the question.
    expect(card(page, item.pk).locator("input[name=username]")).to_have_count(0)
    assert page.evaluate("document.activeElement.name") == "question"
    question.type("！")
    backup = page.evaluate(f"JSON.parse(localStorage.getItem('localqa:item:{item.pk}')).question")
    assert backup == "深水埗那家茶餐厅开了多少年？！"
    item.refresh_from_db()
    assert item.question == ""

    page.locator("#signin-open").click()
    dialog = page.locator("#signin-dialog")
    expect(dialog.get_by_label("Username")).to_have_value("annotator")
    dialog.get_by_label("Password").fill("wrong password")
    dialog.get_by_role("button", name="Sign in and save").click()
    expect(page.locator("#signin-error")).to_contain_text("not right")
    dialog.get_by_label("Password").fill(factories.PASSWORD)
    dialog.get_by_role("button", name="Sign in and save").click()

    wait_saved(page, item.pk)
    expect(page.locator("#signed-out")).to_be_hidden()
    expect(page).to_have_url(re.compile(rf"/pairs/{annotating_pair.pk}/$"))
    item.refresh_from_db()
    assert item.question == "深水埗那家茶餐厅开了多少年？！"
    assert page.evaluate(f"localStorage.getItem('localqa:item:{item.pk}')") is None
    # The page carries the new session's token: the next save goes through too.
    question.type("？")
    wait_saved(page, item.pk)
    item.refresh_from_db()
    assert item.question.endswith("！？")


def test_signing_in_in_a_new_tab_saves_what_waits_in_the_first(
    page: Page, context: BrowserContext, annotating_pair, annotator
):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    open_pair(page, annotating_pair)
    log_out_in(context.new_page())
    card(page, item.pk).locator("textarea[name=answer_local]").fill("六十幾年")
    expect(page.locator("#signed-out")).to_be_visible()

    with context.expect_page() as opened:
        page.locator("#signin-new-tab").click()
    tab = opened.value
    tab.get_by_label("Username").fill("annotator")
    tab.get_by_label("Password").fill(factories.PASSWORD)
    tab.get_by_role("button", name="Log in").click()
    expect(tab.locator("#signed-in")).to_contain_text("You are signed in as annotator")  # not HTTP 405

    wait_saved(page, item.pk)
    item.refresh_from_db()
    assert item.answer_local == "六十幾年"


def test_a_conflict_between_two_tabs_is_resolved_and_the_stale_copy_leaves_every_tab(
    page: Page, context: BrowserContext, annotating_pair, annotator
):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    open_pair(page, annotating_pair)
    other = context.new_page()
    open_pair(other, annotating_pair)

    question = card(page, item.pk).locator("textarea[name=question]")
    question.focus()  # editing here: a save elsewhere does not reload the item under the cursor
    other.locator(f"#item-{item.pk} textarea[name=question]").fill("别处保存的问题？")
    wait_saved(other, item.pk)
    question.fill("我自己的问题？")
    conflict = page.locator(f"#item-{item.pk}-status .conflict")
    expect(conflict).to_be_visible()
    both = conflict.locator(".side-by-side")
    expect(both.locator("td.mine[data-field=question]")).to_have_text("我自己的问题？")
    expect(both.locator("td.theirs").first).to_have_text("别处保存的问题？")

    # Load the newer version: the item really reloads, and no tab brings the rejected text back.
    conflict.get_by_role("button", name="Load the newer version").click()
    expect(question).to_have_value("别处保存的问题？")
    expect(page.locator(f"#item-{item.pk}-status .conflict")).to_have_count(0)
    assert page.evaluate(f"localStorage.getItem('localqa:item:{item.pk}')") is None
    for tab in (page, other):
        tab.reload()
        expect(tab.locator(f"#item-{item.pk} textarea[name=question]")).to_have_value("别处保存的问题？")
        expect(tab.locator(".notice.restored")).to_have_count(0)

    # Once more, and this time keep mine as a new version: the other tab shows it without a reload.
    question.focus()  # editing here: a save elsewhere does not reload this tab's item under the cursor
    other.locator(f"#item-{item.pk} textarea[name=question]").fill("第三个版本？")
    wait_saved(other, item.pk)
    other.locator("#local-lead").focus()  # the other tab is not editing the item
    question.fill("还是我的问题？")
    expect(conflict).to_be_visible()
    conflict.get_by_role("button", name="Keep mine as a new version").click()
    wait_saved(page, item.pk)
    item.refresh_from_db()
    assert item.question == "还是我的问题？"
    expect(other.locator(f"#item-{item.pk} textarea[name=question]")).to_have_value("还是我的问题？")
    expect(other.locator(f"#item-{item.pk}-status")).to_contain_text(f"version {item.version}")
    other.close()


def test_without_javascript_a_stale_save_keeps_the_losing_text_beside_the_newer(
    browser, live_server, annotating_pair, annotator
):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False, locale="en-GB")
    page = context.new_page()
    log_in(page, "annotator")
    page.goto(annotating_pair.get_absolute_url())
    qa_item_update(item=item, user=annotator, version=item.version, question="别处保存的问题？")

    card(page, item.pk).locator("textarea[name=question]").fill("没有脚本时写的问题？")
    response_status = []
    page.on("response", lambda r: response_status.append(r.status) if "/save/" in r.url else None)
    card(page, item.pk).get_by_role("button", name=re.compile("^Save")).click()
    page.wait_for_load_state()
    assert response_status == [409]
    expect(card(page, item.pk).locator("textarea[name=question]")).to_have_value("没有脚本时写的问题？")
    both = card(page, item.pk).locator(".side-by-side")
    expect(both.locator("td.theirs").first).to_have_text("别处保存的问题？")
    expect(both.locator("td.mine").first).to_have_text("没有脚本时写的问题？")

    card(page, item.pk).get_by_role("button", name="Keep mine as a new version").click()
    expect(page.locator(".message.success")).to_contain_text("Saved")
    item.refresh_from_db()
    assert item.question == "没有脚本时写的问题？"
    context.close()


def key(page: Page, *keys: str) -> None:
    for name in keys:
        page.keyboard.press(name)


def test_a_whole_pair_without_the_mouse(page: Page, verified_project, annotator):
    project = verified_project
    pair = factories.pair(project, standard_text=STANDARD_TEXT)
    following = factories.pair(project)
    pair_claim_next(project=project, user=annotator)
    log_in(page, "annotator")
    open_pair(page, pair)
    key(page, "1")  # annotate
    expect(page.locator("#add-item")).to_be_visible()
    page.evaluate("document.addEventListener('mousedown', () => window.__mouse = (window.__mouse || 0) + 1, true)")

    for target, question, standard, local, verdict in (
        ("老闆姓陳", "这家茶餐厅的老板姓什么？", "姓陈", "姓陳", "f"),
        ("菠蘿油", "这家茶餐厅的招牌菜是什么？", "菠萝油和鸳鸯", "菠蘿油同埋鴛鴦", "x"),
    ):
        count = page.locator("#items-list .item-card").count()
        key(page, "n")
        expect(page.locator("#items-list .item-card")).to_have_count(count + 1)
        item_attribute = page.locator("#items-list .item-card").last.get_attribute("data-item-id")
        assert item_attribute is not None
        item_id = int(item_attribute)
        key(page, "l")
        expect(page.locator("#local-lead")).to_be_focused()
        key(page, "Home")
        for _ in range(factories.CANTONESE_LEAD.index(target)):  # code points: 𠮶 is one step
            key(page, "ArrowRight")
        for _ in range(len(target)):
            key(page, "Shift+ArrowRight")
        page.wait_for_function("(t) => window.getSelection().toString() === t", arg=target)
        key(page, "Enter")
        expect(card(page, item_id).locator(".chip-text")).to_have_text([target])
        key(page, "q")
        page.keyboard.type(question)
        key(page, "Tab")
        page.keyboard.type(standard)
        key(page, "Tab")
        page.keyboard.type(local)
        key(page, "Escape")
        wait_saved(page, item_id)
        key(page, "v")
        search = card(page, item_id).locator(".verify-q")
        expect(search).to_be_focused()
        if verdict == "f":
            expect(card(page, item_id).locator(".sentence.match-exact")).to_have_count(1)
            key(page, "Tab", "Tab")
            expect(card(page, item_id).locator(".sentence.match-exact input")).to_be_focused()
            key(page, "Space", "f")
        else:
            key(page, "Escape", "x")
        expect(card(page, item_id).locator(".verify-panel.is-recorded")).to_be_visible()

    expect(page.locator("#verification-reminder")).to_be_hidden()
    key(page, "Control+Enter")
    expect(page).to_have_url(re.compile(rf"/pairs/{following.pk}/$"))
    assert page.evaluate("window.__mouse || 0") == 0

    pair.refresh_from_db()
    assert pair.status == PagePair.Status.SUBMITTED
    items = list(QAItem.objects.filter(pair=pair).order_by("id"))
    assert [item.status for item in items] == ["submitted", "submitted"]
    assert [item.spans.get().text for item in items] == ["老闆姓陳", "菠蘿油"]
    lead = factories.CANTONESE_LEAD
    assert all(lead[s.start : s.end] == s.text for item in items for s in item.spans.all())
    found, not_found = (Verification.objects.get(item=item) for item in items)
    assert (found.result, not_found.result) == ("found", "not_found")
    start = STANDARD_TEXT.index("老板姓陈。")
    assert found.sentences == [{"start": start, "end": start + 5, "text": "老板姓陈。"}]


def test_verification_required_refuses_submitting_an_unverified_pair(page: Page, verified_project, annotator):
    factories.pair(verified_project, standard_text=STANDARD_TEXT)
    pair = pair_claim_next(project=verified_project, user=annotator)
    assert pair is not None
    pair_screen(pair=pair, user=annotator, decision="annotate")
    for evidence, answer in (("姓陳", "姓陈"), ("深水埗", "深水埗")):
        item = qa_item_create(pair=pair, user=annotator)
        lead = factories.CANTONESE_LEAD
        qa_item_update(
            item=item,
            user=annotator,
            version=item.version,
            question="问题？",
            answer_standard=answer,
            answer_local=answer,
            spans=[{"start": lead.index(evidence), "end": lead.index(evidence) + len(evidence), "text": evidence}],
        )
    log_in(page, "annotator")
    open_pair(page, pair)
    expect(page.locator("#verification-reminder")).to_contain_text("2 not yet")
    # Headings are not sentences to tick.
    expect(page.locator(".sentences").first).to_be_visible()
    expect(page.locator("#items-list")).not_to_contain_text("== 制作 ==")
    page.locator("#submit-pair").click()
    # Each problem at its item, not in banners.
    notes = page.locator("#items-list .field-note[id$='-verification-note']")
    expect(notes).to_have_text(["Not verified on the standard page yet.", "Not verified on the standard page yet."])
    expect(page.locator(".messages .message.error")).to_have_count(0)
    pair.refresh_from_db()
    assert pair.status == PagePair.Status.ANNOTATING

    first = page.locator("#items-list .item-card").first
    first.locator(".verify-form textarea[name=note]").fill("标准页写的是“陈老板”")
    first.locator(".sentence.match-exact input[type=checkbox]").check()
    first.locator(".record-found").click()
    expect(first.locator(".verification-note")).to_contain_text("标准页写的是“陈老板”")
    expect(page.locator("#verification-reminder")).to_contain_text("1 not yet")


def test_skip_gives_the_pair_back_with_a_reason_and_opens_the_next(page: Page, project, annotator):
    pair = factories.pair(project)
    following = factories.pair(project)
    pair_claim_next(project=project, user=annotator)
    log_in(page, "annotator")
    open_pair(page, pair)
    key(page, "s")
    expect(page.locator("#give-back input[name=reason]")).to_be_focused()
    page.keyboard.type("看不懂粤语的俚语")
    key(page, "Enter")
    expect(page).to_have_url(re.compile(rf"/pairs/{following.pk}/$"))
    skip = PairSkip.objects.get(pair=pair)
    assert (skip.reason, skip.status_before) == ("看不懂粤语的俚语", "claimed")
    pair.refresh_from_db()
    assert (pair.status, pair.assignee_id) == ("new", None)


def test_a_too_long_answer_shows_its_limit_and_is_kept_not_cut(page: Page, annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    log_in(page, "annotator")
    open_pair(page, annotating_pair)
    answer = card(page, item.pk).locator("textarea[name=answer_standard]")
    long_text = "菠" * 4999 + "𠮶𠵱"
    answer.fill(long_text)
    expect(card(page, item.pk).locator(".length.is-over")).to_have_text("5001 / 5000")
    expect(page.locator(f"#item-{item.pk}-status")).to_contain_text("except the text marked too long")
    expect(page.locator(f"#item-{item.pk}-answer_standard-note")).to_contain_text("1 over the limit of 5000")
    expect(answer).to_have_attribute("aria-invalid", "true")
    assert answer.input_value() == long_text  # nothing cut
    answer.press("End")
    answer.press("Backspace")
    wait_saved(page, item.pk)
    expect(page.locator(f"#item-{item.pk}-answer_standard-note")).to_have_text("")
    item.refresh_from_db()
    assert item.answer_standard == long_text[:-1]
    expect(page.locator("#lead-count .n")).to_have_text("1")


BAVARIAN_LEAD = (
    "Da Kaiserschmarrn is a Mehlspeis aus da boarischn und östareichischn Kuchl. Ma machtn aus Oa, Mehl, Muich "
    "und a weng Zucka; da Teig werd in da Pfanna zrissn und mit Zwetschgnröster gessn. Da Kaiser Franz Joseph "
    "soi'n bsonders gern megn ham."
)
GERMAN_LEAD = "Der Kaiserschmarrn ist eine Süßspeise der österreichischen und bayerischen Küche."


def _pair_with_items(coordinator, annotator, slug, local, standard, title, lead, standard_lead, facts):
    project = factories.project(
        coordinator, slug=slug, local_language=local, standard_language=standard, guidelines=GUIDELINES
    )
    membership_set(project=project, user=annotator, roles={"annotator"})
    factories.pair(
        project,
        local_title=title,
        standard_title=title,
        local_lead=lead,
        standard_lead=standard_lead,
        standard_text=standard_lead + "\n== Geschichte ==\n" + standard_lead,
    )
    pair = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=pair, user=annotator, decision="annotate")
    for evidence, question, answer_standard, answer_local in facts:
        start = lead.index(evidence)
        qa_item_create(
            pair=pair,
            user=annotator,
            question=question,
            answer_standard=answer_standard,
            answer_local=answer_local,
            spans=[{"start": start, "end": start + len(evidence), "text": evidence}],
        )
    return pair


GUIDELINES = (
    "## Lead-section QAs\n\nFind 2–3 facts that are on the local page only. Questions stand alone, "
    "answers are short phrases. Avoid mostly “which year” questions."
)
ARABIC_LEAD = (
    "الكُشَري أكلة شعبية مصرية، بتتعمل من الرز والمكرونة والعدس والصلصة والبصل المحمّر، "
    "وبيتاكل في كل حتة في مصر، وأشهر محلاته في وسط البلد."
)


@pytest.mark.one_engine  # layout only: the flows above run on both engines
@pytest.mark.parametrize(
    ("slug", "local", "standard", "title", "lead", "standard_lead", "facts"),
    [
        ("yue-zh", "yue", "cmn", "𠮶間茶餐廳", factories.CANTONESE_LEAD, factories.MANDARIN_LEAD,
         [("老闆姓陳", "这家茶餐厅的老板姓什么？", "姓陈", "姓陳"), ("菠蘿油", "招牌菜是什么？", "菠萝油", "菠蘿油"),
          ("逢星期三休息", "星期几休息？", "星期三", "星期三")]),
        ("bar-de", "bar", "deu", "Kaiserschmarrn", BAVARIAN_LEAD, GERMAN_LEAD,
         [("Zwetschgnröster", "Womit wird Kaiserschmarrn gegessen?", "Zwetschgenröster", "Zwetschgnröster"),
          ("Kaiser Franz Joseph", "Wer soll ihn besonders gern gemocht haben?", "Kaiser Franz Joseph",
           "Kaiser Franz Joseph")]),
        ("arz-ar", "arz", "arb", "كشري", ARABIC_LEAD, "الكشري طبق مصري يتكون من الأرز والمعكرونة والعدس.",
         [("وسط البلد", "أين توجد أشهر محلات الكشري؟", "وسط البلد", "وسط البلد"),
          ("البصل المحمّر", "ما الذي يوضع فوق الكشري؟", "البصل المقلي", "البصل المحمّر")]),
    ],
    ids=["cantonese", "bavarian", "arabic"],
)  # fmt: skip
def test_the_layout_keeps_the_local_lead_in_view_and_the_guidelines_beside_it(
    browser, live_server, coordinator, annotator, slug, local, standard, title, lead, standard_lead, facts
):
    pair = _pair_with_items(coordinator, annotator, slug, local, standard, title, lead, standard_lead, facts)
    for width, height in ((1440, 900), (390, 844)):
        context = browser.new_context(
            base_url=live_server.url, viewport={"width": width, "height": height}, locale="en-GB"
        )
        page = context.new_page()
        log_in(page, "annotator")
        open_pair(page, pair)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the page scrolls sideways by {overflow}px at {width}px"
        page.screenshot(path=f"/tmp/annot-{slug}-{width}.png")
        # Working on the last item: the local lead with its highlights is still in view.
        last = page.locator("#items-list .item-card").last
        last.locator("textarea[name=answer_local]").focus()
        last.scroll_into_view_if_needed()
        lead_box = page.locator("#local-lead").bounding_box()
        assert lead_box["y"] >= -1 and lead_box["y"] < height / 2, lead_box
        expect(page.locator("#local-lead mark.hl").first).to_be_in_viewport()
        page.screenshot(path=f"/tmp/annot-{slug}-{width}-editing.png")
        if width == 1440:
            page.keyboard.press("Escape")
            page.keyboard.press("g")
            panel = page.locator("#guidelines-panel")
            expect(panel).to_be_visible()
            guide = panel.bounding_box()
            for pane in ("#local-lead", "#standard-lead"):
                box = page.locator(pane).bounding_box()
                assert box["x"] + box["width"] <= guide["x"] or guide["x"] + guide["width"] <= box["x"], pane
            page.screenshot(path=f"/tmp/annot-{slug}-{width}-guidelines.png")
            page.keyboard.press("g")
            page.keyboard.press("?")
            expect(page.locator("#keys-overlay")).to_be_visible()
            page.screenshot(path=f"/tmp/annot-{slug}-{width}-keys.png")
            # Closed, the list gives the keys back to the page at once: the next key is the page's, not its button's.
            page.keyboard.press("Escape")
            expect(page.locator("#keys-overlay")).to_be_hidden()
            assert page.evaluate("document.activeElement.closest('dialog') === null")
            page.keyboard.press("g")
            expect(panel).to_be_visible()
            page.keyboard.press("g")
        else:
            assert page.locator(".topbar").bounding_box()["height"] <= 48
        context.close()


def test_evidence_by_double_click_and_by_word_steps_from_a_clicked_caret(page: Page, coordinator, annotator):
    pair = _pair_with_items(
        coordinator, annotator, "bar-de", "bar", "deu", "Kaiserschmarrn", BAVARIAN_LEAD, GERMAN_LEAD, []
    )
    item = qa_item_create(pair=pair, user=annotator)
    log_in(page, "annotator")
    open_pair(page, pair)
    word = page.evaluate(
        """(w) => {
            const walker = document.createTreeWalker(document.getElementById("local-lead"), NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                const at = node.data.indexOf(w);
                if (at < 0) continue;
                const range = document.createRange();
                range.setStart(node, at + 2);
                range.setEnd(node, at + 3);
                const r = range.getClientRects()[0];
                return {x: r.left + r.width / 2, y: r.top + r.height / 2};
            }
        }""",
        "Zwetschgnröster",
    )
    page.mouse.dblclick(word["x"], word["y"])
    page.wait_for_function("() => window.getSelection().toString().trim() === 'Zwetschgnröster'")
    page.keyboard.press("Enter")
    expect(card(page, item.pk).locator(".chip-text")).to_have_text(["Zwetschgnröster"])

    # A click puts the caret there; Ctrl+Shift+Right then takes whole words from it.
    page.mouse.click(word["x"] - 30, word["y"])
    page.keyboard.press("Control+ArrowRight")
    page.keyboard.press("Control+ArrowRight")
    page.keyboard.press("Control+Shift+ArrowRight")
    page.keyboard.press("e")
    wait_saved(page, item.pk)
    spans = list(item.spans.order_by("start").values_list("start", "end", "text"))
    assert all(BAVARIAN_LEAD[start:end] == text for start, end, text in spans)
    assert len(spans) == 2 and spans[0][2] == "Zwetschgnröster"
    first_end, second_start = spans[0][1], spans[1][0]
    assert first_end is not None and second_start is not None
    assert second_start > first_end  # from the clicked caret on, not from the start of the lead
