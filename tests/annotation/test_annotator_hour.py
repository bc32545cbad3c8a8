"""An annotator's hour over HTTP: what scripts get when signed out, the plain form's refused saves, skipping a
pair, verification required before submitting, the verification panel in the item, and the progress numbers."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import lifecycle
from annotation.models import PagePair, PairSkip, QAItem
from annotation.queries import annotator_progress
from annotation.services.items import qa_item_create, qa_item_update
from annotation.services.pairs import pair_claim_next, pair_give_back, pair_screen
from annotation.services.projects import project_update
from annotation.services.submission import pair_submit
from audit.models import AuditEvent
from common.errors import InvalidInput, InvalidState
from review import verification as review_verification
from review.models import Verification
from tests import factories
from tests.conftest import api_as

LEAD = factories.CANTONESE_LEAD
STANDARD_TEXT = "这是一家位于深水埗的茶餐厅。\n== 制作 ==\n老板姓陈。店铺每逢星期三休息。\n=== 菜单 ===\n菠萝包很有名。"


def span(text: str) -> dict:
    start = LEAD.index(text)
    return {"start": start, "end": start + len(text), "text": text}


def complete_item(pair: PagePair, user, evidence: str, answer: str) -> QAItem:
    return qa_item_create(
        pair=pair,
        user=user,
        question=f"关于{evidence}的问题？",
        answer_standard=answer,
        answer_local=evidence,
        spans=[span(evidence)],
    )


def save_url(item: QAItem) -> str:
    return reverse("item_save", args=[item.project.slug, item.pk])


# Signed out: scripts get 401 JSON, never the sign-in page


@pytest.mark.parametrize(
    "headers",
    [{"HTTP_HX_REQUEST": "true"}, {"HTTP_SEC_FETCH_MODE": "cors"}, {"HTTP_ACCEPT": "application/json"}],
    ids=["htmx", "fetch", "json"],
)
def test_a_script_request_while_signed_out_gets_401_json_not_the_sign_in_page(client, annotating_pair, headers):
    item = QAItem.objects.create(project=annotating_pair.project, pair=annotating_pair, author=annotating_pair.assignee)

    response = client.post(save_url(item), {"version": 1, "question": "没登录时写的？"}, **headers)

    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == "not_authenticated"
    assert response.json()["login_url"] == reverse("login")
    assert response["HX-Reswap"] == "none"
    assert "<form" not in response.content.decode()
    item.refresh_from_db()
    assert item.question == ""


def test_a_page_load_while_signed_out_still_goes_to_the_sign_in_page(client, annotating_pair):
    response = client.get(annotating_pair.get_absolute_url(), HTTP_SEC_FETCH_MODE="navigate")
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_plain_form_posted_while_signed_out_signs_in_back_to_its_page_not_to_a_post_only_address(
    client, annotating_pair, annotator
):
    page = "http://testserver" + annotating_pair.get_absolute_url()
    submit = reverse("pair_submit", args=[annotating_pair.project.slug, annotating_pair.pk])

    response = client.post(submit, HTTP_REFERER=page, HTTP_SEC_FETCH_MODE="navigate")

    assert response.status_code == 302
    login = response["Location"]
    assert login == f"{reverse('login')}?next={annotating_pair.get_absolute_url().replace('/', '%2F')}"
    signed_in = client.post(
        login, {"username": "annotator", "password": factories.PASSWORD, "next": annotating_pair.get_absolute_url()}
    )
    assert signed_in["Location"] == annotating_pair.get_absolute_url()
    assert client.get(signed_in["Location"]).status_code == 200  # not 405


def test_a_referer_on_another_site_is_not_followed_after_signing_in(client, annotating_pair):
    submit = reverse("pair_submit", args=[annotating_pair.project.slug, annotating_pair.pk])
    response = client.post(submit, HTTP_REFERER="https://evil.example/phish")
    assert response["Location"] == f"{reverse('login')}?next=%2F"


def test_the_session_state_says_who_is_signed_in_and_the_token_to_send(client, annotator):
    anonymous = client.get(reverse("session_state")).json()
    assert anonymous["authenticated"] is False
    assert anonymous["csrf_token"]
    client.force_login(annotator)
    signed_in = client.get(reverse("session_state"))
    assert signed_in.json()["authenticated"] is True
    assert signed_in.json()["username"] == "annotator"
    assert signed_in["Cache-Control"] == "no-store"


def test_signing_in_with_the_session_state_as_next_ends_on_json(client, annotator):
    response = client.post(
        reverse("login"),
        {"username": "annotator", "password": factories.PASSWORD, "next": reverse("session_state")},
        follow=True,
    )
    assert response.json()["authenticated"] is True


def test_a_stale_security_token_gets_403_json_for_scripts_and_the_usual_page_otherwise(annotating_pair, annotator):
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    item = complete_item(annotating_pair, annotator, "菠蘿油", "菠萝油")

    scripted = client.post(save_url(item), {"version": item.version}, HTTP_HX_REQUEST="true")
    plain = client.post(save_url(item), {"version": item.version})

    assert scripted.status_code == 403
    assert scripted.json()["code"] == "csrf"
    assert plain.status_code == 403
    assert "CSRF" in plain.content.decode()


# The plain form's refused saves keep what was typed


def test_a_stale_plain_save_shows_the_page_again_with_the_sent_text_beside_the_newer(
    client, annotating_pair, annotator
):
    item = complete_item(annotating_pair, annotator, "菠蘿油", "菠萝油")
    stale = item.version
    qa_item_update(item=item, user=annotator, version=stale, question="较新的问题？")
    client.force_login(annotator)

    response = client.post(
        save_url(item),
        {"version": stale, "question": "旧页面上写的问题？", "answer_standard": "菠萝油", "answer_local": "菠蘿油"},
    )

    body = response.content.decode()
    assert response.status_code == 409
    assert ">旧页面上写的问题？</textarea>" in body  # the losing text stays in the form
    assert '<td class="theirs"' in body and "较新的问题？" in body
    assert f'name="version" id="item-{item.pk}-version" value="{stale}"' in body  # a plain save stays stale
    item.refresh_from_db()
    assert item.question == "较新的问题？"

    kept = client.post(
        save_url(item),
        {"version": stale, "keep_mine_version": item.version, "question": "旧页面上写的问题？"},
    )
    assert kept.status_code == 302
    item.refresh_from_db()
    assert item.question == "旧页面上写的问题？"


def test_an_over_long_field_is_kept_with_a_note_at_the_field_and_nothing_is_cut(client, annotating_pair, annotator):
    item = complete_item(annotating_pair, annotator, "菠蘿油", "菠萝油")
    client.force_login(annotator)
    too_long = "菠" * lifecycle.MAX_TEXT_FIELD + "𠮶"

    plain = client.post(save_url(item), {"version": item.version, "answer_standard": too_long})
    scripted = client.post(
        save_url(item), {"version": item.version, "answer_standard": too_long}, HTTP_HX_REQUEST="true"
    )

    body = plain.content.decode()
    assert f">{too_long}</textarea>" in body  # what was typed stays in its field
    assert "the answer in the standard language is 5001 characters, 1 over the limit of 5000" in body
    assert f'id="item-{item.pk}-answer_standard-note"' in body
    assert not [tag for tag in re.findall(r"<textarea[^>]*>", body) if "maxlength" in tag]  # nor does the browser
    assert 'data-field="answer_standard"' in scripted.content.decode()
    assert "1 over the limit" in scripted.content.decode()
    item.refresh_from_db()
    assert item.answer_standard == "菠萝油"


# Skip / give back


def test_giving_a_pair_back_returns_it_to_the_queue_records_the_reason_and_not_to_the_same_annotator(
    project, annotator, second_annotator
):
    pair = factories.pair(project)
    later = factories.pair(project)
    claimed = pair_claim_next(project=project, user=annotator)
    assert claimed.pk == pair.pk

    skip = pair_give_back(pair=claimed, user=annotator, reason="俚语太多，看不懂")

    pair.refresh_from_db()
    assert (pair.status, pair.assignee_id, pair.claim_expires_at) == ("new", None, None)
    assert (skip.reason, skip.status_before, skip.annotator_id) == ("俚语太多，看不懂", "claimed", annotator.pk)
    event = AuditEvent.objects.get(action="pair.given_back")
    assert event.details["reason"] == "俚语太多，看不懂"
    assert pair_claim_next(project=project, user=annotator).pk == later.pk
    assert pair_claim_next(project=project, user=second_annotator).pk == pair.pk


def test_a_pair_with_items_or_one_already_submitted_is_not_given_back(project, annotating_pair, annotator):
    complete_item(annotating_pair, annotator, "菠蘿油", "菠萝油")
    with pytest.raises(InvalidState, match="has QA items"):
        pair_give_back(pair=annotating_pair, user=annotator)
    assert not PairSkip.objects.exists()
    with pytest.raises(InvalidInput, match="reason"):
        pair_give_back(pair=annotating_pair, user=annotator, reason="x" * 5001)


def test_someone_else_cannot_give_back_your_pair(project, annotator, second_annotator):
    factories.pair(project)
    pair = pair_claim_next(project=project, user=annotator)
    with pytest.raises(InvalidState, match="no longer assigned to you"):
        pair_give_back(pair=pair, user=second_annotator)


def test_giving_back_through_the_page_opens_the_next_pair(client, project, annotator):
    factories.pair(project)
    following = factories.pair(project)
    pair = pair_claim_next(project=project, user=annotator)
    client.force_login(annotator)

    response = client.post(
        reverse("pair_give_back", args=[project.slug, pair.pk]), {"reason": "重复的条目", "then": "next"}
    )

    assert response["Location"] == reverse("pair_detail", args=[project.slug, following.pk])
    assert PairSkip.objects.get(pair=pair).reason == "重复的条目"


def test_giving_back_through_the_api(project, annotator):
    factories.pair(project)
    pair = pair_claim_next(project=project, user=annotator)
    url = f"/api/projects/{project.slug}/pairs/{pair.pk}/give-back/"

    response = api_as(annotator).post(url, {"reason": "标准页是翻译"}, format="json")

    assert response.status_code == 201
    assert response.json()["reason"] == "标准页是翻译"
    assert response.json()["status_before"] == "claimed"
    again = api_as(annotator).post(url, {}, format="json")
    assert again.status_code == 403  # no longer theirs


# Verification in the flow


@pytest.fixture
def verified_pair(project, annotator):
    project_update(project=project, verification_required=True)
    factories.pair(project, standard_text=STANDARD_TEXT)
    pair = pair_claim_next(project=project, user=annotator)
    pair = pair_screen(pair=pair, user=annotator, decision="annotate")
    items = [complete_item(pair, annotator, "姓陳", "姓陈"), complete_item(pair, annotator, "深水埗", "深水埗")]
    return pair, items


def test_a_project_requiring_verification_refuses_to_submit_an_unverified_lead_item(verified_pair, annotator):
    pair, items = verified_pair
    review_verification.verification_record(item=items[0], user=annotator, result="not_found", version=0)

    with pytest.raises(InvalidInput) as refused:
        pair_submit(pair=pair, user=annotator)

    assert refused.value.field == "items[2].verification"
    assert set(refused.value.details) == {"items[2].verification"}
    review_verification.verification_record(item=items[1], user=annotator, result="not_found", version=0)
    assert pair_submit(pair=pair, user=annotator).status == PagePair.Status.SUBMITTED


def test_without_the_setting_an_unverified_pair_is_submitted(annotating_pair, annotator):
    for evidence in ("姓陳", "深水埗"):
        complete_item(annotating_pair, annotator, evidence, evidence)
    assert pair_submit(pair=annotating_pair, user=annotator).status == PagePair.Status.SUBMITTED


def test_wiki_headings_are_not_sentences_to_verify():
    texts = [s.text for s in review_verification.sentences_of(STANDARD_TEXT)]
    assert texts == ["这是一家位于深水埗的茶餐厅。", "老板姓陈。", "店铺每逢星期三休息。", "菠萝包很有名。"]


def test_each_lead_item_has_its_verification_on_the_authoring_page(client, verified_pair, annotator):
    pair, items = verified_pair
    client.force_login(annotator)

    body = client.get(pair.get_absolute_url()).content.decode()

    assert f'id="item-{items[0].pk}-verify"' in body
    assert 'value="姓陈"' in body  # the search is pre-filled from the answer
    assert "老板姓陈。" in body.replace('<mark class="hl c2">姓陈</mark>', "姓陈")
    assert "== 制作 ==" not in body
    assert "店铺每逢星期三休息" not in body  # only the matching sentences
    assert 'id="verification-reminder"' in body and "(2 not yet)" in body


def test_recording_in_the_panel_keeps_and_shows_the_note(client, verified_pair, annotator):
    pair, items = verified_pair
    item = items[0]
    client.force_login(annotator)
    start = STANDARD_TEXT.index("老板姓陈。")
    url = reverse("item_verify", args=[pair.project.slug, item.pk])

    response = client.post(
        url,
        {"panel": "1", "version": 0, "result": "found", "sentence": f"{start}:{start + 5}", "note": "标准页写作陈老板"},
        HTTP_HX_REQUEST="true",
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith(f'<section class="verify-panel is-recorded" id="item-{item.pk}-verify"')
    assert "Found on the standard page" in body
    assert '<p class="verification-note">Note: <span>标准页写作陈老板</span></p>' in body
    assert ">标准页写作陈老板</textarea>" in body  # kept for the next recording
    recorded = Verification.objects.get(item=item)
    assert recorded.sentences == [{"start": start, "end": start + 5, "text": "老板姓陈。"}]
    assert recorded.note == "标准页写作陈老板"

    stale = client.post(
        url, {"panel": "1", "version": 0, "result": "not_found", "note": "另一条"}, HTTP_HX_REQUEST="true"
    )
    assert stale.status_code == 409
    assert ">另一条</textarea>" in stale.content.decode()  # a refused note is not lost

    plain = client.post(url, {"panel": "1", "version": 1, "result": "not_found"})
    assert plain["Location"] == f"{pair.get_absolute_url()}#item-{item.pk}-verify"


def test_the_panel_search_lists_only_matching_sentences(client, verified_pair, annotator):
    pair, items = verified_pair
    client.force_login(annotator)
    url = reverse("item_verify", args=[pair.project.slug, items[0].pk])

    body = client.get(url, {"panel": "1", "q": "星期三"}, HTTP_HX_REQUEST="true").content.decode()

    assert body.lstrip().startswith(f'<div id="item-{items[0].pk}-verify-results"')
    assert body.count('<li class="sentence') == 1
    assert "1 sentence of the standard article matches" in body


def test_the_document_qa_is_offered_only_with_full_text_and_reminded_before_submitting(client, project, annotator):
    project_update(project=project, collect_document_qa=True)
    without = factories.pair(project)
    with_text = factories.pair(project, local_text=LEAD + "\n\n== 歷史 ==\n早年係大牌檔。")
    client.force_login(annotator)
    for pair in (without, with_text):
        claimed = pair_claim_next(project=project, user=annotator)
        pair_screen(pair=claimed, user=annotator, decision="annotate")
        assert claimed.pk == pair.pk
        body = client.get(pair.get_absolute_url()).content.decode()
        assert ('id="document-qa-link"' in body) is (pair is with_text)
        assert ('id="document-qa-reminder"' in body) is (pair is with_text)
        if pair is without:
            for evidence in ("姓陳", "深水埗"):
                complete_item(claimed, annotator, evidence, evidence)
            pair_submit(pair=claimed, user=annotator)


# Progress


def test_progress_counts_pairs_and_items_today_and_this_session_and_what_is_left(project, annotator):
    factories.pair(project)
    factories.pair(project)
    factories.pair(project)
    done = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=done, user=annotator, decision="annotate")
    items = [complete_item(done, annotator, evidence, evidence) for evidence in ("姓陳", "深水埗")]
    QAItem.objects.filter(pk=items[0].pk).update(active_seconds=240)
    QAItem.objects.filter(pk=items[1].pk).update(active_seconds=480)
    pair_submit(pair=done, user=annotator)
    excluded = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=excluded, user=annotator, decision="translated")

    now = annotator_progress(project=project, user=annotator, session_started=timezone.now() - timedelta(minutes=5))
    later = annotator_progress(project=project, user=annotator, session_started=timezone.now())

    assert (now.pairs_today, now.items_today, now.pairs_session, now.items_session) == (2, 2, 2, 2)
    assert (later.pairs_session, later.items_session) == (0, 0)
    assert now.median_item_minutes == 6.0
    assert now.pairs_left == 1


def test_the_authoring_page_shows_progress_in_a_bounded_number_of_queries(
    client, annotating_pair, annotator, django_assert_max_num_queries
):
    for evidence in ("姓陳", "深水埗", "菠蘿油"):
        complete_item(annotating_pair, annotator, evidence, evidence)
    client.force_login(annotator)
    with django_assert_max_num_queries(30):
        body = client.get(annotating_pair.get_absolute_url()).content.decode()
    assert 'id="progress"' in body
    assert 'id="progress-left">0<' in body
