"""A trivia item in Chromium: written by an author, accepted in review, translated with a problem tag,
and resolved by the coordinator with a correction to the source (a new revision)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from annotation.services.members import membership_set
from multichoice.models import TriviaItem
from multichoice.services.items import trivia_item_create
from multichoice.services.projects import trivia_project_create
from tests import factories
from tests.browser.conftest import log_in
from tests.multichoice.conftest import CATEGORIES

pytestmark = pytest.mark.browser


@pytest.fixture
def trivia(coordinator, annotator, second_annotator, reviewer):
    project = trivia_project_create(
        name="Basque trivia",
        slug="basque-trivia",
        source_language="eus",
        target_language="arb",  # translated into Arabic: typed and shown right to left
        categories=CATEGORIES,
        created_by=coordinator,
    )
    membership_set(project=project, user=annotator, roles={"annotator"})
    membership_set(project=project, user=second_annotator, roles={"annotator"})
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    return project


def switch_user(page: Page, username: str) -> None:
    page.context.clear_cookies()
    log_in(page, username)


def test_author_reviewer_translator_and_coordinator_take_an_item_to_the_release(page: Page, trivia):
    log_in(page, "annotator")
    page.goto("/projects/basque-trivia/trivia/")
    page.locator("#trivia-write").click()
    expect(page.locator("input[name=answer]:checked")).to_have_count(0)  # no candidate is correct until marked
    for name in ("category", "subset", "difficulty"):  # each label sits right above its own menu, in one cell
        label, menu = page.locator(f"label[for=id_{name}]").bounding_box(), page.locator(f"#id_{name}").bounding_box()
        assert label and menu and abs(label["x"] - menu["x"]) < 2 and 0 <= menu["y"] - label["y"] < 40, name
    page.get_by_label("Question").fill("Non dago Atxondo?")
    for index, text in enumerate(["Bizkaian", "Gipuzkoan", "Nafarroan"], start=1):
        page.get_by_label(f"Candidate {index}", exact=True).fill(text)
    page.get_by_label("Candidate 1 is correct").check()
    page.get_by_label("Subset").select_option("local")
    page.get_by_label("Difficulty").select_option("easy")
    page.get_by_role("button", name="Send to review").click()
    expect(page.locator(".message.success")).to_contain_text("Item sent to review")
    expect(page.locator("#item-question")).to_have_text("Non dago Atxondo?")

    switch_user(page, "reviewer")
    page.goto("/projects/basque-trivia/trivia/")
    page.locator("#trivia-review-next").click()
    for criterion in trivia.review_criteria:
        page.get_by_label(criterion["label"]).check()
    page.get_by_role("button", name="Save the review").click()
    expect(page.locator(".message.success")).to_contain_text("Accepted")

    switch_user(page, "annotator2")
    page.goto("/projects/basque-trivia/trivia/")
    page.locator("#trivia-translate-next").click()
    translated = page.get_by_label("Translated question")
    expect(translated).to_have_attribute("lang", "arb")
    assert translated.evaluate("node => getComputedStyle(node).direction") == "rtl"
    translated.fill("أين تقع أتشوندو؟")
    for index, text in enumerate(["في بيسكاي", "في غيبوثكوا", "في نافارا"], start=1):
        page.get_by_label(f"Translated candidate {index}").fill(text)
    page.get_by_label("Outdated information").check()
    page.get_by_label("Note").fill("Is the answer still true?")
    page.get_by_role("button", name="Save the translation").click()
    expect(page.locator(".message.success")).to_contain_text("Sent to the coordinator")

    switch_user(page, "coordinator")
    page.goto("/projects/basque-trivia/trivia/problems/")
    expect(page.locator("table")).to_contain_text("Outdated information")  # the tag's display name
    page.get_by_role("link", name="Non dago Atxondo?").click()
    page.get_by_label("Source question").fill("Non dago Atxondo gaur?")
    page.get_by_label("Translated question").fill("أين تقع أتشوندو اليوم؟")
    page.get_by_role("button", name="Fix").click()
    expect(page.locator(".message.success")).to_contain_text("Resolved: fix")

    item = TriviaItem.objects.select_related("item").get()
    assert (item.status, item.translation_status, item.problem_tags) == ("accepted", "done", ["outdated"])
    assert list(item.item.revisions.order_by("number").values_list("number", "reason", "question")) == [
        (1, "submitted", "Non dago Atxondo?"),
        (2, "coordinator_fix", "Non dago Atxondo gaur?"),
    ]
    assert item.target_question == "أين تقع أتشوندو اليوم؟"
    # the review went through the shared review slots: the reviewer's judgments are the review app's
    assert set(item.item.judgments.values_list("reviewer__username", "verdict")) == {("reviewer", "pass")}
    page.goto(f"/projects/basque-trivia/trivia/items/{item.item_id}/")
    expect(page.locator("#trivia-revisions")).to_contain_text("Non dago Atxondo gaur?")
    shown = page.get_by_text("أين تقع أتشوندو اليوم؟")
    assert shown.evaluate("node => getComputedStyle(node).direction") == "rtl"  # the ؟ ends the line on the left
    page.goto("/projects/basque-trivia/trivia/balance/")
    expect(page.locator("#balance")).to_contain_text("Geografia eta Historia")


def test_entities_are_imported_with_visible_normalisation_generated_and_verified(page: Page, coordinator, reviewer):
    from multichoice import entities
    from multichoice.models import EntityQuestion
    from tests.multichoice.test_entities import ATTRIBUTES, CSV

    project = entities.entity_project_create(
        name="Companies", slug="companies", language="eng", attributes=ATTRIBUTES, created_by=coordinator
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    log_in(page, "coordinator")
    page.goto("/projects/companies/entities/")
    page.get_by_label("File").set_input_files({"name": "companies.csv", "mimeType": "text/csv", "buffer": CSV.encode()})
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#job-summary")).to_contain_text("8 entities imported")  # the import job's page
    page.get_by_role("link", name="Entities and questions").click()
    expect(page.locator("#entities")).to_contain_text("1992 (was c. 1992)")
    page.locator("#entity-generate").click()
    # 8 entities x 3 attributes x 2 directions, and a question per key person: Eroski and Repsol have two (+4)
    expect(page.locator("#job-summary")).to_contain_text("52 questions generated")

    switch_user(page, "reviewer")
    page.goto("/projects/companies/entities/")
    page.locator("#entity-verify-next").click()
    page.locator("input[name=swap]").first.check()
    page.get_by_role("button", name="Swap the chosen distractor").click()
    expect(page.locator(".message.success")).to_contain_text("Distractor swapped")
    page.get_by_label("Question (fix the wording if needed)").fill("Where is this company based?")
    page.get_by_role("button", name="Accept and next").click()
    expect(page.locator(".message.success")).to_contain_text("Question verified")

    question = EntityQuestion.objects.select_related("item").get(item__status="accepted")
    assert question.question == "Where is this company based?" and question.edited


def test_a_trivia_import_by_keyboard_leads_to_its_job_page_at_phone_width(page: Page, trivia):
    from tests.multichoice.conftest import FIXTURES

    page.set_viewport_size({"width": 390, "height": 900})
    log_in(page, "coordinator")
    page.goto("/projects/basque-trivia/trivia/import/")
    page.get_by_label("File").set_input_files(str(FIXTURES / "both_correct_examples.csv"))
    page.get_by_label("Subset of the CSV's rows").select_option("local")
    page.get_by_label("Subset of the CSV's rows").focus()
    page.keyboard.press("Tab")  # the "add categories" box
    page.keyboard.press("Tab")  # the Import button
    page.keyboard.press("Enter")

    expect(page).to_have_url(re.compile(r"/trivia/jobs/\d+/$"))
    expect(page.locator("#job-summary")).to_have_text("50 items imported.")
    expect(page.locator("#import-created")).to_have_text("50")
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    page.screenshot(path="/tmp/k/trivia-job.png", full_page=True)
    page.goto("/projects/basque-trivia/trivia/import/")
    expect(page.locator("#jobs")).to_contain_text("both_correct_examples.csv")


def test_back_then_send_again_does_not_duplicate_an_item(page: Page, trivia):
    log_in(page, "annotator")
    page.goto("/projects/basque-trivia/trivia/items/new/")
    page.get_by_label("Question").fill("Non dago Lekeitio?")
    for index, text in enumerate(["Bizkaian", "Gipuzkoan", "Nafarroan"], start=1):
        page.get_by_label(f"Candidate {index}", exact=True).fill(text)
    page.get_by_label("Candidate 1 is correct").check()
    page.get_by_label("Subset").select_option("local")
    page.get_by_label("Difficulty").select_option("easy")
    page.get_by_role("button", name="Send to review").click()
    expect(page.locator(".message.success")).to_contain_text("Item sent to review")

    page.go_back()  # the form comes back with what was typed (fetched again: a fresh page)
    expect(page.get_by_label("Question")).to_have_value("Non dago Lekeitio?")
    page.get_by_role("button", name="Send to review").click()

    expect(page.locator(".message.info")).to_contain_text("You sent this item already")
    assert TriviaItem.objects.filter(item__question="Non dago Lekeitio?").count() == 1


def test_a_trivia_review_is_made_by_keyboard_and_enter_opens_the_next_item(page: Page, trivia, annotator):
    from tests.multichoice.conftest import item_values

    for question in ("Non dago Atxondo?", "Non dago Ea?"):
        trivia_item_create(project=trivia, user=annotator, **item_values(question=question))
    log_in(page, "reviewer")
    page.goto("/projects/basque-trivia/trivia/")
    page.locator("#trivia-review-next").click()
    first = page.url
    expect(page.locator("#trivia-review-form[data-keys-ready]")).to_have_count(1)  # the keys are listened to

    for number in range(1, len(trivia.review_criteria) + 1):
        page.keyboard.press(str(number))
    expect(page.locator("input[name=criteria]:checked")).to_have_count(len(trivia.review_criteria))
    page.keyboard.press("2")  # toggles back
    page.keyboard.press("2")
    page.keyboard.press("Enter")  # save and review the next

    expect(page.locator(".message.success")).to_contain_text("Accepted")
    expect(page.locator("#trivia-review-form[data-keys-ready]")).to_have_count(1)
    assert page.url != first
    assert TriviaItem.objects.filter(item__status="accepted").count() == 1


def test_a_reviewer_accepts_item_after_item_with_one_key_each_with_an_arabic_layout_on_a_phone(
    page: Page, trivia, annotator
):
    """All criteria met (A, an Arabic layout active) saves the review and opens the next item: one key per item.
    Before: one key per criterion, then Enter (5 keys with four criteria; bench/friction_judging.py)."""
    from review.models import Judgment
    from tests.browser.test_author_walk import arabic
    from tests.multichoice.conftest import item_values

    for question in ("Non dago Atxondo?", "Non dago Ea?"):
        trivia_item_create(project=trivia, user=annotator, **item_values(question=question))
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, "reviewer")
    page.goto("/projects/basque-trivia/trivia/")
    page.locator("#trivia-review-next").click()
    form = page.locator("#trivia-review-form[data-keys-ready]")
    expect(form).to_be_attached()
    expect(page.locator("#trivia-all-met")).to_contain_text("All criteria met")
    first = page.url
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    page.locator("h1").click()  # the focus on the page, not in the comment
    arabic(page, "a")
    expect(page.locator(".message.success")).to_contain_text("Accepted")
    expect(form).to_be_attached()  # the next item, ready for its key
    assert page.url != first
    page.locator("h1").click()
    page.keyboard.press("a")
    expect(page.locator(".message.info")).to_contain_text("Nothing is waiting for review")

    assert TriviaItem.objects.filter(item__status="accepted").count() == 2
    verdicts = set(Judgment.objects.filter(reviewer__username="reviewer").values_list("verdict", flat=True))
    assert verdicts == {"pass"}
    assert Judgment.objects.filter(reviewer__username="reviewer").count() == 2 * len(trivia.review_criteria)


def test_a_translator_translates_item_after_item_by_keyboard_on_a_phone(page: Page, trivia, annotator, reviewer):
    """The translation screen opens in the question's box; Tab moves on, Ctrl+Enter saves and opens the next item
    to translate: 4 keys for an item of three candidates, one page load. Before: 27 keys and two page loads per
    item of four candidates (Tab to the box, to each candidate, past the tags to Save; the project page; Translate
    next; bench/friction_judging.py). Candidates are numbered from 1."""
    from multichoice.services.reviews import trivia_review
    from tests.multichoice.conftest import item_values

    met = {c["key"]: True for c in trivia.review_criteria}
    for question in ("Non dago Atxondo?", "Non dago Ea?"):
        item = trivia_item_create(project=trivia, user=annotator, **item_values(question=question))
        trivia_review(item=item, user=reviewer, criteria=met)
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, "annotator2")
    page.goto("/projects/basque-trivia/trivia/")
    page.locator("#trivia-translate-next").click()
    translations = {
        "Non dago Atxondo?": ("أين تقع أتشوندو؟", ["في بيسكاي", "في غيبوثكوا", "في نافارا"]),
        "Non dago Ea?": ("أين تقع إيا؟", ["في بيسكاي", "في غيبوثكوا", "في نافارا"]),
    }
    done = []
    for _ in translations:
        expect(page.locator("#trivia-translate-form[data-keys-ready]")).to_be_attached()
        expect(page.get_by_label("Translated question")).to_be_focused()
        expect(page.get_by_label("Translated candidate 1", exact=True)).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        source = page.locator("h1").inner_text()
        claimed = TriviaItem.objects.select_related("item")
        item = claimed.get(translator__username="annotator2", translation_status="claimed")
        question, candidates = translations[item.item.question]
        keys = 0
        page.keyboard.type(question)
        for text in candidates:
            page.keyboard.press("Tab")
            page.keyboard.type(text)
            keys += 1
        page.keyboard.press("Control+Enter")
        keys += 1
        expect(page.locator(".message.success")).to_contain_text("Translation saved")
        assert keys == 4, source
        done.append(item.pk)
    expect(page.locator(".message.info")).to_contain_text("Nothing is waiting for translation")

    for pk in done:
        item = TriviaItem.objects.select_related("item").get(pk=pk)
        question, candidates = translations[item.item.question]
        assert (item.translation_status, item.target_question, item.target_candidates) == ("done", question, candidates)


def test_a_verifier_swaps_accepts_and_rejects_questions_by_keyboard_with_an_arabic_layout(
    page: Page, coordinator, reviewer
):
    """Entity verification, one key per decision (an Arabic layout active: keys match by physical key): 1 and S
    swap a distractor, A accepts and opens the next question, R opens the reason and Ctrl+Enter there rejects.
    Before: 18 keys and three page loads per question (Tab to Accept, Enter, the project page, Verify next)."""
    from multichoice import entities
    from multichoice.models import EntityQuestion
    from tests.browser.test_author_walk import arabic
    from tests.multichoice.test_entities import ATTRIBUTES, CSV

    project = entities.entity_project_create(
        name="Companies", slug="companies", language="eng", attributes=ATTRIBUTES, created_by=coordinator
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    entities.entities_import(project=project, data=CSV.encode(), name="c.csv")
    entities.questions_generate(project=project)
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, "reviewer")
    page.goto("/projects/companies/entities/")
    page.locator("#entity-verify-next").click()
    form = page.locator("#entity-verify-form[data-keys-ready]")
    expect(form).to_be_attached()
    first = EntityQuestion.objects.get(item_id=int(page.url.rstrip("/").rsplit("/", 1)[1]))
    swapped_out = next(text for index, text in enumerate(first.options) if index != first.answer)

    page.screenshot(path="/tmp/shots-entity/verify-390.png", full_page=True)
    page.locator("h1").click()  # the focus on the page, not in a box
    arabic(page, "1")  # the first distractor
    expect(page.locator("input[name=swap][data-key='1']")).to_be_checked()
    arabic(page, "s")
    expect(page.locator(".message.success")).to_contain_text("Distractor swapped")
    expect(form).to_be_attached()
    page.locator("h1").click()
    page.keyboard.press("a")  # accept: the next question opens
    expect(page.locator(".message.success")).to_contain_text("Question verified")
    expect(page).not_to_have_url(re.compile(rf"/questions/{first.item_id}/$"))
    expect(form).to_be_attached()
    second = EntityQuestion.objects.get(item_id=int(page.url.rstrip("/").rsplit("/", 1)[1]))

    page.locator("h1").click()
    page.keyboard.press("r")  # no reason yet: the reason box takes the focus
    expect(page.locator("#id_reason")).to_be_focused()
    page.keyboard.type("السؤال يكشف الإجابة")
    page.keyboard.press("Control+Enter")
    expect(page.locator(".message.success")).to_contain_text("Question rejected")
    expect(form).to_be_attached()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == "accepted" and swapped_out not in first.options
    assert second.status == "rejected"
    assert second.item.revisions.count() >= 1


def test_a_verifiers_reason_survives_a_sign_out_in_another_tab_and_the_same_question_twice_is_refused_once(
    page: Page, coordinator, reviewer
):
    """Signed out in another tab while writing an Arabic reason: sending it leads to the sign-in page, and after
    signing in the question is back with the reason as typed. The same question open in two tabs: the second
    decision is refused as stale, in words. Back after a decision shows the question as decided."""
    from multichoice import entities
    from multichoice.models import EntityQuestion
    from tests.multichoice.test_entities import ATTRIBUTES, CSV

    project = entities.entity_project_create(
        name="Companies", slug="companies", language="eng", attributes=ATTRIBUTES, created_by=coordinator
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    entities.entities_import(project=project, data=CSV.encode(), name="c.csv")
    entities.questions_generate(project=project)
    log_in(page, "reviewer")
    page.goto("/projects/companies/entities/")
    page.locator("#entity-verify-next").click()
    expect(page.locator("#entity-verify-form[data-keys-ready]")).to_be_attached()
    question_url = page.url
    reason = "السؤال يكشف الإجابة 𨋢"

    other = page.context.new_page()  # the same person signs out in another tab
    other.goto("/projects/companies/entities/")
    other.locator(".topbar .account-menu summary").click()
    other.get_by_role("button", name="Log out").click()
    expect(other.locator(".topbar")).to_contain_text("Log in")

    page.locator("#id_reason").fill(reason)
    page.locator("#id_reason").press("Control+Enter")  # reject: the sign-in page
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.get_by_label("Username").fill("reviewer")
    page.get_by_label("Password").fill(factories.PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(question_url)
    expect(page.locator("#form-restored")).to_contain_text("What you entered before signing in again is back")
    expect(page.locator("#id_reason")).to_have_value(reason)
    item_id = int(question_url.rstrip("/").rsplit("/", 1)[1])
    assert EntityQuestion.objects.get(item_id=item_id).status == "generated"  # nothing was decided signed out

    twin = page.context.new_page()  # the same question in a second tab
    twin.goto(question_url)
    expect(twin.locator("#entity-verify-form[data-keys-ready]")).to_be_attached()
    twin.locator("h1").click()
    twin.keyboard.press("a")
    expect(twin.locator(".message.success")).to_contain_text("Question verified")
    page.locator("#id_reason").press("Control+Enter")  # the first tab's reject, now stale
    expect(page.locator(".message.error")).to_be_visible()
    assert EntityQuestion.objects.get(item_id=item_id).status == "accepted"

    page.goto(question_url)
    expect(page.locator("#question-status")).to_have_text("Verified")
    expect(page.locator("#entity-verify-form")).to_have_count(0)
    twin.go_back()  # Back to the question just decided: shown as decided, no form to send again
    twin.reload()
    expect(twin.locator("#question-status")).to_have_text("Verified")
