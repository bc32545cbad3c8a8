"""The annotation REST API, through HTTP: the authoring loop, bad input, stale edits, who may do what."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from accounts.models import ApiToken
from annotation.models import EvidenceSpan, Membership, PagePair, Project, QAItem
from annotation.services.items import qa_item_create, qa_item_delete, qa_item_update
from annotation.services.pairs import pair_claim_next
from tests import factories
from tests.conftest import api_as
from tests.security.harness import Cell, check_api

LEAD = factories.CANTONESE_LEAD


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """The cast's users are created with passwords; the real hasher would make each test take a second."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def project_url(slug: str, rest: str = "") -> str:
    return f"/api/projects/{slug}/{rest}"


def span_of(text: str, lead: str = LEAD) -> dict[str, Any]:
    start = lead.index(text)
    return {"start": start, "end": start + len(text), "text": text}


def complete_item(pair: PagePair, user, evidence: str) -> QAItem:
    return qa_item_create(
        pair=pair,
        user=user,
        question=f"关于{evidence}的问题？",
        answer_standard=evidence,
        answer_local=evidence,
        spans=[span_of(evidence, pair.local_lead)],
    )


# The authoring loop


def test_annotator_claims_screens_authors_edits_and_submits_a_pair_through_the_api(project, annotator):
    pool_pair = factories.pair(project)
    client = api_as(annotator)

    claimed = client.post(project_url(project.slug, "queue/next/"))
    assert claimed.status_code == 200
    assert (claimed.data["id"], claimed.data["status"]) == (pool_pair.pk, "claimed")
    lead = claimed.data["local_lead"]
    assert ord(lead[0]) > 0xFFFF  # offsets after it differ between code points and UTF-16
    other_pair = factories.pair(project)
    again = client.post(project_url(project.slug, "queue/next/"))  # the pair held unscreened, not a new one
    assert (again.status_code, again.data["id"], again.data["local_lead"]) == (200, pool_pair.pk, lead)
    assert PagePair.objects.get(pk=other_pair.pk).status == PagePair.Status.NEW

    pair_url = project_url(project.slug, f"pairs/{pool_pair.pk}/")
    screened = client.post(pair_url + "screening/", {"decision": "annotate", "note": ""}, format="json")
    assert screened.status_code == 200
    assert (screened.data["status"], screened.data["screening_decision"]) == ("annotating", "annotate")

    created = []
    for question, answer_standard, evidence in [
        ("这家茶餐厅的招牌菜是什么？", "菠萝油和鸳鸯", "菠蘿油同埋鴛鴦"),
        ("这家茶餐厅的老板姓什么？", "陈", "老闆姓陳"),
    ]:
        body = {
            "question": question,
            "answer_standard": answer_standard,
            "answer_local": evidence,
            "spans": [span_of(evidence, lead)],
        }
        response = client.post(pair_url + "items/", body, format="json")
        assert response.status_code == 201, response.data
        assert response.data["spans"][0] | {"document": "local_lead"} == {
            **span_of(evidence, lead),
            "document": "local_lead",
            "match": "exact",
        }
        created.append(response.data)

    first = created[0]
    patched = client.patch(
        project_url(project.slug, f"items/{first['id']}/"),
        {"version": first["version"], "answer_local": "菠蘿油、鴛鴦", "spans": [span_of("菠蘿油", lead)]},
        format="json",
    )
    assert patched.status_code == 200, patched.data
    assert patched.data["version"] == first["version"] + 1
    assert patched.data["question"] == first["question"]  # fields left out keep their value
    assert [span["text"] for span in patched.data["spans"]] == ["菠蘿油"]

    submitted = client.post(pair_url + "submit/")
    assert submitted.status_code == 200, submitted.data
    assert submitted.data["status"] == "submitted"
    assert {item["status"] for item in submitted.data["items"]} == {"submitted"}
    for span in EvidenceSpan.objects.filter(item__pair=pool_pair):
        assert LEAD[span.start : span.end] == span.text


def test_pair_detail_shows_texts_lengths_screening_and_live_items_with_spans(annotating_pair, annotator):
    kept = complete_item(annotating_pair, annotator, "深水埗")
    deleted = complete_item(annotating_pair, annotator, "姓陳")
    qa_item_delete(item=deleted, user=annotator)

    response = api_as(annotator).get(project_url(annotating_pair.project.slug, f"pairs/{annotating_pair.pk}/"))

    assert response.status_code == 200
    data = response.data
    assert (data["local_lead"], data["standard_lead"]) == (LEAD, factories.MANDARIN_LEAD)
    assert data["local_lead_length"] == len(LEAD)
    assert (data["status"], data["screening_decision"], data["assignee"]) == ("annotating", "annotate", "annotator")
    assert [item["id"] for item in data["items"]] == [kept.pk]
    assert data["items"][0]["spans"][0]["text"] == "深水埗"


def test_queue_answers_204_when_the_pool_is_empty(project, annotator):
    response = api_as(annotator).post(project_url(project.slug, "queue/next/"))

    assert response.status_code == 204
    assert not response.content


def test_items_list_shows_the_pairs_live_items_only(annotating_pair, annotator):
    kept = complete_item(annotating_pair, annotator, "深水埗")
    gone = complete_item(annotating_pair, annotator, "姓陳")
    url = project_url(annotating_pair.project.slug, f"items/{gone.pk}/")

    assert api_as(annotator).delete(url).status_code == 204

    response = api_as(annotator).get(project_url(annotating_pair.project.slug, f"pairs/{annotating_pair.pk}/items/"))
    assert [item["id"] for item in response.data] == [kept.pk]
    assert api_as(annotator).get(url).status_code == 404


def test_warnings_say_when_the_evidence_also_appears_in_the_standard_lead(annotating_pair, annotator):
    item = complete_item(annotating_pair, annotator, "深水埗")  # the Mandarin lead mentions 深水埗 too

    response = api_as(annotator).get(project_url(annotating_pair.project.slug, f"items/{item.pk}/warnings/"))

    assert response.status_code == 200
    assert "evidence_in_standard" in [warning["code"] for warning in response.data]
    assert all(set(warning) == {"code", "message"} for warning in response.data)


def test_activity_adds_seconds_to_the_pair_and_the_item(annotating_pair, annotator):
    item = complete_item(annotating_pair, annotator, "深水埗")
    url = project_url(annotating_pair.project.slug, f"pairs/{annotating_pair.pk}/activity/")

    response = api_as(annotator).post(url, {"seconds": 42, "item": item.pk}, format="json")

    assert response.status_code == 204
    annotating_pair.refresh_from_db()
    item.refresh_from_db()
    assert (annotating_pair.active_seconds, item.active_seconds) == (42, 42)


def test_annotator_lists_only_their_own_pairs_without_the_long_texts(project, annotating_pair, annotator):
    factories.pair(project)  # in the pool, nobody's

    response = api_as(annotator).get(project_url(project.slug, "pairs/"))

    assert response.status_code == 200
    assert [pair["id"] for pair in response.data["results"]] == [annotating_pair.pk]
    listed = response.data["results"][0]
    assert not {"local_lead", "standard_lead", "local_text", "standard_text"} & set(listed)
    assert listed["local_lead_length"] == len(LEAD)


def test_coordinator_lists_every_pair_and_can_filter_by_status(project, annotating_pair, coordinator):
    waiting = factories.pair(project)
    client = api_as(coordinator)

    everything = client.get(project_url(project.slug, "pairs/"))
    in_pool = client.get(project_url(project.slug, "pairs/"), {"status": "new"})

    assert {pair["id"] for pair in everything.data["results"]} == {annotating_pair.pk, waiting.pk}
    assert everything.data["count"] == 2
    assert [pair["id"] for pair in in_pool.data["results"]] == [waiting.pk]


def test_pair_list_counts_live_items(project, annotating_pair, annotator, coordinator):
    complete_item(annotating_pair, annotator, "深水埗")
    qa_item_delete(item=complete_item(annotating_pair, annotator, "姓陳"), user=annotator)

    response = api_as(coordinator).get(project_url(project.slug, "pairs/"), {"status": "annotating"})

    assert response.data["results"][0]["item_count"] == 1


# Stale edits


def test_a_stale_item_save_answers_409_with_the_newer_item_and_overwrites_nothing(annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    url = project_url(annotating_pair.project.slug, f"items/{item.pk}/")
    first_tab, second_tab = api_as(annotator), api_as(annotator)

    saved = first_tab.patch(url, {"version": item.version, "question": "第一个标签页的问题"}, format="json")
    stale = second_tab.patch(url, {"version": item.version, "question": "第二个标签页的问题"}, format="json")

    assert saved.status_code == 200
    assert stale.status_code == 409
    assert stale.data["current"]["question"] == "第一个标签页的问题"
    assert stale.data["current"]["version"] == saved.data["version"]
    assert "version" in stale.data["detail"]
    item.refresh_from_db()
    assert (item.question, item.version) == ("第一个标签页的问题", saved.data["version"])


def test_a_stale_project_save_answers_409_with_the_current_settings(project, coordinator):
    url = project_url(project.slug)
    client = api_as(coordinator)
    loaded = client.get(url).data["version"]

    first = client.patch(url, {"version": loaded, "lead_qa_max": 5}, format="json")
    stale = client.patch(url, {"version": loaded, "lead_qa_max": 4}, format="json")

    assert first.status_code == 200
    assert first.data["version"] == loaded + 1
    assert stale.status_code == 409
    assert stale.data["current"]["lead_qa_max"] == 5
    project.refresh_from_db()
    assert project.lead_qa_max == 5


def test_a_project_save_without_version_applies_and_bumps_the_version(project, coordinator):
    response = api_as(coordinator).patch(project_url(project.slug), {"guidelines": "Ask short questions."})

    assert response.status_code == 200
    assert (response.data["guidelines"], response.data["guidelines_version"]) == ("Ask short questions.", 2)
    assert response.data["roles"] == ["coordinator"]


# Bad input names the field


def bad_item_patch(annotating_pair, annotator, body: dict[str, Any]):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    url = project_url(annotating_pair.project.slug, f"items/{item.pk}/")
    return api_as(annotator).patch(url, {"version": item.version, **body}, format="json"), item


def test_a_span_past_the_end_of_the_lead_is_refused_naming_its_end(annotating_pair, annotator):
    response, item = bad_item_patch(
        annotating_pair, annotator, {"spans": [{"start": len(LEAD) - 1, "end": len(LEAD) + 4, "text": "。xxxx"}]}
    )

    assert response.status_code == 400
    assert response.data["field"] == "spans[0].end"
    assert f"past the end of the local_lead ({len(LEAD)} code points)" in response.data["detail"]
    assert not item.spans.exists()


def test_a_span_counted_in_utf16_units_is_refused_showing_what_the_offsets_cover(annotating_pair, annotator):
    good = span_of("深水埗")
    utf16 = {**good, "start": good["start"] + 1, "end": good["end"] + 1}  # 𠮶 is two UTF-16 units

    response, item = bad_item_patch(annotating_pair, annotator, {"question": "问题？", "spans": [good, utf16]})

    assert response.status_code == 400
    assert response.data["field"] == "spans[1].text"
    assert "水埗開" in response.data["detail"]
    assert "code points" in response.data["detail"]
    item.refresh_from_db()
    assert (item.question, item.version) == ("", 1)  # nothing of the request was saved


def test_a_span_offset_that_is_not_a_number_is_refused_naming_it(annotating_pair, annotator):
    response, _ = bad_item_patch(annotating_pair, annotator, {"spans": [{"start": "three", "end": 5, "text": "x"}]})

    assert response.status_code == 400
    assert response.data["field"] == "spans[0].start"
    assert response.data["details"] == {"spans[0].start": ["A valid integer is required."]}


def test_an_item_save_without_version_is_refused_naming_version(annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)

    response = api_as(annotator).patch(
        project_url(annotating_pair.project.slug, f"items/{item.pk}/"), {"question": "问题？"}, format="json"
    )

    assert response.status_code == 400
    assert response.data["field"] == "version"


def test_submitting_with_an_empty_question_names_the_item_and_field(annotating_pair, annotator):
    complete_item(annotating_pair, annotator, "深水埗")
    incomplete = complete_item(annotating_pair, annotator, "姓陳")
    qa_item_update(item=incomplete, user=annotator, version=incomplete.version, question="  ")

    response = api_as(annotator).post(project_url(annotating_pair.project.slug, f"pairs/{annotating_pair.pk}/submit/"))

    assert response.status_code == 400
    assert response.data["field"] == "items[2].question"
    assert response.data["details"] == {"items[2].question": ["item 2: the question is empty"]}
    annotating_pair.refresh_from_db()
    assert annotating_pair.status == PagePair.Status.ANNOTATING


def test_creating_a_project_with_an_unknown_language_code_is_refused_naming_the_field(superuser):
    body = {"name": "Klingon", "local_language": "tlh-x", "standard_language": "deu"}

    response = api_as(superuser).post("/api/projects/", body, format="json")

    assert response.status_code == 400
    assert response.data["field"] == "local_language"
    assert "tlh-x" in response.data["detail"]
    assert not Project.objects.filter(name="Klingon").exists()


def test_a_nonexistent_project_slug_answers_404(coordinator):
    response = api_as(coordinator).get(project_url("no-such-project", "pairs/"))

    assert response.status_code == 404
    assert response.data == {"detail": "No such project."}


def test_an_unknown_status_filter_is_refused_naming_status(project, coordinator):
    response = api_as(coordinator).get(project_url(project.slug, "pairs/"), {"status": "lost"})

    assert response.status_code == 400
    assert response.data["field"] == "status"


def test_screening_for_another_reason_without_a_note_is_refused_naming_note(project, annotator):
    pair = factories.pair(project)
    pair_claim_next(project=project, user=annotator)

    response = api_as(annotator).post(
        project_url(project.slug, f"pairs/{pair.pk}/screening/"), {"decision": "other"}, format="json"
    )

    assert response.status_code == 400
    assert response.data["field"] == "note"


def test_negative_activity_seconds_are_refused_naming_seconds(annotating_pair, annotator):
    response = api_as(annotator).post(
        project_url(annotating_pair.project.slug, f"pairs/{annotating_pair.pk}/activity/"),
        {"seconds": -5},
        format="json",
    )

    assert response.status_code == 400
    assert response.data["field"] == "seconds"


def test_adding_an_unknown_user_as_member_is_refused_naming_username(project, coordinator):
    response = api_as(coordinator).post(
        project_url(project.slug, "members/"), {"username": "nobody", "roles": ["annotator"]}, format="json"
    )

    assert response.status_code == 400
    assert response.data["field"] == "username"


def test_an_unknown_role_is_refused_naming_its_position(project, coordinator, outsider):
    response = api_as(coordinator).post(
        project_url(project.slug, "members/"), {"username": "outsider", "roles": ["annotator", "boss"]}, format="json"
    )

    assert response.status_code == 400
    assert response.data["field"] == "roles[1]"
    assert not Membership.objects.filter(project=project, user=outsider).exists()


def test_removing_the_last_coordinator_answers_409_and_keeps_them(project, coordinator):
    response = api_as(coordinator).delete(project_url(project.slug, "members/coordinator/"))

    assert response.status_code == 409
    assert Membership.objects.filter(project=project, user=coordinator, is_coordinator=True).exists()


# Members and projects


def test_coordinator_adds_changes_and_removes_a_member(project, coordinator, outsider):
    client = api_as(coordinator)

    added = client.post(
        project_url(project.slug, "members/"), {"username": "outsider", "roles": ["reviewer"]}, format="json"
    )
    changed = client.patch(
        project_url(project.slug, "members/outsider/"), {"roles": ["annotator", "reviewer"]}, format="json"
    )
    listed = client.get(project_url(project.slug, "members/"))
    removed = client.delete(project_url(project.slug, "members/outsider/"))

    assert (added.status_code, added.data["roles"]) == (200, ["reviewer"])
    assert (changed.status_code, changed.data["roles"]) == (200, ["annotator", "reviewer"])
    assert {"username": "outsider", "roles": ["annotator", "reviewer"]}.items() <= next(
        member for member in listed.data if member["username"] == "outsider"
    ).items()
    assert removed.status_code == 204
    assert not Membership.objects.filter(project=project, user=outsider).exists()


def test_changing_a_user_who_is_not_a_member_answers_404(project, coordinator, outsider):
    response = api_as(coordinator).patch(project_url(project.slug, "members/outsider/"), {"roles": ["annotator"]})

    assert response.status_code == 404


def test_a_user_allowed_to_add_projects_creates_one_and_becomes_its_coordinator(db):
    creator = factories.user("creator")
    creator.user_permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="annotation"))
    body = {"name": "Bavarian Wikipedia", "slug": "bar-de", "local_language": "bar", "standard_language": "deu"}

    response = api_as(creator).post("/api/projects/", body, format="json")

    assert response.status_code == 201, response.data
    assert (response.data["local_wiki"], response.data["standard_wiki"]) == ("bar", "de")
    assert Membership.objects.get(project__slug="bar-de", user=creator).roles == ["coordinator"]


def test_projects_list_shows_only_the_users_projects(project, other_project, annotator, superuser):
    mine = api_as(annotator).get("/api/projects/")
    everything = api_as(superuser).get("/api/projects/")

    assert [p["slug"] for p in mine.data["results"]] == [project.slug]
    assert {p["slug"] for p in everything.data["results"]} == {project.slug, other_project.slug}


# Tokens


def test_a_script_obtains_a_token_and_uses_it(project, annotator):
    client = APIClient()

    obtained = client.post("/api/auth/token/", {"username": "annotator", "password": factories.PASSWORD})
    client.credentials(HTTP_AUTHORIZATION=f"Token {obtained.data['token']}")
    projects = client.get("/api/projects/")

    assert obtained.status_code == 200
    assert ApiToken.objects.get(user=annotator).prefix == obtained.data["token"][:8]
    assert [p["slug"] for p in projects.data["results"]] == [project.slug]


def test_a_wrong_password_gets_no_token(annotator):
    response = APIClient().post("/api/auth/token/", {"username": "annotator", "password": "wrong"})

    assert response.status_code == 400
    assert not ApiToken.objects.filter(user=annotator).exists()


# Who may do what: every endpoint for every kind of user


@pytest.fixture
def world(project, annotating_pair, annotator, outsider) -> dict[str, Any]:
    """The annotator's pair with two complete items (ready to submit) and one more pair in the pool."""
    items = [complete_item(annotating_pair, annotator, evidence) for evidence in ("深水埗", "姓陳")]
    factories.pair(project)
    return {"slug": project.slug, "pair": annotating_pair.pk, "item": items[0].pk, "version": items[0].version}


Body = Callable[[dict[str, Any]], dict[str, Any] | None]
USERS = ["anonymous", "outsider", "annotator", "other_annotator", "reviewer", "coordinator"]
ENDPOINTS: list[tuple[str, str, Body, tuple[int, ...]]] = [
    # method, path, body, statuses in the order of USERS
    ("get", "projects/", lambda w: None, (403, 200, 200, 200, 200, 200)),
    ("post", "projects/", lambda w: {"name": "New", "local_language": "yue", "standard_language": "cmn"},
     (403, 403, 403, 403, 403, 403)),
    ("get", "projects/{slug}/", lambda w: None, (403, 404, 200, 200, 200, 200)),
    ("get", "projects/{slug}/next-steps/", lambda w: None, (403, 404, 200, 200, 200, 200)),
    ("patch", "projects/{slug}/", lambda w: {"name": "Renamed"}, (403, 404, 403, 403, 403, 200)),
    ("delete", "projects/{slug}/", lambda w: None, (403, 404, 403, 403, 403, 204)),
    ("get", "projects/{slug}/members/", lambda w: None, (403, 404, 403, 403, 403, 200)),
    ("post", "projects/{slug}/members/", lambda w: {"username": "outsider", "roles": ["reviewer"]},
     (403, 404, 403, 403, 403, 200)),
    ("patch", "projects/{slug}/members/reviewer/", lambda w: {"roles": ["reviewer", "annotator"]},
     (403, 404, 403, 403, 403, 200)),
    ("delete", "projects/{slug}/members/reviewer/", lambda w: None, (403, 404, 403, 403, 403, 204)),
    ("get", "projects/{slug}/pairs/", lambda w: None, (403, 404, 200, 200, 403, 200)),
    ("get", "projects/{slug}/pairs/{pair}/", lambda w: None, (403, 404, 200, 403, 403, 200)),
    ("delete", "projects/{slug}/pairs/{pair}/", lambda w: None, (403, 404, 403, 403, 403, 204)),
    ("post", "projects/{slug}/queue/next/", lambda w: None, (403, 404, 200, 200, 403, 403)),
    ("post", "projects/{slug}/pairs/{pair}/screening/", lambda w: {"decision": "annotate"},
     (403, 404, 200, 403, 403, 403)),
    ("get", "projects/{slug}/pairs/{pair}/items/", lambda w: None, (403, 404, 200, 403, 403, 200)),
    ("post", "projects/{slug}/pairs/{pair}/items/", lambda w: {"question": "问题？"}, (403, 404, 201, 403, 403, 403)),
    ("get", "projects/{slug}/items/{item}/", lambda w: None, (403, 404, 200, 403, 403, 200)),
    ("patch", "projects/{slug}/items/{item}/", lambda w: {"version": w["version"], "question": "新问题？"},
     (403, 404, 200, 403, 403, 403)),
    ("delete", "projects/{slug}/items/{item}/", lambda w: None, (403, 404, 204, 403, 403, 204)),
    ("get", "projects/{slug}/items/{item}/warnings/", lambda w: None, (403, 404, 200, 403, 403, 200)),
    # The project's local-knowledge check is off here: status "none" to read, nothing to ask for again (409).
    ("get", "projects/{slug}/items/{item}/local-check/", lambda w: None, (403, 404, 200, 403, 403, 200)),
    ("post", "projects/{slug}/items/{item}/local-check/", lambda w: None, (403, 404, 409, 403, 403, 409)),
    ("post", "projects/{slug}/pairs/{pair}/submit/", lambda w: None, (403, 404, 200, 403, 403, 403)),
    ("post", "projects/{slug}/pairs/{pair}/activity/", lambda w: {"seconds": 30}, (403, 404, 204, 403, 403, 403)),
    # 404: nobody in this world skipped the pair (tests/annotation/test_skips_and_counts.py takes one back)
    ("post", "projects/{slug}/pairs/{pair}/skip/undo/", lambda w: None, (403, 404, 404, 404, 403, 403)),
    ("post", "projects/{slug}/pairs/{pair}/give-back/", lambda w: {"reason": "太难"}, (403, 404, 409, 403, 403, 403)),
]  # fmt: skip


@pytest.mark.one_engine  # access rules: the same on both engines
def test_each_endpoint_answers_each_kind_of_user_with_the_expected_status(
    world, annotator, second_annotator, reviewer, coordinator, outsider
):
    users = {"outsider": outsider, "annotator": annotator, "other_annotator": second_annotator}
    users |= {"reviewer": reviewer, "coordinator": coordinator}
    cells = [
        Cell(method, "/api/" + path.format(**world), statuses, body(world))
        for method, path, body, statuses in ENDPOINTS
    ]
    check_api(users, cells, roles=USERS)


def test_a_superuser_sees_any_project_and_may_create_one(world, superuser):
    client = api_as(superuser)
    body = {"name": "Roots", "local_language": "bar", "standard_language": "deu"}

    assert client.get(project_url(world["slug"], "members/")).status_code == 200
    assert client.get(project_url(world["slug"], f"pairs/{world['pair']}/")).status_code == 200
    assert client.post("/api/projects/", body, format="json").status_code == 201
