"""The review loop in Chromium: flag, the author's rewrite, a second review, the history with its diff."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from annotation.models import EvidenceSpan, QAItem
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_update
from review.models import Verification
from tests import factories
from tests.browser.conftest import log_in
from tests.browser.test_authoring import fill_item, select_text, wait_saved
from tests.review.conftest import LOCAL_TEXT, STANDARD_TEXT, submitted_pair

pytestmark = pytest.mark.browser


def test_flag_rewrite_and_accept_leave_two_revisions_and_a_readable_diff(
    page: Page, project, annotator, reviewer, tmp_path
):
    project_update(project=project, lead_qa_min=1)
    pair, items = submitted_pair(project, annotator, evidences=("深水埗",), standard_text=STANDARD_TEXT)
    item = items[0]

    # The reviewer flags stand-alone validity.
    log_in(page, "reviewer")
    page.goto(f"/projects/{project.slug}/review/")
    page.get_by_role("button", name="Review the next QA item").click()
    expect(page.locator(".item-summary .q")).to_have_text(item.question)
    expect(page.locator(".evidence-text mark")).to_have_text("深水埗")
    for key in ("fluency", "appropriateness"):
        page.locator(f'fieldset[data-criterion="{key}"] input[value="pass"]').check()
    standalone = page.locator('fieldset[data-criterion="standalone"]')
    standalone.locator('input[value="flag"]').check()
    standalone.locator("textarea").fill("Which restaurant? The question needs the article.")
    page.locator("#judgment-submit").click()
    expect(page.locator(".message.success")).to_contain_text("Review recorded")
    page.context.clear_cookies()

    # The author sees the flag and the comment, rewrites the question, resubmits.
    log_in(page, "annotator")
    page.goto(f"/projects/{project.slug}/my-items/")
    page.get_by_role("link", name="See the flags and rewrite").click()
    page.wait_for_load_state("load")  # htmx wires the autosave up once the page has loaded
    flags = page.locator("#review-flags")
    expect(flags).to_contain_text("Stand-alone validity")
    expect(flags).to_contain_text("Which restaurant? The question needs the article.")
    expect(flags).not_to_contain_text("reviewer")  # blind review
    item.refresh_from_db()
    question = page.locator(f"#item-{item.pk} textarea[name=question]")
    question.fill("深水埗那家开了六十多年的茶餐厅位于哪个区？")
    expect(page.locator(f"#item-{item.pk}-status")).to_contain_text(f"Saved · version {item.version + 1}")
    page.locator("#resubmit").click()
    expect(page.locator(".message.success")).to_contain_text("Resubmitted")
    item.refresh_from_db()
    assert (item.status, item.revisions.count()) == ("submitted", 2)
    page.context.clear_cookies()

    # A second review accepts it.
    log_in(page, "reviewer")
    page.goto(f"/projects/{project.slug}/review/")
    page.get_by_role("button", name="Review the next QA item").click()
    expect(page.locator(".item-summary .q")).to_have_text("深水埗那家开了六十多年的茶餐厅位于哪个区？")
    for key in ("fluency", "standalone", "appropriateness"):
        page.locator(f'fieldset[data-criterion="{key}"] input[value="pass"]').check()
    page.locator("#judgment-submit").click()
    expect(page.locator(".message.success")).to_contain_text("Review recorded")
    assert QAItem.objects.get(pk=item.pk).status == "accepted"

    # The history shows both revisions, the diff, and the judgments behind each.
    page.goto(f"/projects/{project.slug}/items/{item.pk}/history/")
    expect(page.locator("#item-status")).to_have_text("Accepted")
    expect(page.locator("article.revision")).to_have_count(2)
    second = page.locator("#revision-2")
    expect(second.locator("ins").first).to_be_visible()
    expect(second.locator("del")).to_contain_text(["关于"])
    expect(page.locator("#revision-1 .review-result.is-flagged")).to_contain_text("Which restaurant?")
    expect(second.locator(".review-result")).to_contain_text("Pass")

    # On a phone, the review list finds the accepted item by its author, its pair's final topic and its status.
    from review.models import FinalLabel

    FinalLabel.objects.create(project=project, pair=pair, kind="topic", value="food", method="agreement")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/projects/{project.slug}/review/")
    expect(page.locator("#review-items tbody")).to_contain_text("No QA items match.")  # opens on what waits
    filters = page.locator("#review-filters")
    filters.get_by_label("Status").select_option(label="Accepted")
    filters.get_by_label("Author").select_option(label="annotator")
    filters.get_by_label("Topic").select_option(label="Food")
    filters.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"status=accepted&kind=&author=annotator&topic=food$"))
    expect(page.locator("#review-items tbody tr")).to_have_count(1)
    expect(page.locator(f'#review-items tr[data-item-id="{item.pk}"]')).to_contain_text("Accepted")
    expect(filters.get_by_label("Topic")).to_have_value("food")
    page.screenshot(path=str(tmp_path / "review-list-390.png"), full_page=True)
    page.screenshot(path="/tmp/notes/reviewfilters-390.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    filters.get_by_label("Topic").select_option(label="History")
    filters.get_by_role("button", name="Filter").click()
    expect(page.locator("#review-items tbody")).to_contain_text("No QA items match.")


def test_verification_search_highlights_matches_and_records_the_ticked_sentence(page: Page, project, annotator):
    _, items = submitted_pair(project, annotator, evidences=("深水埗", "姓陳"), standard_text=STANDARD_TEXT)
    item = items[1]
    log_in(page, "annotator")
    page.goto(f"/projects/{project.slug}/items/{item.pk}/verify/")
    search = page.locator("#verify-q")
    expect(search).to_have_value("姓陳")  # pre-filled from the answer
    search.fill("姓陈")
    # the results of the new search are in (the first, pre-filled search's results may match too: ticking one
    # of those before the swap would tick a box the swap then replaces)
    expect(page.locator("#search-results [role=status]")).to_contain_text("“姓陈”")
    expect(page.locator(".sentence.match-exact mark")).to_have_text("姓陈")
    page.locator(".sentence.match-exact input[type=checkbox]").check()
    page.locator("#record-found").click()
    expect(page.locator("#verification-result")).to_have_text("Found on the standard page")
    recorded = Verification.objects.get(item=item)
    assert recorded.sentences == [{"start": 21, "end": 26, "text": "老板姓陈。"}]
    assert STANDARD_TEXT[21:26] == "老板姓陈。"


def test_a_document_qa_takes_its_evidence_from_the_local_full_text_under_a_time_box(page: Page, project, annotator):
    project_update(project=project, collect_document_qa=True)
    factories.pair(project, local_text=LOCAL_TEXT, standard_text=STANDARD_TEXT)
    pair = pair_claim_next(project=project, user=annotator)
    assert pair is not None
    pair_screen(pair=pair, user=annotator, decision="annotate")

    log_in(page, "annotator")
    page.goto(f"/projects/{project.slug}/pairs/{pair.pk}/")
    page.locator("#document-qa-link").click()
    page.locator("#start-document-qa").click()
    page.wait_for_load_state("load")
    expect(page.locator("#time-box .time-left")).to_have_text(re.compile(r"^1[45]:\d\d left$"))

    item = QAItem.objects.get(pair=pair, kind="document")
    select_text(page, "五種茶葉")
    page.locator(f"#item-{item.pk} .add-evidence").click()
    fill_item(page, item.pk, "这家茶餐厅的奶茶用几种茶叶？", "五种", "五種")
    wait_saved(page, item.pk)

    span = EvidenceSpan.objects.get(item=item)
    assert (span.document, span.text) == ("local_text", "五種茶葉")
    assert LOCAL_TEXT[span.start : span.end] == "五種茶葉"
    assert span.start is not None and span.start > len(pair.local_lead)  # past the lead: offsets count in the full text


def test_a_coordinator_labels_pair_after_pair_by_keyboard_on_a_phone(page: Page, project, annotator, coordinator):
    """The topic's menu has the focus when a pair opens; topic by its first letter, Tab, region by its first
    letter, Tab, Enter: saved, and the next pair this coordinator has not labelled opens, its topic focused again
    (five keys a pair, no trip back to the list; before the focus, 14 with the Tabs to the menu:
    bench/friction_judging.py). The letters pick options with an Arabic layout active too."""
    from review.models import ArticleLabel
    from tests.browser.test_author_walk import arabic

    first, _ = submitted_pair(project, annotator, local_title="Weißwurscht")
    second, _ = submitted_pair(project, annotator, local_title="الكشري")
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/pairs/{first.pk}/labels/")
    expect(page.locator("#label-form select[name=topic]")).to_be_focused()
    for key in ("F", "Tab", "L", "Tab", "Enter"):
        page.keyboard.press(key)
    expect(page).to_have_url(re.compile(rf"/pairs/{second.pk}/labels/$"))
    expect(page.locator(".messages")).to_contain_text("Labels saved for “Weißwurscht”")
    labels = dict(ArticleLabel.objects.filter(pair=first, labeller=coordinator).values_list("kind", "value"))
    assert labels == {"topic": "food", "region": "local"}
    expect(page.locator("#label-form select[name=topic]")).to_be_focused()
    expect(page.locator("#label-form[data-keys-ready]")).to_be_attached()
    arabic(page, "h")  # an Arabic layout: the menu's own type-to-select would look for "ا"
    expect(page.locator("#label-form select[name=topic]")).to_have_value("history")
    page.keyboard.press("Tab")
    arabic(page, "s")
    expect(page.locator("#label-form select[name=region]")).to_have_value("standard")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("You have labelled every kept pair")
    labels = dict(ArticleLabel.objects.filter(pair=second, labeller=coordinator).values_list("kind", "value"))
    assert labels == {"topic": "history", "region": "standard"}
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_enter_on_a_labels_menu_saves_and_opens_the_next_pair(page: Page, project, annotator, coordinator):
    """The screen says Enter saves: it does from either menu too, not only from the finer region's box (a menu has
    no Enter of its own; before, Enter there did nothing)."""
    from review.models import ArticleLabel

    first, _ = submitted_pair(project, annotator, local_title="Weißwurscht")
    second, _ = submitted_pair(project, annotator, local_title="الكشري")
    log_in(page, "coordinator")
    page.goto(f"/projects/{project.slug}/pairs/{first.pk}/labels/")
    expect(page.locator("#label-form[data-keys-ready]")).to_be_attached()
    expect(page.locator("#label-form select[name=topic]")).to_be_focused()
    for key in ("F", "Tab", "L"):
        page.keyboard.press(key)
    expect(page.locator("#label-form select[name=region]")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/pairs/{second.pk}/labels/$"))
    expect(page.locator(".messages")).to_contain_text("Labels saved for “Weißwurscht”")
    labels = dict(ArticleLabel.objects.filter(pair=first, labeller=coordinator).values_list("kind", "value"))
    assert labels == {"topic": "food", "region": "local"}

    expect(page.locator("#label-form[data-keys-ready]")).to_be_attached()
    for key in ("H", "Tab", "S", "Shift+Tab"):
        page.keyboard.press(key)
    expect(page.locator("#label-form select[name=topic]")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("You have labelled every kept pair")
    labels = dict(ArticleLabel.objects.filter(pair=second, labeller=coordinator).values_list("kind", "value"))
    assert labels == {"topic": "history", "region": "standard"}
