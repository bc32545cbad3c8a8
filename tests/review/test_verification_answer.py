"""A verification belongs to the answer text it checked: a changed answer needs a new check everywhere it counts
(the authoring panel, the submit check, release readiness), the rewrite page has the panel, and the release says
which answer and which search a verification was."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services.items import qa_item_create, qa_item_update
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_update
from annotation.services.submission import pair_submit
from common.errors import InvalidInput
from exports import services as exports
from exports.readiness import release_readiness
from review import judging as review_judging
from review import queue as review_queue
from review import verification as review_verification
from review.models import Verification
from tests import factories
from tests.exports.test_build import lines_of
from tests.review.conftest import STANDARD_TEXT, flag, span_of, submitted_pair

pytestmark = pytest.mark.django_db


def _draft(project, annotator):
    """An annotating pair (with the standard full text) and one draft lead item whose answer is 姓陈."""
    factories.pair(project, standard_text=STANDARD_TEXT)
    pair = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=pair, user=annotator, decision="annotate")
    item = qa_item_create(
        pair=pair,
        user=annotator,
        question="老板姓什么？",
        answer_standard="姓陈",
        answer_local="姓陳",
        spans=[span_of("姓陳", pair.local_lead)],
    )
    return pair, item


def _found(item, user, version=0):
    return review_verification.verification_record(
        item=item,
        user=user,
        result="found",
        sentences=[span_of("老板姓陈。", STANDARD_TEXT)],
        query="姓陈",
        version=version,
    )


def test_a_verification_records_the_answer_text_and_the_search_it_checked(project, annotator):
    _, item = _draft(project, annotator)
    verification = _found(item, annotator)
    verification.refresh_from_db()
    assert (verification.answer, verification.query) == ("姓陈", "姓陈")
    assert verification.is_current_for(item)


def test_a_changed_answer_makes_the_verification_no_longer_current_on_the_authoring_page(client, project, annotator):
    pair, item = _draft(project, annotator)
    _found(item, annotator)
    item = qa_item_update(item=item, user=annotator, version=item.version, answer_standard="姓李")
    client.force_login(annotator)

    page = client.get(reverse("pair_detail", args=[project.slug, pair.pk])).content.decode()

    assert not Verification.objects.get(item=item).is_current_for(item)
    panel = page[page.rindex("<section", 0, page.index(f'id="item-{item.pk}-verify"')) :]  # the panel's own tag
    panel = panel[: panel.index("</section>")]
    assert "is-recorded" not in panel and "is-outdated" in panel
    assert "needs a new check" in panel and "姓陈" in panel  # the answer it checked, named


def test_submit_with_verification_required_refuses_a_verification_of_an_earlier_answer(project, annotator):
    project_update(project=project, lead_qa_min=1, verification_required=True)
    project.refresh_from_db()
    pair, item = _draft(project, annotator)
    _found(item, annotator)
    item = qa_item_update(item=item, user=annotator, version=item.version, answer_standard="姓李")

    with pytest.raises(InvalidInput, match="answer changed"):
        pair_submit(pair=pair, user=annotator)

    review_verification.verification_record(item=item, user=annotator, result="not_found", query="姓李", version=1)
    pair_submit(pair=pair, user=annotator)


def test_readiness_counts_verifications_of_an_earlier_answer(project, annotator, reviewer, coordinator):
    _, items = submitted_pair(project, annotator, standard_text=STANDARD_TEXT)
    for item in items:
        _found(item, annotator)
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    review_judging.review_submit(
        slot=slot, user=reviewer, version=slot.version, judgments=flag(project, "fluency", "x")
    )
    items[0].refresh_from_db()
    qa_item_update(item=items[0], user=annotator, version=items[0].version, answer_standard="在深水埗")

    readiness = release_readiness(project, statuses=["needs_rewrite", "submitted"], splits={}, seed=None)

    unfinished = {check.code: check.count for check in readiness.unfinished}
    assert unfinished.get("items_verification_outdated") == 1
    assert "items_not_verified" not in unfinished


def test_the_release_record_says_which_answer_and_which_search_the_verification_checked(
    project, annotator, coordinator
):
    _, items = submitted_pair(project, annotator, standard_text=STANDARD_TEXT)
    _found(items[1], annotator)

    release = exports.release_build_now(project=project, user=coordinator, item_statuses=["submitted"])

    records = {r["id"]: r for r in lines_of(release, "lead_qa.jsonl")}
    verification = records[f"{project.slug}-q{items[1].pk}"]["verification"]
    assert verification["status"] == "found"
    assert (verification["answer"], verification["query"]) == ("姓陳", "姓陈")  # the saved answer; the search run
    unchecked = records[f"{project.slug}-q{items[0].pk}"]["verification"]
    assert unchecked["status"] == "not_checked" and unchecked["answer"] is None


def test_the_rewrite_page_has_the_verification_panel_and_shows_it_outdated_after_the_answer_changed(
    client, project, annotator, reviewer
):
    _, items = submitted_pair(project, annotator, standard_text=STANDARD_TEXT)
    item = items[1]
    _found(item, annotator)
    slot = review_queue.review_claim(item=item, user=reviewer)
    review_judging.review_submit(
        slot=slot, user=reviewer, version=slot.version, judgments=flag(project, "fluency", "x")
    )
    item.refresh_from_db()
    client.force_login(annotator)
    url = reverse("item_rewrite", args=[project.slug, item.pk])

    page = client.get(url).content.decode()
    assert f'id="item-{item.pk}-verify"' in page and "is-recorded" in page

    qa_item_update(item=item, user=annotator, version=item.version, answer_standard="陈")
    page = client.get(url).content.decode()
    assert "is-outdated" in page and "needs a new check" in page


def test_home_lists_the_items_sent_back_to_their_author_with_links(client, project, annotator, reviewer):
    _, items = submitted_pair(project, annotator, standard_text=STANDARD_TEXT)
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    review_judging.review_submit(
        slot=slot, user=reviewer, version=slot.version, judgments=flag(project, "fluency", "Ein Tippfehler")
    )
    client.force_login(annotator)

    home = client.get(reverse("home")).content.decode()

    section = home[home.index('id="sent-back"') :]
    assert reverse("item_rewrite", args=[project.slug, items[0].pk]) in section
    assert items[0].question in section and "Ein Tippfehler" in section and project.name in section
    assert reverse("item_rewrite", args=[project.slug, items[1].pk]) not in section
    client.force_login(reviewer)
    assert 'id="sent-back"' not in client.get(reverse("home")).content.decode()
