"""The annotators' and reviewers' API requests take a pinned number of queries (bench/cpu.py measures their
CPU). Each request is made as scripts make it: `Authorization: Token …` through the whole middleware
stack, so the token's own query is counted too."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test import Client

from accounts.tokens import api_token_create
from tests import factories
from tests.review.conftest import span_of

# The most queries each request may take, counted as Django's test tools count them: transaction control (BEGIN,
# COMMIT) included, the same on both engines; pinned where they are, so that a change that adds one is seen
# (bench/cpu.py prints them with the CPU per request). What each is, besides the token's query and BEGIN/COMMIT
# around the writes:
MOST = {
    # Membership (with the pair held, if any), the first row of each waiting condition FOR UPDATE (new pairs,
    # expired claims), the claim.
    "queue/next": 7,
    "screening": 7,  # pair with project and membership; the update, the screening row, the audit row
    # The pair with its project, membership and the count of its items; the item, its spans; its spans read back.
    "item create": 7,
    # item with project and membership; whether the project checks local knowledge (evaluation's setting); the
    # update, spans deleted, spans written; read back
    "item save": 9,
    # pair; its items, their spans (a prefetch) and last revision numbers; pair, items, revisions, events, slots, audit
    "submit": 12,
    # Membership with languages and the slot held, the first row of each waiting condition, the claim, its event;
    # the answer reads the item's spans and the slot's judgments.
    "review/next": 10,
    # The slot with all it shows and its item locked (with how the round looked), the slot, judgments, the item's
    # decision (its update asks whether the round is complete only if it was not then) and the events; the answer
    # reads the spans and the judgments. The first review of a project also asks whether an agreement report is
    # due (3 queries); after that the debounce counts judgments in the cache (10 queries, also while the round
    # waits for a review: then the round is asked instead of the decision).
    "judge": 13,
}
FACTS = [("这家店在哪里？", "深水埗", "深水埗", "深水埗"), ("老板姓什么？", "陈", "陳", "老闆姓陳")]


def _client(user) -> Client:
    key = api_token_create(user=user, name="script")[1]
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/projects/").status_code == 200  # the token's first use (last_used_at) out of the way
    return client


def _call(client: Client, assert_most, name: str, method: str, url: str, body=None, status: int = 200):
    with assert_most(MOST[name]):
        response = client.generic(method, url, json.dumps(body or {}), content_type="application/json")
    assert response.status_code == status, response.content[:300]
    return response.json()


# Transactional, as a server runs: inside a test's transaction every atomic block would add a SAVEPOINT and
# its RELEASE to the count, which production does not send.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("reviewers_per_item", [1, 2])
def test_the_hot_path_requests_take_a_pinned_number_of_queries(
    project, annotator, reviewer, django_assert_max_num_queries, reviewers_per_item
):
    project.reviewers_per_item = reviewers_per_item
    project.save(update_fields=["reviewers_per_item"])
    factories.pair(project)
    writer, judge = _client(annotator), _client(reviewer)
    assert connection.features.supports_json_field  # asked once per connection (a query on SQLite), not per request
    p = f"/api/projects/{project.slug}"

    pair = _call(writer, django_assert_max_num_queries, "queue/next", "POST", f"{p}/queue/next/")
    assert pair["status"] == "claimed" and pair["assignee"] == "annotator" and pair["items"] == []
    pair = _call(writer, django_assert_max_num_queries, "screening", "POST", f"{p}/pairs/{pair['id']}/screening/",
                 {"decision": "annotate"})  # fmt: skip
    assert pair["status"] == "annotating" and pair["items"] == []
    for question, standard, local, evidence in FACTS:
        item = _call(writer, django_assert_max_num_queries, "item create", "POST", f"{p}/pairs/{pair['id']}/items/",
                     {"question": question, "spans": [span_of(evidence)]}, status=201)  # fmt: skip
        assert item["author"] == "annotator" and item["spans"][0]["text"] == evidence and item["version"] == 2
        saved = _call(writer, django_assert_max_num_queries, "item save", "PATCH", f"{p}/items/{item['id']}/",
                      {"version": item["version"], "answer_standard": standard, "answer_local": local,
                       "spans": [span_of(evidence)]})  # fmt: skip
        assert (saved["version"], saved["answer_local"], saved["question"]) == (3, local, question)
        assert saved["spans"] == [{**span_of(evidence), "document": "local_lead", "match": "exact"}]
    submitted = _call(writer, django_assert_max_num_queries, "submit", "POST", f"{p}/pairs/{pair['id']}/submit/")
    assert submitted["status"] == "submitted" and {i["status"] for i in submitted["items"]} == {"submitted"}

    for _fact in FACTS:
        slot = _call(judge, django_assert_max_num_queries, "review/next", "POST", f"{p}/review/next/")
        assert slot["status"] == "claimed" and slot["reviewer"] == "reviewer" and slot["judgments"] == []
        judgments = {c["key"]: {"verdict": "pass", "comment": ""} for c in slot["criteria"]}
        done = _call(judge, django_assert_max_num_queries, "judge", "POST", f"{p}/review/slots/{slot['id']}/",
                     {"version": slot["version"], "judgments": judgments})  # fmt: skip
        assert done["status"] == "done" and done["version"] == slot["version"] + 1
        assert [j["criterion"] for j in done["judgments"]] == list(judgments)
        # One reviewer per item decides it; with two, the item waits for the second review.
        assert done["item"]["status"] == ("accepted" if reviewers_per_item == 1 else "submitted")
