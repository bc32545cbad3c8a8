"""The annotator's and coordinator's pages over HTTP: flows, errors, query counts."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation.models import PagePair, QAItem
from annotation.services.items import qa_item_create, qa_item_delete, qa_item_restore, qa_item_update
from annotation.services.pairs import MAX_ACTIVITY_SECONDS
from annotation.services.projects import project_update
from tests import factories

LEAD = factories.CANTONESE_LEAD


def span(text: str) -> dict:
    start = LEAD.index(text)
    return {"start": start, "end": start + len(text), "text": text}


def add_item(pair, user, question="这家茶餐厅的招牌菜是什么？", evidence="菠蘿油") -> QAItem:
    return qa_item_create(
        pair=pair,
        user=user,
        question=question,
        answer_standard="菠萝油",
        answer_local="菠蘿油",
        spans=[span(evidence)],
    )


def test_next_pair_then_screening_opens_the_authoring_screen(client, project, annotator):
    factories.pair(project)
    client.force_login(annotator)

    response = client.post(reverse("queue_next", args=[project.slug]))
    pair = PagePair.objects.get(assignee=annotator)
    assert response["Location"] == reverse("pair_detail", args=[project.slug, pair.pk])
    page = client.get(response["Location"]).content.decode()
    assert "Screen this pair" in page
    assert 'id="local-lead-text"' in page

    client.post(reverse("pair_screen", args=[project.slug, pair.pk]), {"decision": "annotate"})
    page = client.get(reverse("pair_detail", args=[project.slug, pair.pk])).content.decode()
    assert 'id="add-item"' in page
    pair.refresh_from_db()
    assert pair.status == PagePair.Status.ANNOTATING


def test_excluding_a_pair_records_the_reason_and_moves_to_the_next(client, project, annotator):
    factories.pair(project)
    factories.pair(project)
    client.force_login(annotator)
    client.post(reverse("queue_next", args=[project.slug]))
    first = PagePair.objects.get(assignee=annotator)

    response = client.post(
        reverse("pair_screen", args=[project.slug, first.pk]), {"decision": "other", "note": "Only a list of links."}
    )

    first.refresh_from_db()
    assert first.status == PagePair.Status.EXCLUDED
    assert first.screenings.get().note == "Only a list of links."
    assert response.status_code == 302
    assert response["Location"] != reverse("pair_detail", args=[project.slug, first.pk])
    assert PagePair.objects.filter(assignee=annotator, status=PagePair.Status.CLAIMED).count() == 1


def test_excluding_for_another_reason_without_a_note_is_refused_and_changes_nothing(client, project, annotator):
    factories.pair(project)
    client.force_login(annotator)
    client.post(reverse("queue_next", args=[project.slug]))
    pair = PagePair.objects.get(assignee=annotator)

    response = client.post(reverse("pair_screen", args=[project.slug, pair.pk]), {"decision": "other"}, follow=True)

    assert "needs a note" in response.content.decode()
    pair.refresh_from_db()
    assert pair.status == PagePair.Status.CLAIMED
    assert not pair.screenings.exists()


def test_autosave_answers_with_the_new_version_and_warnings(client, annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    client.force_login(annotator)

    response = client.post(
        reverse("item_save", args=[annotating_pair.project.slug, item.pk]),
        {"version": item.version, "question": "这家店哪一年开业？", "spans": json.dumps([span("深水埗")])},
        HTTP_HX_REQUEST="true",
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert "Saved · version 2" in body
    assert f'id="item-{item.pk}-version" value="2" hx-swap-oob="true"' in body
    assert 'data-code="asks_for_date"' in body
    assert 'data-code="evidence_in_standard"' in body  # 深水埗 is in the Mandarin lead too
    item.refresh_from_db()
    assert item.question == "这家店哪一年开业？"
    assert item.spans.get().text == "深水埗"


def test_a_stale_autosave_answers_409_showing_the_newer_text_and_keeps_it(client, annotating_pair, annotator):
    item = add_item(annotating_pair, annotator, question="较新的问题？")
    client.force_login(annotator)

    response = client.post(
        reverse("item_save", args=[annotating_pair.project.slug, item.pk]),
        {"version": 1, "question": "旧副本的问题？"},
        HTTP_HX_REQUEST="true",
    )

    body = response.content.decode()
    assert response.status_code == 409
    assert "较新的问题？" in body
    assert '<td class="mine" data-field="question"' in body and "旧副本的问题？" in body  # both, side by side
    assert f'name="keep_mine_version" value="{item.version}"' in body
    assert "Load the newer version" in body
    item.refresh_from_db()
    assert item.question == "较新的问题？"


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ([{"start": 0, "end": 999, "text": "x"}], "past the end"),
        ([{"start": 1, "end": 3, "text": "茶餐"}], "does not match"),
        ("not json", "not valid JSON"),
    ],
)
def test_bad_spans_are_refused_with_a_message_and_nothing_is_written(
    client, annotating_pair, annotator, spans, message
):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    client.force_login(annotator)
    raw = spans if isinstance(spans, str) else json.dumps(spans)

    response = client.post(
        reverse("item_save", args=[annotating_pair.project.slug, item.pk]),
        {"version": item.version, "question": "问题？", "spans": raw},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 400
    assert message in response.content.decode()
    item.refresh_from_db()
    assert item.question == ""
    assert item.version == 1


def test_submit_names_what_is_missing_and_keeps_the_pair_open(client, annotating_pair, annotator):
    add_item(annotating_pair, annotator)
    qa_item_create(pair=annotating_pair, user=annotator)  # an empty second item
    client.force_login(annotator)

    response = client.post(reverse("pair_submit", args=[annotating_pair.project.slug, annotating_pair.pk]), follow=True)

    body = response.content.decode()
    assert response.status_code == 400
    second = annotating_pair.items.order_by("id").last()
    assert f'id="item-{second.pk}-question-note" role="status">The question is empty.</p>' in body  # at its field
    annotating_pair.refresh_from_db()
    assert annotating_pair.status == PagePair.Status.ANNOTATING


def test_submitting_enough_complete_items_sends_them_to_review(client, annotating_pair, annotator):
    add_item(annotating_pair, annotator)
    add_item(annotating_pair, annotator, question="老板姓什么？", evidence="姓陳")
    client.force_login(annotator)

    client.post(reverse("pair_submit", args=[annotating_pair.project.slug, annotating_pair.pk]))

    annotating_pair.refresh_from_db()
    assert annotating_pair.status == PagePair.Status.SUBMITTED
    assert set(annotating_pair.items.values_list("status", flat=True)) == {QAItem.Status.SUBMITTED}


def test_user_text_is_escaped_on_the_authoring_screen(client, annotating_pair, annotator):
    add_item(annotating_pair, annotator, question='<script>alert("x")</script><img src=x onerror=alert(1)>')
    client.force_login(annotator)

    body = client.get(reverse("pair_detail", args=[annotating_pair.project.slug, annotating_pair.pk])).content.decode()

    assert "<script>alert" not in body
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in body
    assert "<img src=x" not in body


def test_guidelines_markdown_is_rendered_and_sanitised(client, project, annotator):
    project_update(
        project=project, guidelines="**Bold** [x](javascript:alert(1)) <script>alert(2)</script> <b onclick=x>b</b>"
    )
    client.force_login(annotator)

    body = client.get(reverse("project_guidelines", args=[project.slug])).content.decode()

    assert "<strong>Bold</strong>" in body
    assert "javascript:" not in body
    assert "<script>alert(2)" not in body
    assert "onclick" not in body


def test_activity_heartbeats_add_active_seconds_capped_per_beat(client, annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    client.force_login(annotator)
    url = reverse("pair_activity", args=[annotating_pair.project.slug, annotating_pair.pk])

    client.post(url, {"seconds": "20", "item": item.pk})
    client.post(url, {"seconds": "100000"})  # a laptop waking up: counted as one capped beat

    annotating_pair.refresh_from_db()
    item.refresh_from_db()
    assert item.active_seconds == 20
    assert annotating_pair.active_seconds == 20 + MAX_ACTIVITY_SECONDS
    assert client.post(url, {"seconds": "-5"}).status_code == 400


def test_coordinator_creates_a_project_and_unknown_language_codes_are_refused(client, coordinator):
    from django.contrib.auth.models import Permission

    coordinator.user_permissions.add(Permission.objects.get(codename="add_project"))
    client.force_login(coordinator)
    form = {
        "name": "Wu and Mandarin",
        "slug": "wuu-cmn",
        "local_language": "wuu",
        "standard_language": "cmn",
        "lead_qa_min": 2,
        "lead_qa_max": 3,
        "reviewers_per_item": 1,
        "claim_minutes": 30,
    }

    refused = client.post(reverse("project_create"), {**form, "local_language": "xxx"})
    created = client.post(reverse("project_create"), form)

    assert refused.status_code == 200
    assert "Select a valid choice" in refused.content.decode()
    assert created.status_code == 302
    project = coordinator.memberships.get(project__slug="wuu-cmn").project
    assert (project.local_wiki, project.standard_wiki) == ("wuu", "zh")


def test_coordinator_adds_a_member_with_roles(client, project, coordinator, outsider):
    client.force_login(coordinator)

    client.post(reverse("project_members", args=[project.slug]), {"username": "outsider", "roles": ["reviewer"]})

    assert project.memberships.get(user=outsider).roles == ["reviewer"]


# Query counts: constant however much data there is.


def test_queue_page_query_count_does_not_grow_with_pairs(client, project, annotator, django_assert_max_num_queries):
    for _ in range(30):
        factories.pair(project, assignee=annotator, status=PagePair.Status.EXCLUDED)
    client.force_login(annotator)

    with django_assert_max_num_queries(8):
        response = client.get(reverse("project_detail", args=[project.slug]))
    assert response.status_code == 200


def test_next_pair_query_count_is_small(client, project, annotator, django_assert_max_num_queries):
    for _ in range(50):
        factories.pair(project)
    client.force_login(annotator)

    with django_assert_max_num_queries(11):  # the claim looks up new pairs and expired claims separately (indexed)
        response = client.post(reverse("queue_next", args=[project.slug]))
    assert response.status_code == 302


def test_authoring_page_query_count_does_not_grow_with_items(
    client, annotating_pair, annotator, django_assert_max_num_queries
):
    for evidence in ("菠蘿油", "姓陳", "深水埗"):
        add_item(annotating_pair, annotator, question=f"关于{evidence}的问题？", evidence=evidence)
    client.force_login(annotator)

    # Session and user; the pair; its items; their spans; their verifications; the project's latest questions for
    # the near-duplicate advice; the progress strip's counts and its median; the screenings; the session saved (its
    # first page sets when the session began: three statements in a test's transaction); the items' local-knowledge
    # checks.
    with django_assert_max_num_queries(14):
        response = client.get(reverse("pair_detail", args=[annotating_pair.project.slug, annotating_pair.pk]))
    assert response.status_code == 200


def test_the_authoring_page_warns_of_near_duplicate_questions_once_per_item(client, annotating_pair, annotator):
    first = add_item(annotating_pair, annotator, question="这家茶餐厅的招牌菜是什么？", evidence="菠蘿油")
    add_item(annotating_pair, annotator, question="这家茶餐厅的招牌菜是什么", evidence="姓陳")
    add_item(annotating_pair, annotator, question="老板姓什么？", evidence="深水埗")
    client.force_login(annotator)

    page = client.get(reverse("pair_detail", args=[annotating_pair.project.slug, annotating_pair.pk])).content.decode()

    # Each of the two near-duplicates names the other; the third question has none (the questions are read once).
    assert page.count("Nearly the same question exists in this project") == 2
    assert f"“{first.question}”" in page and "“这家茶餐厅的招牌菜是什么”" in page


def test_the_near_duplicate_advice_follows_questions_written_deleted_and_restored_since_the_last_page(
    client, annotating_pair, annotator, coordinator
):
    url = reverse("pair_detail", args=[annotating_pair.project.slug, annotating_pair.pk])
    first = add_item(annotating_pair, annotator, question="老板姓什么？", evidence="姓陳")
    client.force_login(annotator)
    assert "Nearly the same question" not in client.get(url).content.decode()  # the questions are known now

    second = add_item(annotating_pair, annotator, question="这家店在哪里？", evidence="深水埗")
    qa_item_update(item=second, user=annotator, version=second.version, question="老板姓什么")
    assert client.get(url).content.decode().count("Nearly the same question exists in this project") == 2

    qa_item_delete(item=QAItem.objects.get(pk=first.pk), user=annotator)
    assert "Nearly the same question" not in client.get(url).content.decode()
    qa_item_restore(item=QAItem.objects.get(pk=first.pk), user=coordinator)
    assert client.get(url).content.decode().count("Nearly the same question exists in this project") == 2


def test_the_near_duplicate_advice_names_the_first_of_equally_near_questions(annotating_pair, annotator):
    from annotation.warnings import near_duplicate, project_questions

    items = [add_item(annotating_pair, annotator, question=q) for q in ("老板姓什么？", "老板姓什么!", "老板姓什么")]
    others = [item.question for item in items[1:]]
    found = project_questions(annotating_pair.project).near_duplicate(items[0].question, leave_out=items[0].pk)
    assert found == near_duplicate(items[0].question, others) == "老板姓什么!"


def test_the_near_duplicate_advice_compares_with_the_latest_questions_of_the_project(
    annotating_pair, annotator, monkeypatch
):
    from annotation import warnings

    oldest = add_item(annotating_pair, annotator, question="老板姓什么？")
    add_item(annotating_pair, annotator, question="这家店在哪里？")
    add_item(annotating_pair, annotator, question="哪天休息？")
    monkeypatch.setattr(warnings, "NEAR_DUPLICATE_LIMIT", 2)

    questions = warnings.project_questions(annotating_pair.project)

    assert list(questions.original.values()) == ["这家店在哪里？", "哪天休息？"]  # the two latest, oldest first
    assert questions.near_duplicate(oldest.question, leave_out=None) is None


def test_coordinator_pair_list_query_count_does_not_grow(client, project, coordinator, django_assert_max_num_queries):
    for _ in range(40):
        factories.pair(project)
    client.force_login(coordinator)

    with django_assert_max_num_queries(7):
        response = client.get(reverse("pair_list", args=[project.slug]))
    assert response.status_code == 200


def test_coordinator_item_list_shows_items_and_filters_by_status(
    client, annotating_pair, annotator, coordinator, django_assert_max_num_queries
):
    for evidence in ("菠蘿油", "姓陳", "深水埗"):
        add_item(annotating_pair, annotator, question=f"关于{evidence}的问题？", evidence=evidence)
    client.force_login(coordinator)
    url = reverse("item_list", args=[annotating_pair.project.slug])

    with django_assert_max_num_queries(7):
        page = client.get(url).content.decode()
    submitted = client.get(url, {"status": "submitted"}).content.decode()

    assert "关于姓陳的问题？" in page
    assert "关于姓陳的问题？" not in submitted


def test_the_item_list_finds_by_text_author_and_kind_and_pages_keep_the_filter(
    client, annotating_pair, annotator, coordinator
):
    for evidence in ("菠蘿油", "姓陳", "深水埗"):
        add_item(annotating_pair, annotator, question=f"关于{evidence}的问题？", evidence=evidence)
    client.force_login(coordinator)
    url = reverse("item_list", args=[annotating_pair.project.slug])

    found = client.get(url, {"text": "深水埗", "author": "annotator", "kind": "lead"})
    html = found.content.decode()
    assert "关于深水埗的问题？" in html and "关于姓陳的问题？" not in html
    assert found.context["page"].paginator.count == 1
    assert client.get(url, {"author": "reviewer"}).context["page"].paginator.count == 0
    assert client.get(url, {"kind": "document"}).context["page"].paginator.count == 0
    assert client.get(url, {"status": "no-such-status"}).context["page"].paginator.count == 3  # ignored

    paged = client.get(url, {"text": "问题", "page": 1})
    assert paged.context["filter"].as_query() == "text=%E9%97%AE%E9%A2%98"  # what the pager's links carry


def test_the_pair_list_finds_by_either_title_status_and_annotator_and_shows_decisions_in_words(
    client, project, annotator, coordinator
):
    factories.pair(project, local_title="𨋢 喺香港", standard_title="香港电梯", assignee=annotator)
    factories.pair(
        project,
        local_title="深水埗",
        standard_title="深水埗区",
        assignee=annotator,
        status=PagePair.Status.EXCLUDED,
        screening_decision="structural",
    )
    factories.pair(project, local_title="Weißwuascht", standard_title="Weißwurst")
    client.force_login(coordinator)
    url = reverse("pair_list", args=[project.slug])

    def count(**query) -> int:
        return client.get(url, query).context["page"].paginator.count

    assert count(text="𨋢") == 1  # a character outside the BMP, in the local title
    assert count(text="电梯") == 1  # in the standard title
    assert count(text="weißwurst") == 1  # case folded
    assert count(annotator="annotator") == 2 and count(annotator="reviewer") == 0
    assert count(status="excluded", annotator="annotator") == 1
    assert count(status="no-such-status") == 3  # ignored, not an error
    page = client.get(url, {"status": "excluded"}).content.decode()
    assert "Structural mismatch" in page and "· structural" not in page
    paged = client.get(url, {"text": "深水埗", "page": 1})
    assert paged.context["filter"].as_query() == "text=%E6%B7%B1%E6%B0%B4%E5%9F%97"  # what the pager's links carry


def test_the_pair_and_item_lists_filter_by_the_pairs_final_topic(client, annotating_pair, annotator, coordinator):
    """The topic a pair is released with (its final label, agreed or adjudicated): a pair without one, or with
    another topic, is left out; a region label of the same value is not a topic."""
    from review.models import FinalLabel

    project = annotating_pair.project
    add_item(annotating_pair, annotator, question="菠蘿油係乜嘢？", evidence="菠蘿油")
    other = factories.pair(project, local_title="深水埗", standard_title="深水埗区", assignee=annotator)
    unlabelled = factories.pair(project, local_title="𨋢", standard_title="电梯")
    FinalLabel.objects.create(project=project, pair=annotating_pair, kind="topic", value="food", method="agreement")
    FinalLabel.objects.create(project=project, pair=other, kind="topic", value="geography", method="adjudicated")
    FinalLabel.objects.create(project=project, pair=unlabelled, kind="region", value="food", method="agreement")
    # (the last is a region label: not a topic)
    client.force_login(coordinator)

    pairs = client.get(reverse("pair_list", args=[project.slug]), {"topic": "food"})
    items = client.get(reverse("item_list", args=[project.slug]), {"topic": "food"})

    assert [pair.pk for pair in pairs.context["page"].object_list] == [annotating_pair.pk]
    assert items.context["page"].paginator.count == 1
    assert (
        client.get(reverse("item_list", args=[project.slug]), {"topic": "geography"}).context["page"].paginator.count
        == 0
    )
    for page in (pairs, items):
        html = page.content.decode()
        assert '<option value="food" selected>Food</option>' in html
        assert page.context["filter"].as_query() == "topic=food"


def test_superuser_sees_the_admin_for_every_annotation_model(client, superuser, annotating_pair, annotator):
    add_item(annotating_pair, annotator)
    client.force_login(superuser)
    for model in ("project", "pagepair", "qaitem", "screening"):
        assert client.get(f"/admin/annotation/{model}/").status_code == 200
    item = QAItem.objects.get()
    assert client.get(f"/admin/annotation/qaitem/{item.pk}/change/").status_code == 200
