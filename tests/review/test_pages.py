"""Review pages through HTTP: what each reader sees, escaping, the time box, hidden labels."""

from __future__ import annotations

from django.urls import reverse

from annotation.services.items import qa_item_create, qa_item_update
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_update
from annotation.services.submission import pair_submit
from review import decisions as review_decisions
from review import judging as review_judging
from review import labels as review_labels
from review import queue as review_queue
from review import verification as review_verification
from tests import factories
from tests.review.conftest import LOCAL_TEXT, all_pass, complete_item, flag, span_of, submitted_pair


def test_the_author_sees_flags_without_the_reviewers_name_under_blind_review(
    client, project, annotator, reviewer, submitted
):
    _, items = submitted
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    review_judging.review_submit(
        slot=slot, user=reviewer, version=slot.version, judgments=flag(project, "fluency", "Typo")
    )
    client.force_login(annotator)

    history = client.get(reverse("item_history", args=[project.slug, items[0].pk])).content.decode()
    rewrite = client.get(reverse("item_rewrite", args=[project.slug, items[0].pk])).content.decode()

    assert "Typo" in history and "Typo" in rewrite
    assert "by reviewer" not in history and "(reviewer)" not in rewrite
    project.blind_review = False
    project.save(update_fields=["blind_review"])
    assert (
        "Review by reviewer" in client.get(reverse("item_history", args=[project.slug, items[0].pk])).content.decode()
    )


def test_user_text_in_the_diff_is_escaped(client, project, annotator, reviewer, coordinator, submitted):
    _, items = submitted
    item = items[0]
    slot = review_queue.review_claim(item=item, user=reviewer)
    review_judging.review_submit(
        slot=slot, user=reviewer, version=slot.version, judgments=flag(project, "fluency", "x")
    )
    item.refresh_from_db()
    item = qa_item_update(item=item, user=annotator, version=item.version, question='<img src=x onerror="1">？')
    review_decisions.qa_item_resubmit(item=item, user=annotator, version=item.version)
    client.force_login(coordinator)

    page = client.get(reverse("item_history", args=[project.slug, item.pk])).content.decode()

    assert "<img src=x" not in page
    assert "&lt;img" in page


def test_a_coordinator_rejects_with_a_reason_from_the_history_page(client, project, coordinator, submitted):
    _, items = submitted
    client.force_login(coordinator)
    url = reverse("item_reject", args=[project.slug, items[0].pk])
    client.post(url, {"reason": "Not local knowledge", "version": items[0].version})
    items[0].refresh_from_db()
    assert items[0].status == "rejected"
    page = client.get(reverse("item_history", args=[project.slug, items[0].pk])).content.decode()
    assert "Not local knowledge" in page and "Rejected" in page


def test_the_document_qa_page_shows_the_local_full_text_and_the_time_box(client, project, annotator):
    project_update(project=project, collect_document_qa=True)
    factories.pair(project, local_text=LOCAL_TEXT)
    pair = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=pair, user=annotator, decision="annotate")
    client.force_login(annotator)
    url = reverse("document_qa", args=[project.slug, pair.pk])

    assert 'id="start-document-qa"' in client.get(url).content.decode()
    client.post(url)
    page = client.get(url).content.decode()

    assert 'id="time-box"' in page and "15 minutes" in page
    assert "五種茶葉" in page  # the full text, not only the lead
    assert pair.items.get().kind == "document"
    assert 'id="document-qa-link"' in client.get(reverse("pair_detail", args=[project.slug, pair.pk])).content.decode()


def test_verification_page_says_why_it_is_not_possible(client, project, annotator):
    _, items = submitted_pair(project, annotator)
    client.force_login(annotator)
    page = client.get(reverse("item_verify", args=[project.slug, items[0].pk])).content.decode()
    assert "Verification is not possible" in page and "without the standard page" in page


def test_a_labeller_does_not_see_the_other_labellers_choice_until_both_are_done(
    client, project, coordinator, submitted
):
    pair, _ = submitted
    other = factories.user("coordinator2")
    membership_set(project=project, user=other, roles={"coordinator"})
    review_labels.label_set(pair=pair, user=other, kind="topic", value="sport")
    review_labels.label_set(pair=pair, user=other, kind="region", value="standard")
    client.force_login(coordinator)
    url = reverse("pair_labels", args=[project.slug, pair.pk])

    assert "Sport" not in client.get(url).content.decode().split('id="other-labels"')[1]
    response = client.post(url, {"topic": "food", "region": "local", "region_detail": "Hong Kong",
                                 "topic_version": "0", "region_version": "0"})  # fmt: skip
    assert response.status_code == 302
    others = client.get(url).content.decode().split('id="other-labels"')[1]
    assert "Sport" in others and "Hong Kong" in others


def test_save_and_next_opens_the_next_pair_this_labeller_has_not_labelled(client, project, coordinator, annotator):
    first, _ = submitted_pair(project, annotator)
    done, _ = submitted_pair(project, annotator, local_title="灣仔")
    last, _ = submitted_pair(project, annotator, local_title="旺角")
    for kind, value in (("topic", "food"), ("region", "local")):
        review_labels.label_set(pair=done, user=coordinator, kind=kind, value=value)
    client.force_login(coordinator)
    form = {"topic": "food", "region": "local", "topic_version": "0", "region_version": "0", "then": "next"}

    to_last = client.post(reverse("pair_labels", args=[project.slug, first.pk]), form)
    assert to_last["Location"] == reverse("pair_labels", args=[project.slug, last.pk])  # the labelled one skipped
    to_list = client.post(reverse("pair_labels", args=[project.slug, last.pk]), form)
    assert to_list["Location"] == reverse("label_list", args=[project.slug])  # nothing left
    assert "every kept pair" in client.get(to_list["Location"]).content.decode()


def test_the_dashboard_shows_true_counts_and_bars(client, project, annotator, reviewer, coordinator, submitted):
    pair, items = submitted
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=all_pass(project))
    review_labels.label_set(pair=pair, user=coordinator, kind="topic", value="food")
    client.force_login(coordinator)

    page = client.get(reverse("dashboard", args=[project.slug])).content.decode()

    assert '<dd data-stat="accepted">1</dd>' in page
    assert '<dd data-stat="submitted">1</dd>' in page
    assert '<dd data-stat="lead">2</dd>' in page
    assert "<svg" in page and "style=" not in page.split("<main")[1]  # CSP: no inline styles


def test_the_dashboard_refreshes_its_numbers_as_an_htmx_fragment(client, project, coordinator, submitted):
    client.force_login(coordinator)
    response = client.get(reverse("dashboard", args=[project.slug]), headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="dashboard-stats"') and "<html" not in body
    assert '<dd data-stat="lead">2</dd>' in body


def test_record_and_next_takes_the_reviewer_straight_to_the_next_item(client, project, reviewer, submitted):
    _, items = submitted
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    client.force_login(reviewer)
    data = {"version": slot.version, "then": "next"}
    data |= {f"verdict-{key}": "pass" for key in all_pass(project)}

    response = client.post(reverse("review_slot", args=[project.slug, slot.pk]), data)

    following = review_queue.review_claim_next(project=project, user=reviewer)
    assert following.item_id == items[1].pk
    assert response.status_code == 302 and response["Location"].endswith(f"/review/{following.pk}/")


def test_a_judgment_missing_a_verdict_is_shown_again_with_what_was_chosen(client, project, reviewer, submitted):
    _, items = submitted
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    client.force_login(reviewer)
    data = {"version": slot.version, "verdict-fluency": "flag", "comment-fluency": "Tippfehler <b>"}

    response = client.post(reverse("review_slot", args=[project.slug, slot.pk]), data)

    assert response.status_code == 400
    page = response.content.decode()
    assert "judgments.standalone.verdict" in page
    assert 'value="flag" checked' in page and "Tippfehler &lt;b&gt;" in page


def test_the_review_screen_of_a_document_qa_highlights_its_evidence_in_the_full_text(
    client, project, annotator, reviewer
):
    project_update(project=project, collect_document_qa=True, lead_qa_min=1)
    factories.pair(project, local_text=LOCAL_TEXT)
    pair = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=pair, user=annotator, decision="annotate")
    complete_item(pair, annotator, "深水埗")
    qa_item_create(
        pair=pair, user=annotator, kind="document", question="几种茶叶？", answer_standard="五种",
        answer_local="五種", spans=[span_of("五種茶葉", LOCAL_TEXT)],
    )  # fmt: skip
    pair_submit(pair=pair, user=annotator)
    document = pair.items.get(kind="document")
    slot = review_queue.review_claim(item=document, user=reviewer)
    client.force_login(reviewer)

    page = client.get(reverse("review_slot", args=[project.slug, slot.pk])).content.decode()

    assert '<mark class="hl c1">五種茶葉</mark>' in page and "Local full text" in page


def test_time_spent_rewriting_counts_for_the_item(client, project, annotator, reviewer, submitted):
    _, items = submitted
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    review_judging.review_submit(
        slot=slot, user=reviewer, version=slot.version, judgments=flag(project, "fluency", "x")
    )
    client.force_login(annotator)
    page = client.get(reverse("item_rewrite", args=[project.slug, items[0].pk])).content.decode()
    activity = reverse("pair_activity", args=[project.slug, items[0].pair_id])
    assert f'data-activity-url="{activity}"' in page

    assert client.post(activity, {"seconds": "45", "item": items[0].pk}).status_code == 204
    items[0].refresh_from_db()
    assert items[0].active_seconds == 45


def test_the_review_screen_of_a_rewritten_item_shows_the_earlier_flags_its_evidence_and_its_verification(
    client, project, annotator, reviewer, second_reviewer, submitted
):
    _, items = submitted
    item = items[0]
    slot = review_queue.review_claim(item=item, user=reviewer)
    review_judging.review_submit(
        slot=slot, user=reviewer, version=slot.version, judgments=flag(project, "fluency", "Typo <b>here</b>")
    )
    item.refresh_from_db()
    item = qa_item_update(item=item, user=annotator, version=item.version, question="这家茶餐厅在哪里？")
    item = review_decisions.qa_item_resubmit(item=item, user=annotator, version=item.version)
    review_verification.verification_record(item=item, user=second_reviewer, result="not_found", version=0)
    again = review_queue.review_claim(item=item, user=second_reviewer)
    client.force_login(second_reviewer)

    page = client.get(reverse("review_slot", args=[project.slug, again.pk])).content.decode()

    assert "Flags on earlier revisions (1)" in page
    assert "Revision 1 · Grammaticality / fluency: Typo &lt;b&gt;here&lt;/b&gt;" in page
    assert "Verification: Not found on the standard page" in page
    assert '<mark class="hl c1">' in page and 'id="judgment-form"' in page
    first = client.get(reverse("review_slot", args=[project.slug, slot.pk]))  # the first reviewer's, done
    assert first.status_code == 403


def test_the_review_list_finds_by_text_in_the_question_or_an_answer_on_the_page_and_the_api(
    client, project, reviewer, submitted
):
    from tests.conftest import api_as

    client.force_login(reviewer)
    url = reverse("review_queue", args=[project.slug])

    def found(**query) -> list[str]:
        return [item.question for item in client.get(url, query).context["page"]]

    assert found(text="深水埗") == ["关于深水埗的问题？"]
    assert found(text="姓陳", status="submitted") == ["关于姓陳的问题？"]
    assert found(text="𨋢") == []
    response = client.get(url, {"text": "问题", "status": "submitted"})
    assert response.context["filter"].as_query() == "text=%E9%97%AE%E9%A2%98&status=submitted"  # the pager's links
    assert 'name="text" value="问题"' in response.content.decode()

    api = api_as(reviewer).get(f"/api/projects/{project.slug}/review/items/", {"text": "姓陳"})
    assert api.status_code == 200, api.content
    assert [row["question"] for row in api.json()["results"]] == ["关于姓陳的问题？"]
    too_long = api_as(reviewer).get(f"/api/projects/{project.slug}/review/items/", {"text": "x" * 201})
    assert too_long.status_code == 400 and too_long.json()["field"] == "text"


def test_the_review_list_filters_by_author_topic_and_status_on_the_page_and_the_api(
    client, project, annotator, second_annotator, reviewer
):
    """Author is the item's, topic the pair's final label (agreed or adjudicated; a region label of the same value
    is not a topic), status the item's as the list shows it; the filter rides the pager's links."""
    from review.models import FinalLabel
    from tests.conftest import api_as

    project_update(project=project, lead_qa_min=1)
    food, (first, second) = submitted_pair(project, annotator)
    place, (other,) = submitted_pair(project, second_annotator, evidences=("深水埗",))
    FinalLabel.objects.create(project=food.project, pair=food, kind="topic", value="food", method="agreement")
    FinalLabel.objects.create(
        project=place.project, pair=place, kind="region", value="food", method="agreement"
    )  # not a topic
    slot = review_queue.review_claim(item=first, user=reviewer)
    review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=all_pass(project))
    first.refresh_from_db()
    assert first.status == "accepted"
    client.force_login(reviewer)
    url = reverse("review_queue", args=[project.slug])

    def found(**query) -> list[int]:
        return [item.pk for item in client.get(url, query).context["page"]]

    assert found() == [second.pk, other.pk]  # the page opens on what waits for review
    assert found(status="all", author="annotator") == [first.pk, second.pk]
    assert found(status="all", author="annotator2") == [other.pk]
    assert found(status="all", author="nobody") == []
    assert found(status="all", topic="food") == [first.pk, second.pk]
    assert found(topic="food") == [second.pk]
    assert found(status="accepted", topic="food") == [first.pk]
    assert found(status="all", topic="geography") == []
    response = client.get(url, {"status": "all", "author": "annotator", "topic": "food"})
    assert response.context["filter"].as_query() == "status=all&author=annotator&topic=food"
    html = response.content.decode()
    assert '<option value="food" selected>Food</option>' in html  # topics in words
    assert '<option value="annotator" selected>annotator</option>' in html
    assert '<option value="annotator2">annotator2</option>' in html
    assert '<option value="accepted">Accepted</option>' in html  # statuses in words

    api = api_as(reviewer)
    path = f"/api/projects/{project.slug}/review/items/"

    def listed(**query) -> list[int]:
        response = api.get(path, query)
        assert response.status_code == 200, response.content
        return [row["id"] for row in response.json()["results"]]

    assert listed() == [first.pk, second.pk, other.pk]  # the API lists every status unless asked
    assert listed(author="annotator2") == [other.pk]
    assert listed(topic="food") == [first.pk, second.pk]
    assert listed(topic="food", status="submitted") == [second.pk]
    assert listed(topic="food", author="annotator2") == []
    refused = api.get(path, {"status": "thinking"})
    assert refused.status_code == 400 and refused.json()["field"] == "status"
