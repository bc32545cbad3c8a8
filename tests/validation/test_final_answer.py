"""The coordinator chooses which revision is the final answer: the imported one or a validator's edit."""

from __future__ import annotations

from django.urls import reverse

from tests.conftest import api_as
from validation import services
from validation.models import FinalAnswerChoice, ValidationItem

EDIT = "The Arabian oryx, Qatar's national animal."


def edited_oryx(project, reviewer) -> ValidationItem:
    """The oryx item, whose answer the validator edited (revision 2)."""
    services.validation_settings_update(project=project, tasks=["answer_edit"])
    while (slot := services.validation_claim_next(project=project, user=reviewer)) is not None:
        data = {"answer": EDIT} if slot.item.validation.data_id == "1" else {}
        services.validation_submit(slot=slot, user=reviewer, version=slot.version, data=data)
    return ValidationItem.objects.get(project=project, data_id="1")


def test_the_coordinator_chooses_the_original_answer_on_the_item_page(imported, reviewer, coordinator, client):
    oryx = edited_oryx(imported, reviewer)
    client.force_login(coordinator)
    page = reverse("validation_item", args=[imported.slug, oryx.item_id])
    assert "the latest revision until a coordinator chooses one" in client.get(page).content.decode()

    response = client.post(
        reverse("validation_final_answer", args=[imported.slug, oryx.item_id]), {"revision": "1", "note": "unsourced"}
    )

    assert response.status_code == 302 and response["Location"] == page
    choice = FinalAnswerChoice.objects.get(item_id=oryx.item_id)
    assert (choice.revision.number, choice.chosen_by, choice.note) == (1, coordinator, "unsourced")
    html = client.get(page).content.decode()
    assert f'dir="{imported.standard.direction}" id="final-answer">The Arabian oryx.</span>' in html
    assert f"revision 1, chosen by {coordinator.username} (unsourced)" in html


def test_choices_are_kept_and_the_latest_counts_through_the_api(imported, reviewer, coordinator):
    oryx = edited_oryx(imported, reviewer)
    client = api_as(coordinator)
    url = f"/api/projects/{imported.slug}/validation/items/{oryx.item_id}/final-answer/"

    first = client.post(url, {"revision": 1}, format="json")
    second = client.post(url, {"revision": 2, "note": "the edit is on the page"}, format="json")

    assert first.status_code == second.status_code == 200
    assert first.data["final_answer"]["answer"] == "The Arabian oryx."
    assert (second.data["final_answer"]["revision"], second.data["final_answer"]["answer"]) == (2, EDIT)
    assert second.data["final_answer"]["chosen"] is True
    assert list(FinalAnswerChoice.objects.filter(item_id=oryx.item_id).values_list("revision__number", flat=True)) == [
        2,
        1,
    ]  # newest first; nothing is overwritten
    detail = client.get(f"/api/projects/{imported.slug}/validation/items/{oryx.item_id}/").data
    assert detail["final_answer"]["revision"] == 2


def test_a_revision_the_item_does_not_have_is_refused_naming_the_ones_it_has(imported, reviewer, coordinator):
    oryx = edited_oryx(imported, reviewer)

    response = api_as(coordinator).post(
        f"/api/projects/{imported.slug}/validation/items/{oryx.item_id}/final-answer/", {"revision": 7}, format="json"
    )

    assert response.status_code == 400
    assert response.data["detail"] == f"revision: item {oryx.item_id} has no revision 7; it has [1, 2]."
    assert not FinalAnswerChoice.objects.exists()


def test_a_merged_duplicate_gets_no_final_answer(imported, coordinator):
    group = services.duplicate_groups(imported)[0]
    duplicate = group["duplicates"][0]
    services.validation_item_merge(project=imported, keep=group["keep"], duplicate=duplicate, user=coordinator)

    response = api_as(coordinator).post(
        f"/api/projects/{imported.slug}/validation/items/{duplicate.item_id}/final-answer/",
        {"revision": 1},
        format="json",
    )

    assert response.status_code == 409 and "merged or removed" in response.data["detail"]
