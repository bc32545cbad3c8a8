"""*Gold looks wrong* on an item's drill-down: the item goes back to review through the review app, with the note
and the run recorded, and the drill-down shows it flagged."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import ItemEvent, QAItem, QAItemRevision
from evaluation.models import GoldFlag
from review.models import ReviewSlot
from tests.conftest import api_as
from tests.evaluation.conftest import predictions
from tests.evaluation.test_runs import scored


@pytest.fixture
def bar_run(bar_world, django_capture_on_commit_callbacks):
    api = api_as(bar_world["researcher"])
    oracle = predictions(bar_world["release"], lambda line: f"<answer>{line['answer_standard']}</answer>")
    run = scored(api, "bar-deu", oracle, django_capture_on_commit_callbacks)
    item = QAItem.objects.filter(project=bar_world["project"]).order_by("pk").first()
    return {**bar_world, "api": api, "run": run["id"], "item": item, "release_item": f"bar-deu-q{item.pk}"}


def test_the_drill_down_shows_question_gold_and_every_scenarios_answer(client, bar_run):
    client.force_login(bar_run["researcher"])

    response = client.get(reverse("evaluation_item", args=["bar-deu", bar_run["run"], bar_run["release_item"]]))

    page = response.content.decode()
    assert response.status_code == 200
    assert bar_run["item"].question in page and bar_run["item"].answer_standard in page
    for scenario in ("Question only", "With the standard lead", "With the local lead", "With both leads"):
        assert scenario in page
    assert 'id="gold-flag-submit"' in page and "Accepted" in page


def test_gold_looks_wrong_sends_the_accepted_item_back_to_review_with_the_note_and_the_run(client, bar_run):
    client.force_login(bar_run["researcher"])
    item, run = bar_run["item"], bar_run["run"]
    url = reverse("evaluation_gold_flag", args=["bar-deu", run, bar_run["release_item"]])
    revisions = item.revisions.count()

    response = client.post(
        url, {"note": "Munich is the capital of Bavaria, not of 'Landeshauptstadt'"}, HTTP_HX_REQUEST="true"
    )

    assert response.status_code == 200
    assert 'id="gold-flag-done"' in response.content.decode()
    item.refresh_from_db()
    assert item.status == QAItem.Status.SUBMITTED
    revision = item.revisions.order_by("-number").first()
    assert (item.revisions.count(), revision.reason) == (revisions + 1, QAItemRevision.Reason.GOLD_FLAGGED)
    assert ReviewSlot.objects.filter(item=item, revision=revision, status=ReviewSlot.Status.OPEN).exists()
    event = ItemEvent.objects.get(item=item, action=ItemEvent.Action.GOLD_FLAGGED)
    assert (event.from_status, event.to_status, event.actor) == ("accepted", "submitted", bar_run["researcher"])
    assert f"evaluation run {run}, release v1" in event.note and "capital of Bavaria" in event.note
    flag = GoldFlag.objects.get()
    assert (flag.run_id, flag.item_id, flag.qa_item, flag.event) == (run, bar_run["release_item"], item, event)

    page = client.get(reverse("evaluation_item", args=["bar-deu", run, bar_run["release_item"]])).content.decode()
    assert 'id="gold-flags"' in page and "capital of Bavaria" in page and "In review" in page


def test_the_api_flags_an_item_in_review_again_without_a_second_round_and_refuses_an_empty_note(bar_run):
    api, run, item = bar_run["api"], bar_run["run"], bar_run["item"]
    path = f"/api/projects/bar-deu/evaluation/runs/{run}/items/{bar_run['release_item']}/"

    assert api.post(path + "gold-flags/", {"note": "  "}, format="json").status_code == 400
    first = api.post(path + "gold-flags/", {"note": "wrong city"}, format="json")
    slots = ReviewSlot.objects.filter(item=item).count()
    second = api.post(path + "gold-flags/", {"note": "still wrong"}, format="json")

    assert (first.status_code, second.status_code) == (201, 201), second.json()
    assert first.json()["item_status"] == "submitted" and first.json()["run"] == run
    assert ReviewSlot.objects.filter(item=item).count() == slots  # already in review: only the note is added
    assert ItemEvent.objects.filter(item=item, action=ItemEvent.Action.GOLD_FLAGGED).count() == 2
    shown = api.get(path).json()
    assert [flag["note"] for flag in shown["flags"]] == ["still wrong", "wrong city"]
    assert shown["gold"] == item.answer_standard and shown["item_status"] == "submitted"
    assert {p["scenario"] for p in shown["predictions"]} == {
        "question_only",
        "standard_lead",
        "local_lead",
        "both_leads",
    }


def test_a_rejected_item_is_not_flagged_and_an_unknown_item_is_404(bar_run):
    api, run, item = bar_run["api"], bar_run["run"], bar_run["item"]
    QAItem.objects.filter(pk=item.pk).update(status=QAItem.Status.REJECTED)
    path = f"/api/projects/bar-deu/evaluation/runs/{run}/items/"

    refused = api.post(path + f"{bar_run['release_item']}/gold-flags/", {"note": "wrong"}, format="json")

    assert refused.status_code == 409 and "rejected" in refused.json()["detail"].lower()
    assert not GoldFlag.objects.exists()
    assert api.get(path + "bar-deu-q999999/").status_code == 404
    assert api.post(path + "bar-deu-q999999/gold-flags/", {"note": "x"}, format="json").status_code == 404


def test_the_page_form_without_javascript_redirects_and_an_error_is_shown_in_the_form(client, bar_run):
    client.force_login(bar_run["researcher"])
    url = reverse("evaluation_gold_flag", args=["bar-deu", bar_run["run"], bar_run["release_item"]])

    empty = client.post(url, {"note": ""})
    done = client.post(url, {"note": "wrong"})

    assert empty.status_code == 400 and 'id="gold-flag-error"' in empty.content.decode()
    assert done.status_code == 302 and done["Location"].endswith(f"/items/{bar_run['release_item']}/")


def test_an_item_id_with_a_slash_has_its_page(bar_run):
    from evaluation.models import Prediction

    Prediction.objects.create(
        run_id=bar_run["run"], item_id="eu/q1", item_kind="trivia", scenario="eus", model="m", prediction="A"
    )
    url = reverse("evaluation_item", args=["bar-deu", bar_run["run"], "eu/q1"])

    assert url.endswith("/items/eu/q1/")
    shown = bar_run["api"].get(f"/api/projects/bar-deu/evaluation/runs/{bar_run['run']}/items/eu/q1/").json()
    assert shown["item_id"] == "eu/q1" and shown["record"] is None and not shown["can_flag"]
