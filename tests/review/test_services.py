"""Review services, called directly: every transition of an item, and the forbidden ones."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import ItemEvent, QAItem, QAItemRevision
from annotation.services.items import qa_item_create, qa_item_update
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_update
from annotation.services.submission import pair_submit
from common.errors import InvalidInput, InvalidState, StaleEdit
from review import decisions as review_decisions
from review import history as review_history
from review import judging as review_judging
from review import queue as review_queue
from review import reviewers as review_reviewers
from review import verification as review_verification
from review.models import Judgment, ReviewSlot, Verification
from tests import factories
from tests.review.conftest import STANDARD_TEXT, all_pass, complete_item, flag, span_of, submitted_pair


def review(project, user, judgments, item=None):
    slot = (
        review_queue.review_claim(item=item, user=user)
        if item
        else review_queue.review_claim_next(project=project, user=user)
    )
    assert slot is not None
    return review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)


# Routing


def test_submitting_a_pair_opens_one_review_slot_per_item_and_records_the_submission(submitted):
    _, items = submitted
    for item in items:
        slots = ReviewSlot.objects.filter(item=item)
        assert [(s.status, s.revision.number) for s in slots] == [("open", 1)]
        assert list(item.events.values_list("action", "to_status")) == [("submitted", "submitted")]


def test_a_project_asking_for_two_reviewers_opens_two_slots(project, annotator, coordinator):
    project_update(project=project, reviewers_per_item=2)
    _, items = submitted_pair(project, annotator)
    assert ReviewSlot.objects.filter(item=items[0]).count() == 2


def test_the_queue_never_hands_an_item_to_its_author(project, annotator, submitted):
    membership_set(project=project, user=annotator, roles={"annotator", "reviewer"})
    assert review_queue.review_claim_next(project=project, user=annotator) is None


def test_only_reviewers_get_items(project, second_annotator, submitted):
    with pytest.raises(InvalidState, match="Only reviewers"):
        review_queue.review_claim_next(project=project, user=second_annotator)


def test_a_reviewer_who_does_not_read_the_standard_language_gets_nothing(project, reviewer, submitted):
    review_reviewers.reviewer_languages_set(project=project, user=reviewer, languages=["yue"])
    with pytest.raises(InvalidState, match="Mandarin"):
        review_queue.review_claim_next(project=project, user=reviewer)
    review_reviewers.reviewer_languages_set(project=project, user=reviewer, languages=["yue", "cmn"], version=1)
    assert review_queue.review_claim_next(project=project, user=reviewer) is not None


def test_reviewer_languages_refuse_unknown_codes_and_stale_versions(project, reviewer):
    with pytest.raises(InvalidInput) as error:
        review_reviewers.reviewer_languages_set(project=project, user=reviewer, languages=["cmn", "xx"])
    assert error.value.field == "languages[1]"
    review_reviewers.reviewer_languages_set(project=project, user=reviewer, languages=["cmn"])
    with pytest.raises(StaleEdit):
        review_reviewers.reviewer_languages_set(project=project, user=reviewer, languages=["deu"], version=7)


def test_the_queue_returns_the_slot_a_reviewer_already_holds(project, reviewer, submitted):
    first = review_queue.review_claim_next(project=project, user=reviewer)
    again = review_queue.review_claim_next(project=project, user=reviewer)
    assert first.pk == again.pk
    assert first.status == "claimed" and first.reviewer_id == reviewer.pk


def test_an_expired_claim_goes_to_the_next_reviewer(project, reviewer, second_reviewer, submitted):
    slot = review_queue.review_claim_next(project=project, user=reviewer)
    ReviewSlot.objects.filter(pk=slot.pk).update(claim_expires_at=timezone.now() - timedelta(minutes=1))
    taken = review_queue.review_claim(item=slot.item, user=second_reviewer)
    assert taken.pk == slot.pk and taken.reviewer_id == second_reviewer.pk
    with pytest.raises(InvalidState, match="no longer yours"):
        review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=all_pass(project))


def test_the_next_reviewer_gets_an_expired_claim_as_it_is_now(project, reviewer, second_reviewer, submitted):
    slot = review_queue.review_claim_next(project=project, user=reviewer)
    ReviewSlot.objects.filter(pk=slot.pk).update(claim_expires_at=timezone.now() - timedelta(minutes=1))

    taken = review_queue.review_claim_next(project=project, user=second_reviewer)

    current = ReviewSlot.objects.get(pk=slot.pk)
    assert taken.pk == slot.pk and not taken.get_deferred_fields()
    assert (taken.reviewer_id, taken.version, taken.claim_expires_at) == (
        second_reviewer.pk,
        current.version,
        current.claim_expires_at,
    )
    assert taken.item.pair.local_lead and taken.revision.number == 1  # loaded with what the API shows


# Judgments and outcomes


def test_all_criteria_passing_accepts_the_item(project, reviewer, submitted):
    slot = review(project, reviewer, all_pass(project))
    item = QAItem.objects.get(pk=slot.item_id)
    assert item.status == "accepted"
    assert Judgment.objects.filter(slot=slot).count() == 3
    assert list(item.events.values_list("action", flat=True)) == ["submitted", "claimed", "reviewed", "accepted"]


def test_a_flag_sends_the_item_back_for_a_rewrite_with_the_comment(project, reviewer, submitted):
    slot = review(project, reviewer, flag(project, "standalone", "Which restaurant? Name it."))
    item = QAItem.objects.get(pk=slot.item_id)
    assert item.status == "needs_rewrite"
    assert [(j.criterion, j.comment) for j in review_history.latest_flags(item)] == [
        ("standalone", "Which restaurant? Name it.")
    ]


def test_with_two_reviewers_the_item_is_decided_when_both_have_judged(
    project, annotator, reviewer, second_reviewer, coordinator
):
    project_update(project=project, reviewers_per_item=2)
    _, items = submitted_pair(project, annotator, evidences=("深水埗", "姓陳"))
    item = items[0]
    review_judging.review_submit(
        slot=(s := review_queue.review_claim(item=item, user=reviewer)), user=reviewer, version=s.version,
        judgments=all_pass(project),
    )  # fmt: skip
    item.refresh_from_db()
    assert item.status == "submitted"
    review_judging.review_submit(
        slot=(s := review_queue.review_claim(item=item, user=second_reviewer)), user=second_reviewer, version=s.version,
        judgments=flag(project, "fluency", "Typo"),
    )  # fmt: skip
    item.refresh_from_db()
    assert item.status == "needs_rewrite"


def test_with_two_reviewers_an_earlier_flag_sends_the_item_back_when_the_second_passes(
    project, annotator, reviewer, second_reviewer, coordinator
):
    project_update(project=project, reviewers_per_item=2)
    _, items = submitted_pair(project, annotator, evidences=("深水埗", "姓陳"))
    item = items[0]
    for user, judgments in ((reviewer, flag(project, "fluency", "Typo")), (second_reviewer, all_pass(project))):
        slot = review_queue.review_claim(item=item, user=user)
        done = review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)
    item.refresh_from_db()
    assert (item.status, done.item.status, done.item.version) == ("needs_rewrite", "needs_rewrite", item.version)
    assert item.events.filter(action="needs_rewrite").count() == 1
    assert not item.events.filter(action="accepted").exists()


def test_judgments_must_cover_every_criterion_with_pass_or_flag(project, reviewer, submitted):
    slot = review_queue.review_claim_next(project=project, user=reviewer)
    judgments = all_pass(project)
    del judgments["appropriateness"]
    judgments["made_up"] = {"verdict": "pass"}
    with pytest.raises(InvalidInput) as error:
        review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=judgments)
    assert set(error.value.details) == {"judgments.made_up", "judgments.appropriateness.verdict"}
    assert not Judgment.objects.exists()


def test_a_reviewer_cannot_review_the_same_revision_twice(project, reviewer, submitted):
    slot = review(project, reviewer, flag(project, "fluency", "Typo"))
    with pytest.raises(InvalidState):
        review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=all_pass(project))
    assert Judgment.objects.filter(slot=slot).count() == 3


def test_self_review_is_refused(project, annotator, submitted):
    membership_set(project=project, user=annotator, roles={"annotator", "reviewer"})
    _, items = submitted
    with pytest.raises(InvalidState, match="You wrote this item"):
        review_queue.review_claim(item=items[0], user=annotator)
    # Even a slot somehow held by the author cannot be filled by them.
    slot = ReviewSlot.objects.filter(item=items[0]).first()
    ReviewSlot.objects.filter(pk=slot.pk).update(status="claimed", reviewer=annotator)
    slot.refresh_from_db()
    with pytest.raises(InvalidState, match="You wrote this item"):
        review_judging.review_submit(slot=slot, user=annotator, version=slot.version, judgments=all_pass(project))


def test_reviewing_a_draft_is_refused(project, annotating_pair, annotator, reviewer):
    item = complete_item(annotating_pair, annotator, "深水埗")
    with pytest.raises(InvalidState, match="draft"):
        review_queue.review_claim(item=item, user=reviewer)
    assert review_queue.review_claim_next(project=project, user=reviewer) is None


def test_accepting_a_rejected_item_is_refused(project, reviewer, coordinator, submitted):
    _, items = submitted
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    review_decisions.qa_item_reject(item=items[0], user=coordinator, reason="Off topic", version=items[0].version)
    with pytest.raises(InvalidState, match="rejected"):
        review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=all_pass(project))
    items[0].refresh_from_db()
    assert items[0].status == "rejected"


def test_rejecting_needs_a_reason_and_the_current_version(project, coordinator, submitted):
    _, items = submitted
    item = items[0]
    with pytest.raises(InvalidInput, match="reason"):
        review_decisions.qa_item_reject(item=item, user=coordinator, reason="  ", version=item.version)
    with pytest.raises(StaleEdit):
        review_decisions.qa_item_reject(item=item, user=coordinator, reason="Duplicate", version=item.version - 1)
    review_decisions.qa_item_reject(item=item, user=coordinator, reason="Duplicate", version=item.version)
    event = item.events.get(action="rejected")
    assert (event.actor, event.note, event.from_status) == (coordinator, "Duplicate", "submitted")
    assert not ReviewSlot.objects.filter(item=item, status="open").exists()
    with pytest.raises(InvalidState, match="rejected"):
        review_decisions.qa_item_reject(item=item, user=coordinator, reason="Again", version=item.version + 1)


# Rewrites and history


def test_author_rewrites_a_flagged_item_and_it_is_reviewed_again(project, annotator, reviewer, submitted):
    slot = review(project, reviewer, flag(project, "standalone", "Name the restaurant."))
    item = QAItem.objects.get(pk=slot.item_id)
    item = qa_item_update(item=item, user=annotator, version=item.version, question="深水埗那家茶餐厅位于哪个区？")
    item = review_decisions.qa_item_resubmit(item=item, user=annotator, version=item.version)
    assert item.status == "submitted"
    revisions = list(item.revisions.order_by("number"))
    assert [(r.number, r.reason) for r in revisions] == [(1, "submitted"), (2, "rewrite")]
    assert revisions[0].question != revisions[1].question  # revision 1 kept as it was
    assert item.pair.status == "submitted"

    second = review(project, reviewer, all_pass(project), item=item)
    assert second.revision.number == 2
    item.refresh_from_db()
    assert item.status == "accepted"

    entries, events = review_history.item_history(item)
    assert [e.revision.number for e in entries] == [1, 2]
    question_diff = entries[1].diffs[0]
    assert question_diff.ops[:2] == [("delete", "关于"), ("equal", "深水埗")]
    assert [r["flagged"] for r in entries[0].reviews] == [True]
    assert [e.action for e in events][-3:] == ["claimed", "reviewed", "accepted"]


def test_an_unchanged_item_cannot_be_resubmitted(project, annotator, reviewer, submitted):
    slot = review(project, reviewer, flag(project, "fluency", "Typo"))
    item = QAItem.objects.get(pk=slot.item_id)
    with pytest.raises(InvalidInput, match="Nothing changed"):
        review_decisions.qa_item_resubmit(item=item, user=annotator, version=item.version)


def test_only_the_author_resubmits_and_only_items_sent_back(project, annotator, second_annotator, submitted):
    _, items = submitted
    with pytest.raises(InvalidState, match="only items sent back"):
        review_decisions.qa_item_resubmit(item=items[0], user=annotator, version=items[0].version)
    with pytest.raises(InvalidState, match="author"):
        review_decisions.qa_item_resubmit(item=items[0], user=second_annotator, version=items[0].version)


def test_a_submitted_item_stays_read_only_for_its_author(project, annotator, submitted):
    _, items = submitted
    with pytest.raises(InvalidState):
        qa_item_update(item=items[0], user=annotator, version=items[0].version, question="x")


def test_a_reviewer_rewrites_directly_when_the_project_allows_it(
    project, annotator, reviewer, second_reviewer, submitted
):
    slot = review(project, reviewer, flag(project, "fluency", "Typo"))
    item = QAItem.objects.get(pk=slot.item_id)
    with pytest.raises(InvalidState, match="sends flagged items back"):
        review_decisions.qa_item_reviewer_rewrite(item=item, user=reviewer, version=item.version, question="新的问题？")
    project.reviewer_may_rewrite = True
    project.save(update_fields=["reviewer_may_rewrite"])
    item.project = project
    item = review_decisions.qa_item_reviewer_rewrite(
        item=item, user=reviewer, version=item.version, question="新的问题？"
    )
    assert item.status == "submitted"
    assert item.revisions.order_by("-number").first().reason == QAItemRevision.Reason.REVIEWER_REWRITE
    # The rewriter does not review their own rewrite; another reviewer does.
    assert review_queue.review_claim_next(project=project, user=reviewer) is not None  # the pair's other item
    other = review_queue.review_claim(item=item, user=second_reviewer)
    assert other.revision.number == 2


def test_text_diff_marks_words_in_latin_script_and_characters_in_han():
    assert review_history.text_diff("Wo liegt das Café?", "Wo liegt das alte Café?") == [
        ("equal", "Wo liegt das "),
        ("insert", "alte "),
        ("equal", "Café?"),
    ]


# Full-document verification


def test_verification_found_stores_the_supporting_sentence_as_code_point_offsets(project, annotator, submitted):
    _, items = submitted
    sentence = span_of("老板姓陈。", STANDARD_TEXT)
    verification = review_verification.verification_record(
        item=items[1], user=annotator, result="found", sentences=[sentence], query="陈", version=0
    )
    assert verification.sentences == [sentence]
    assert STANDARD_TEXT[sentence["start"] : sentence["end"]] == sentence["text"]
    assert items[1].events.filter(action=ItemEvent.Action.VERIFIED).exists()


def test_verification_refuses_offsets_that_do_not_match_the_standard_text(project, annotator, submitted):
    _, items = submitted
    with pytest.raises(InvalidInput) as error:
        review_verification.verification_record(
            item=items[1],
            user=annotator,
            result="found",
            sentences=[{"start": 0, "end": 3, "text": "老板姓"}],
            version=0,
        )
    assert error.value.field == "sentences[0].text"
    assert not Verification.objects.exists()


def test_verification_is_versioned_and_keeps_every_result(project, annotator, coordinator, submitted):
    _, items = submitted
    review_verification.verification_record(item=items[0], user=annotator, result="not_found", version=0)
    with pytest.raises(StaleEdit):
        review_verification.verification_record(item=items[0], user=coordinator, result="not_found", version=0)
    review_verification.verification_record(item=items[0], user=coordinator, result="not_found", version=1)
    assert list(items[0].verifications.values_list("number", flat=True)) == [1, 2]


def test_verification_is_not_possible_without_a_standard_full_text(project, annotator):
    _, items = submitted_pair(project, annotator)
    with pytest.raises(InvalidInput, match="not possible"):
        review_verification.verification_record(item=items[0], user=annotator, result="not_found", version=0)
    recorded = review_verification.verification_record(item=items[0], user=annotator, result="not_possible", version=0)
    assert recorded.result == "not_possible"


def test_the_search_marks_exact_and_close_matches_per_sentence():
    results = review_verification.verification_search(STANDARD_TEXT, "姓陈")
    assert [r.match for r in results] == ["", "exact", ""]
    assert (True, "姓陈") in results[1].pieces
    assert all(STANDARD_TEXT[r.sentence.start : r.sentence.end] == r.sentence.text for r in results)
    close = review_verification.verification_search("Der Wirt heißt Maier. Ruhetag ist Mittwoch.", "heisst Maier")
    assert close[0].match == "close"
    traditional = review_verification.verification_search("這是一家茶餐廳。老闆姓陳。", "老板姓陈")
    assert [r.match for r in traditional] == ["", "exact"]
    assert (True, "老闆姓陳") in traditional[1].pieces  # the page's own characters are highlighted


# Document-level QAs


def test_a_document_qa_takes_evidence_from_the_full_text_but_not_a_lead_items(project, annotator, coordinator):
    from tests.review.conftest import LOCAL_TEXT

    project_update(project=project, collect_document_qa=True)
    factories.pair(project, local_text=LOCAL_TEXT)
    pair = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=pair, user=annotator, decision="annotate")
    complete_item(pair, annotator, "深水埗")
    document = qa_item_create(pair=pair, user=annotator, kind="document")
    with pytest.raises(InvalidInput, match="already used by a lead-section QA"):
        qa_item_update(item=document, user=annotator, version=document.version, spans=[span_of("深水埗", LOCAL_TEXT)])
    saved = qa_item_update(
        item=document, user=annotator, version=document.version, spans=[span_of("五種茶葉", LOCAL_TEXT)]
    )
    assert saved.spans.get().document == "local_text"
    with pytest.raises(InvalidState, match="at most one"):
        qa_item_create(pair=pair, user=annotator, kind="document")
    assert review_history.time_box(saved)["minutes"] == project.document_qa_minutes


def test_a_pair_is_not_submitted_when_a_lead_item_took_the_document_qas_evidence(project, annotator):
    from tests.review.conftest import LOCAL_TEXT

    project_update(project=project, collect_document_qa=True)
    factories.pair(project, local_text=LOCAL_TEXT)
    pair = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=pair, user=annotator, decision="annotate")
    lead_items = [complete_item(pair, annotator, evidence) for evidence in ("深水埗", "姓陳")]
    qa_item_create(
        pair=pair, user=annotator, kind="document", question="问？", answer_standard="答", answer_local="答",
        spans=[span_of("菠蘿油", LOCAL_TEXT)],
    )  # fmt: skip
    lead = lead_items[0]
    qa_item_update(item=lead, user=annotator, version=lead.version, spans=[span_of("菠蘿油")])

    with pytest.raises(InvalidInput) as error:
        pair_submit(pair=pair, user=annotator)
    assert error.value.field == "items[3].spans"
    assert "already used by a lead-section QA" in error.value.message


def test_a_released_review_goes_back_to_the_queue_and_only_its_holder_may_release_it(
    project, reviewer, second_reviewer, submitted
):
    slot = review_queue.review_claim_next(project=project, user=reviewer)
    with pytest.raises(InvalidState, match="not held by you"):
        review_queue.review_release(slot=slot, user=second_reviewer)
    review_queue.review_release(slot=slot, user=reviewer)
    slot.refresh_from_db()
    assert (slot.status, slot.reviewer) == ("open", None)
    assert review_queue.review_claim_next(project=project, user=second_reviewer).pk == slot.pk


def test_a_reviewer_cannot_rewrite_an_item_that_was_not_sent_back(project, reviewer, submitted):
    project.reviewer_may_rewrite = True
    project.save(update_fields=["reviewer_may_rewrite"])
    _, items = submitted
    items[0].project = project
    with pytest.raises(InvalidState, match="in review"):
        review_decisions.qa_item_reviewer_rewrite(
            item=items[0], user=reviewer, version=items[0].version, question="新？"
        )
    items[0].refresh_from_db()
    assert items[0].revisions.count() == 1
