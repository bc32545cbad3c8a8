"""A coordinator's correction of an entity value passes the import's checks and flags every question built from
the old value, the entity's own and those it is a distractor of (over HTTP and the API, as people use them)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from multichoice import entities as services
from multichoice.models import Entity, EntityQuestion
from tests.conftest import api_as
from tests.multichoice.test_entities import entity_project  # noqa: F401  (the fixture)


def correct(coordinator, entity: Entity, attribute: str, value: str):
    return api_as(coordinator).post(
        f"/api/projects/{entity.project.slug}/entities/correct/",
        {"entity": entity.pk, "attribute": attribute, "value": value},
        format="json",
    )


def test_a_blank_correction_on_the_page_is_refused_and_erases_nothing(client, entity_project, coordinator):  # noqa: F811
    client.force_login(coordinator)
    iberia = Entity.objects.get(name="Iberia")
    home = client.get(reverse("entity_home", args=[entity_project.slug])).content.decode()
    assert 'name="value" required' in home

    page = client.post(
        reverse("entity_correct", args=[entity_project.slug]),
        {"entity": iberia.pk, "attribute": "key_people", "value": "   "},
        follow=True,
    ).content.decode()

    assert "a correction cannot erase a value" in page
    iberia.refresh_from_db()
    assert iberia.values["key_people"] == ["Marco Sansavini"] and iberia.corrected == []


@pytest.mark.parametrize(
    ("attribute", "typed", "stored"),
    [("founded", "c. 1990", "1990"), ("headquarters", "Vigo", "Vigo, Spain"), ("key_people", "A |  B ;A", ["A", "B"])],
)
def test_a_correction_is_normalised_as_an_import_is(entity_project, coordinator, attribute, typed, stored):  # noqa: F811
    response = correct(coordinator, Entity.objects.get(name="Iberia"), attribute, typed)

    assert response.status_code == 200, response.content
    assert response.json()["values"][attribute] == stored


def test_a_correction_the_attribute_kind_refuses_changes_nothing(entity_project, coordinator):  # noqa: F811
    repsol = Entity.objects.get(name="Repsol")

    response = correct(coordinator, repsol, "founded", "nineteen eighty-seven")

    assert response.status_code == 400 and "no four-digit year" in response.json()["detail"]
    repsol.refresh_from_db()
    assert repsol.values["founded"] == "1987" and repsol.corrected == []


def test_a_correction_flags_the_deductive_questions_its_entity_would_now_also_answer(
    entity_project,  # noqa: F811
    coordinator,
):
    services.questions_generate(project=entity_project)
    question = next(
        q
        for q in EntityQuestion.objects.filter(attribute="headquarters", direction="deductive").order_by("pk")
        if q.distractors
    )
    distractor = Entity.objects.get(pk=question.distractors[0])

    correct(coordinator, distractor, "headquarters", question.correct_value)

    question.refresh_from_db()
    assert question.value_corrected_at is not None and distractor.name in question.value_corrected_to
    detail = api_as(coordinator).get(f"/api/projects/{entity_project.slug}/entities/questions/{question.item_id}/")
    assert detail.json()["value_corrected"] is True


def test_a_correction_flags_the_inductive_questions_whose_option_it_brought(entity_project, coordinator):  # noqa: F811
    services.questions_generate(project=entity_project)
    iberia = Entity.objects.get(name="Iberia")
    brought = [
        q
        for q in EntityQuestion.objects.filter(attribute="key_people", direction="inductive")
        if iberia.pk in q.distractors and "Marco Sansavini" in q.options
    ]
    assert brought  # Iberia's one key person is an option of other companies' questions

    correct(coordinator, iberia, "key_people", "Javier Sánchez-Prieto")

    flagged = EntityQuestion.objects.filter(pk__in=[q.pk for q in brought], value_corrected_at__isnull=False)
    assert flagged.count() == len(brought)
    assert EntityQuestion.objects.filter(entity=iberia, value_corrected_at__isnull=False).count() == 2  # its own
