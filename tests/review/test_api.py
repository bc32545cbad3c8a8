"""The review REST API through HTTP: the whole loop, stale saves, blind review, labels, who may do what."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from annotation.models import QAItem
from annotation.services.members import membership_set
from review import judging as review_judging
from review import queue as review_queue
from review.models import ArticleLabel
from tests import factories
from tests.conftest import api_as
from tests.review.conftest import STANDARD_TEXT, all_pass, flag, span_of, submitted_pair
from tests.security.harness import Cell, check_api


def url(slug: str, rest: str) -> str:
    return f"/api/projects/{slug}/{rest}"


# The loop


def test_reviewer_flags_author_rewrites_second_review_accepts_through_the_api(project, annotator, reviewer, submitted):
    _, items = submitted
    item = items[0]
    as_reviewer, as_author = api_as(reviewer), api_as(annotator)

    claimed = as_reviewer.post(url(project.slug, f"review/items/{item.pk}/claim/"))
    assert claimed.status_code == 200, claimed.data
    assert [c["key"] for c in claimed.data["criteria"]] == ["fluency", "standalone", "appropriateness"]
    slot = claimed.data
    judged = as_reviewer.post(
        url(project.slug, f"review/slots/{slot['id']}/"),
        {"version": slot["version"], "judgments": flag(project, "standalone", "Which restaurant?")},
        format="json",
    )
    assert judged.status_code == 200, judged.data
    assert judged.data["item"]["status"] == "needs_rewrite"

    history = as_author.get(url(project.slug, f"items/{item.pk}/history/")).data
    review = history["revisions"][0]["reviews"][0]
    assert review["reviewer"] is None  # blind review: the author does not see who
    assert {"criterion": "standalone", "verdict": "flag"}.items() <= review["judgments"][1].items()

    current = as_author.get(f"/api/projects/{project.slug}/items/{item.pk}/").data
    edited = as_author.patch(
        f"/api/projects/{project.slug}/items/{item.pk}/",
        {"version": current["version"], "question": "深水埗那家茶餐厅在哪个区？"},
        format="json",
    )
    assert edited.status_code == 200, edited.data
    resubmitted = as_author.post(
        url(project.slug, f"items/{item.pk}/resubmit/"), {"version": edited.data["version"]}, format="json"
    )
    assert resubmitted.status_code == 200, resubmitted.data
    assert resubmitted.data["status"] == "submitted"

    again = as_reviewer.post(url(project.slug, f"review/items/{item.pk}/claim/")).data
    assert again["revision"] == 2
    accepted = as_reviewer.post(
        url(project.slug, f"review/slots/{again['id']}/"),
        {"version": again["version"], "judgments": all_pass(project)},
        format="json",
    )
    assert accepted.data["item"]["status"] == "accepted"

    history = as_reviewer.get(url(project.slug, f"items/{item.pk}/history/")).data
    assert [r["number"] for r in history["revisions"]] == [1, 2]
    assert history["revisions"][0]["reviews"][0]["reviewer"] == "reviewer"  # reviewers see names
    question = history["revisions"][1]["diffs"][0]
    assert question["field"] == "question" and question["changed"]
    assert {"op": "delete", "text": "关于"} in question["ops"]


def test_a_stale_judgment_answers_409_with_the_current_slot(project, reviewer, submitted):
    slot = api_as(reviewer).post(url(project.slug, "review/next/")).data
    response = api_as(reviewer).post(
        url(project.slug, f"review/slots/{slot['id']}/"),
        {"version": slot["version"] - 1, "judgments": all_pass(project)},
        format="json",
    )
    assert response.status_code == 409
    assert response.data["current"]["version"] == slot["version"]
    assert QAItem.objects.get(pk=slot["item"]["id"]).status == "submitted"


def test_missing_verdicts_are_named_field_by_field(project, reviewer, submitted):
    slot = api_as(reviewer).post(url(project.slug, "review/next/")).data
    response = api_as(reviewer).post(
        url(project.slug, f"review/slots/{slot['id']}/"),
        {"version": slot["version"], "judgments": {"fluency": {"verdict": "maybe"}}},
        format="json",
    )
    assert response.status_code == 400
    assert response.data["field"] == "judgments.fluency.verdict"
    assert "judgments.standalone.verdict" in response.data["details"]


def test_the_queue_answers_with_the_slot_the_reviewer_holds(project, reviewer, coordinator, submitted):
    first = api_as(reviewer).post(url(project.slug, "review/next/")).data
    again = api_as(reviewer).post(url(project.slug, "review/next/")).data
    assert again["id"] == first["id"] and again["version"] == first["version"]
    assert again["claim_expires_at"] >= first["claim_expires_at"]  # the claim kept alive
    coordinator.is_superuser = True  # a superuser goes the general way: holds nothing, gets the other item's slot
    coordinator.save()
    other = api_as(coordinator).post(url(project.slug, "review/next/")).data
    assert other["id"] != first["id"] and other["reviewer"] == coordinator.username
    assert api_as(coordinator).post(url(project.slug, "review/next/")).data["id"] == other["id"]


def test_the_queue_answers_204_when_nothing_waits(project, reviewer):
    assert api_as(reviewer).post(url(project.slug, "review/next/")).status_code == 204


def test_verification_search_and_record_through_the_api(project, annotator, submitted):
    _, items = submitted
    client = api_as(annotator)
    found = client.get(url(project.slug, f"items/{items[1].pk}/verification/"), {"q": "姓陈"}).data
    assert found["possible"] and [s["text"] for s in found["sentences"]] == ["老板姓陈。"]
    sentence = {k: found["sentences"][0][k] for k in ("start", "end", "text")}
    recorded = client.post(
        url(project.slug, f"items/{items[1].pk}/verification/"),
        {"result": "found", "sentences": [sentence], "version": 0},
        format="json",
    )
    assert recorded.status_code == 201, recorded.data
    stale = client.post(
        url(project.slug, f"items/{items[1].pk}/verification/"), {"result": "not_found", "version": 0}, format="json"
    )
    assert stale.status_code == 409 and stale.data["current"]["number"] == 1


def test_labels_stay_hidden_until_both_labellers_are_done_then_disagreement_goes_to_adjudication(
    project, coordinator, submitted
):
    pair, _ = submitted
    second = factories.user("coordinator2")

    membership_set(project=project, user=second, roles={"coordinator"})
    first_client, second_client = api_as(coordinator), api_as(second)
    labels = url(project.slug, f"pairs/{pair.pk}/labels/")
    for client, topic in ((first_client, "food"), (second_client, "history")):
        assert client.post(labels, {"kind": "topic", "value": topic}, format="json").status_code == 200
    state = second_client.post(labels, {"kind": "region", "value": "local", "detail": "Hong Kong"}, format="json")
    assert [label["labeller"] for label in state.data["labels"]] == ["coordinator2", "coordinator2"]
    assert not state.data["complete"]
    first_client.post(labels, {"kind": "region", "value": "local"}, format="json")

    state = first_client.get(labels).data
    assert state["complete"] and len(state["labels"]) == 4
    assert [(f["kind"], f["value"], f["method"]) for f in state["finals"]] == [("region", "local", "agreement")]
    rows = first_client.get(url(project.slug, "labels/adjudication/")).data
    assert [(row["pair"], row["kind"]) for row in rows] == [(pair.pk, "topic")]
    final = first_client.post(
        url(project.slug, f"pairs/{pair.pk}/labels/final/"), {"kind": "topic", "value": "food"}, format="json"
    )
    assert final.status_code == 200 and final.data["method"] == "adjudicated"
    assert ArticleLabel.objects.current().filter(pair=pair).count() == 4  # raw labels kept


def test_an_unknown_topic_is_refused_naming_value(project, coordinator, submitted):
    pair, _ = submitted
    response = api_as(coordinator).post(
        url(project.slug, f"pairs/{pair.pk}/labels/"), {"kind": "topic", "value": "astrology"}, format="json"
    )
    assert response.status_code == 400 and response.data["field"] == "value"


def test_dashboard_counts_match_the_database(project, annotator, reviewer, coordinator, submitted):
    factories.pair(project)  # collected, not inspected
    slot = review_queue.review_claim_next(project=project, user=reviewer)
    review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=all_pass(project))
    data = api_as(coordinator).get(url(project.slug, "dashboard/")).data
    assert data["pairs"] == {"collected": 2, "local_heavy": 2, "inspected": 1, "excluded": 0, "with_qas": 1}
    assert (data["items"]["lead"], data["items"]["submitted"], data["items"]["accepted"]) == (2, 1, 1)
    assert [(r["username"], r["done"]) for r in data["reviewers"]] == [("reviewer", 1)]
    assert [(p["username"], p["items"], p["pairs"]) for p in data["people"]] == [("annotator", 2, 1)]


def test_coordinator_sets_reviewer_languages_and_routing_follows(project, coordinator, reviewer, submitted):
    client = api_as(coordinator)
    response = client.put(url(project.slug, "reviewers/reviewer/languages/"), {"languages": ["yue"]}, format="json")
    assert response.status_code == 200 and response.data["eligible"] is False
    assert api_as(reviewer).post(url(project.slug, "review/next/")).status_code == 409
    bad = client.put(url(project.slug, "reviewers/reviewer/languages/"), {"languages": ["zz"]}, format="json")
    assert bad.status_code == 400 and bad.data["field"] == "languages[0]"


# Who may do what


@pytest.fixture
def world(project, annotator, reviewer, outsider) -> dict[str, Any]:
    pair, items = submitted_pair(project, annotator, standard_text=STANDARD_TEXT)
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    return {"slug": project.slug, "pair": pair.pk, "item": items[0].pk, "slot": slot.pk, "version": slot.version,
            "item_version": items[0].version, "judgments": all_pass(project)}  # fmt: skip


Body = Callable[[dict[str, Any]], dict[str, Any] | None]
USERS = ["anonymous", "outsider", "annotator", "reviewer", "coordinator"]
FOUND = {"result": "found", "version": 0, "sentences": [span_of("老板姓陈。", STANDARD_TEXT)]}
ENDPOINTS: list[tuple[str, str, Body, tuple[int, ...]]] = [
    ("get", "review/items/", lambda w: None, (403, 404, 403, 200, 200)),
    ("get", "my-items/", lambda w: None, (403, 404, 200, 403, 403)),
    ("get", "review/settings/", lambda w: None, (403, 404, 200, 200, 200)),
    ("patch", "review/settings/", lambda w: {"blind_review": False}, (403, 404, 403, 403, 200)),
    ("post", "review/next/", lambda w: None, (403, 404, 403, 200, 403)),
    ("post", "review/items/{item}/claim/", lambda w: None, (403, 404, 403, 200, 403)),
    ("get", "review/slots/{slot}/", lambda w: None, (403, 404, 403, 200, 200)),
    ("post", "review/slots/{slot}/", lambda w: {"version": w["version"], "judgments": w["judgments"]},
     (403, 404, 403, 200, 403)),
    ("post", "review/slots/{slot}/release/", lambda w: None, (403, 404, 403, 204, 403)),
    ("post", "review/slots/{slot}/activity/", lambda w: {"seconds": 20}, (403, 404, 403, 204, 403)),
    ("post", "items/{item}/reject/", lambda w: {"reason": "Duplicate", "version": w["item_version"]},
     (403, 404, 403, 403, 200)),
    ("post", "items/{item}/resubmit/", lambda w: {"version": w["item_version"]}, (403, 404, 409, 403, 403)),
    ("post", "items/{item}/reviewer-rewrite/", lambda w: {"version": w["item_version"], "question": "新？"},
     (403, 404, 403, 409, 403)),
    ("get", "items/{item}/history/", lambda w: None, (403, 404, 200, 200, 200)),
    ("get", "items/{item}/verification/", lambda w: None, (403, 404, 200, 200, 200)),
    ("post", "items/{item}/verification/", lambda w: FOUND, (403, 404, 201, 201, 201)),
    ("get", "pairs/{pair}/labels/", lambda w: None, (403, 404, 403, 403, 200)),
    ("post", "pairs/{pair}/labels/", lambda w: {"kind": "topic", "value": "food"}, (403, 404, 403, 403, 200)),
    ("post", "pairs/{pair}/labels/final/", lambda w: {"kind": "topic", "value": "food"}, (403, 404, 403, 403, 409)),
    ("get", "labels/adjudication/", lambda w: None, (403, 404, 403, 403, 200)),
    ("get", "dashboard/", lambda w: None, (403, 404, 403, 403, 200)),
    ("get", "pairs/{pair}/document-qa/", lambda w: None, (403, 404, 200, 403, 200)),
    ("post", "pairs/{pair}/document-qa/", lambda w: None, (403, 404, 409, 403, 403)),
    ("get", "reviewers/", lambda w: None, (403, 404, 403, 403, 200)),
    ("put", "reviewers/reviewer/languages/", lambda w: {"languages": ["cmn"]}, (403, 404, 403, 403, 200)),
]  # fmt: skip


@pytest.mark.one_engine  # access rules: the same on both engines
def test_each_review_endpoint_answers_each_kind_of_user(world, annotator, reviewer, coordinator, outsider):
    users = {"annotator": annotator, "reviewer": reviewer, "coordinator": coordinator, "outsider": outsider}
    cells = [
        Cell(method, url(world["slug"], path.format(**world)), statuses, body(world))
        for method, path, body, statuses in ENDPOINTS
    ]
    check_api(users, cells, roles=USERS)


def test_coordinator_adds_a_criterion_and_reviewers_must_judge_it(project, coordinator, reviewer, submitted):
    client = api_as(coordinator)
    settings = client.get(url(project.slug, "review/settings/")).data
    criteria = [*settings["review_criteria"], {"key": "faithful", "label": "Faithful to the evidence"}]
    changed = client.patch(
        url(project.slug, "review/settings/"),
        {"review_criteria": criteria, "version": settings["version"]},
        format="json",
    )
    assert changed.status_code == 200, changed.data
    assert [c["key"] for c in changed.data["review_criteria"]][-1] == "faithful"
    stale = client.patch(url(project.slug, "review/settings/"), {"topics": ["x"], "version": settings["version"]})
    assert stale.status_code == 409 and stale.data["current"]["version"] == changed.data["version"]
    duplicate = client.patch(
        url(project.slug, "review/settings/"), {"review_criteria": [criteria[0], criteria[0]]}, format="json"
    )
    assert duplicate.status_code == 400 and duplicate.data["field"] == "review_criteria[1].key"

    project.refresh_from_db()
    slot = review_queue.review_claim_next(project=project, user=reviewer)
    response = api_as(reviewer).post(
        url(project.slug, f"review/slots/{slot.pk}/"),
        {"version": slot.version, "judgments": all_pass(project) | {}},
        format="json",
    )
    assert response.status_code == 200
    old_three = {k: v for k, v in all_pass(project).items() if k != "faithful"}
    slot2 = review_queue.review_claim_next(project=project, user=reviewer)
    refused = api_as(reviewer).post(
        url(project.slug, f"review/slots/{slot2.pk}/"),
        {"version": slot2.version, "judgments": old_three},
        format="json",
    )
    assert refused.status_code == 400 and refused.data["field"] == "judgments.faithful.verdict"


def test_an_annotator_starts_a_document_qa_through_the_api_and_sees_its_time_box(project, annotator):
    from annotation.services.pairs import pair_claim_next, pair_screen
    from annotation.services.projects import project_update
    from tests.review.conftest import LOCAL_TEXT

    project_update(project=project, collect_document_qa=True)
    factories.pair(project, local_text=LOCAL_TEXT)
    pair = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=pair, user=annotator, decision="annotate")
    client = api_as(annotator)
    path = url(project.slug, f"pairs/{pair.pk}/document-qa/")

    assert client.get(path).data["item"] is None
    started = client.post(path)
    assert started.status_code == 201
    assert started.data["minutes"] == 15 and started.data["deadline"] and not started.data["overdue"]
    assert started.data["item"]["kind"] == "document"
    again = client.post(path)
    assert again.status_code == 409 and "at most one" in again.data["detail"]


def test_active_time_on_the_review_screen_counts_for_the_reviewer(project, reviewer, coordinator, submitted):
    slot = review_queue.review_claim_next(project=project, user=reviewer)
    client = api_as(reviewer)
    for seconds in (40, 20, 9999):
        assert (
            client.post(url(project.slug, f"review/slots/{slot.pk}/activity/"), {"seconds": seconds}).status_code == 204
        )
    bad = client.post(url(project.slug, f"review/slots/{slot.pk}/activity/"), {"seconds": -1})
    assert bad.status_code == 400 and bad.data["field"] == "seconds"
    slot.refresh_from_db()
    assert slot.active_seconds == 40 + 20 + 300  # one report counts at most 300 s
    review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=all_pass(project))
    row = api_as(coordinator).get(url(project.slug, "dashboard/")).data["reviewers"][0]
    assert row["median_active_seconds"] == 360
