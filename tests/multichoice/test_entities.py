"""Entity questions on a small hand-made set: normalisation, generated pairs, distractors, verification, contexts."""

from __future__ import annotations

import pytest

from annotation.models import QAItem
from annotation.services.members import membership_set
from common.errors import InvalidInput, InvalidState
from multichoice import entities as services
from multichoice.models import Entity, EntityQuestion
from review.models import Judgment, ReviewSlot
from tests import factories

ATTRIBUTES = [
    {
        "key": "headquarters",
        "label": "Headquarters",
        "kind": "city",
        "inductive": "Where is {entity} headquartered?",
        "deductive": "Which company is headquartered in {value}?",
        "statement": "{entity} is headquartered in {value}.",
    },
    {
        "key": "founded",
        "label": "Founding year",
        "kind": "year",
        "inductive": "In which year was {entity} founded?",
        "deductive": "Which company was founded in {value}?",
    },
    {
        "key": "key_people",
        "label": "Key people",
        "kind": "list",
        "inductive": "Who is a key person at {entity}?",
        "deductive": "At which company is {value} a key person?",
        "statement": "{value} is a key person at {entity}.",
    },
]
CSV = """name,description,headquarters,founded,key_people,market,country,region
Iberdrola,"Iberdrola is an energy company in Bilbao, Spain.",Bilbao,c. 1992,Ignacio Galán,Energy,Spain,Europe
Iberia,"Iberia is an airline based in Madrid, Spain.","Madrid, Spain",1927,Marco Sansavini,Airlines,Spain,Europe
Eroski,"Eroski is a retailer in Elorrio, Spain.",Elorrio,1969,Rosa Carabel; Agustín Markaide,Retail,Spain,Europe
Repsol,"Repsol is an oil company in Madrid.","Madrid, Spain",1987,Josu Jon Imaz | Antonio Brufau,Energy,Spain,Europe
Kutxabank,"Kutxabank is a bank in Bilbao, Spain.",Bilbao,2011,Gregorio Villalabeitia,Banking,Spain,Europe
Petronor,"Petronor is a refinery in Muskiz, Spain.",Muskiz,1968,Emiliano López Atxurra,Energy,Spain,Europe
Euskaltel,"Euskaltel is a telecom company in Derio, Spain.",Derio,1995,Xabier Iturbe,Telecom,Spain,Europe
Mondragon,"Mondragon is a cooperative group in Arrasate, Spain.",Arrasate,1956,Iñigo Ucín,Industry,Spain,Europe
"""


@pytest.fixture
def entity_project(coordinator, reviewer):
    project = services.entity_project_create(
        name="Companies",
        slug="companies",
        language="eng",
        attributes=ATTRIBUTES,
        grouping_fields=["market", "country", "region"],
        seed=11,
        created_by=coordinator,
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    services.entities_import(project=project, data=CSV.encode(), name="companies.csv")
    return project


@pytest.mark.parametrize(
    ("kind", "raw", "normalised"),
    [
        ("year", "c. 1992", "1992"),
        ("year", 1927, "1927"),
        ("city", "Bilbao", "Bilbao, Spain"),
        ("city", "Madrid,  Community of Madrid, Spain", "Madrid, Spain"),
        ("list", "Rosa Carabel; Agustín Markaide", ["Rosa Carabel", "Agustín Markaide"]),
        ("list", ["b", "a", "b"], ["b", "a"]),
        ("list", "Josu Jon Imaz |  Antonio  Brufau", ["Josu Jon Imaz", "Antonio Brufau"]),
        ("text", "  two   spaces ", "two spaces"),
    ],
)
def test_values_are_normalised(kind, raw, normalised):
    assert services.normalise(kind, raw, country="Spain") == normalised


def test_the_import_reports_what_normalisation_changed_and_keeps_the_raw_values(entity_project):
    iberdrola = Entity.objects.get(name="Iberdrola")

    assert iberdrola.values == {"headquarters": "Bilbao, Spain", "founded": "1992", "key_people": ["Ignacio Galán"]}
    assert iberdrola.raw["founded"] == "c. 1992"
    assert iberdrola.groupings == {"market": "Energy", "country": "Spain", "region": "Europe"}


def test_a_bad_year_names_the_line_entity_and_field_and_imports_nothing(coordinator):
    project = services.entity_project_create(name="X", slug="x", language="eng", attributes=ATTRIBUTES)
    data = b"name,headquarters,founded,key_people\nA,Bilbao,1990,X\nB,Vigo,long ago,Y\n"

    with pytest.raises(InvalidInput) as error:
        services.entities_import(project=project, data=data, name="e.csv")

    assert "e.csv line 3 (B): founded" in error.value.message
    assert not Entity.objects.filter(project=project).exists()


def test_a_coordinator_correction_is_kept_and_marked(entity_project):
    entity = Entity.objects.get(name="Petronor")

    services.entity_correct(entity=entity, attribute="headquarters", value="Muskiz, Biscay")

    entity.refresh_from_db()
    assert entity.values["headquarters"] == "Muskiz, Biscay" and entity.corrected == ["headquarters"]


def test_every_entity_and_attribute_gets_an_inductive_and_a_deductive_question(entity_project):
    report = services.questions_generate(project=entity_project)

    # Eroski and Repsol have two key people each: one fact per element
    assert report == {"created": (8 + 8 + 10) * 2, "skipped_without_distractors": 0}
    iberdrola = EntityQuestion.objects.filter(entity__name="Iberdrola", attribute="headquarters")
    by_direction = {q.direction: q for q in iberdrola}
    inductive, deductive = by_direction["inductive"], by_direction["deductive"]
    assert inductive.question == "Where is Iberdrola headquartered?"
    assert inductive.options[inductive.answer] == "Bilbao, Spain"
    assert deductive.question == "Which company is headquartered in Bilbao, Spain?"
    assert deductive.options[deductive.answer] == "Iberdrola"
    assert len(inductive.options) == len(deductive.options) == 4


def test_no_distractor_ever_shares_the_correct_value(entity_project):
    services.questions_generate(project=entity_project)
    values = {e.pk: e.values for e in Entity.objects.all()}

    for question in EntityQuestion.objects.all():
        assert len(question.distractors) == 3
        for pk in question.distractors:
            assert question.correct_value not in services.facts(Entity(values=values[pk]), question.attribute)
        assert len(set(question.options)) == 4
    # Kutxabank shares Bilbao with Iberdrola: never a distractor for Iberdrola's headquarters
    kutxabank = Entity.objects.get(name="Kutxabank").pk
    assert all(
        kutxabank not in q.distractors
        for q in EntityQuestion.objects.filter(entity__name="Iberdrola", attribute="headquarters")
    )


def test_distractors_are_the_most_similar_entities(entity_project):
    entities = list(Entity.objects.all())
    iberdrola = next(e for e in entities if e.name == "Iberdrola")

    chosen = services.pick_distractors(iberdrola, entities, "founded", seed=11)

    assert chosen[0].name == "Iberia"  # the closest name


def test_generation_is_deterministic_given_the_seed_and_keeps_existing_questions(entity_project):
    services.questions_generate(project=entity_project)
    first = list(EntityQuestion.objects.order_by("id").values_list("item__question", "options", "answer"))

    assert services.questions_generate(project=entity_project)["created"] == 0
    QAItem.objects.filter(project=entity_project).delete()
    services.questions_generate(project=entity_project)

    assert list(EntityQuestion.objects.order_by("id").values_list("item__question", "options", "answer")) == first


def test_generated_questions_are_qa_items_waiting_in_the_review_queue(entity_project):
    services.questions_generate(project=entity_project)
    question = EntityQuestion.objects.select_related("item").get(
        entity__name="Iberdrola", attribute="founded", direction="inductive"
    )

    item = question.item
    assert (item.project_id, item.author_id, item.status) == (entity_project.pk, None, QAItem.Status.SUBMITTED)
    assert item.question == "In which year was Iberdrola founded?" and item.answer_standard == "1992"
    revision = item.revisions.get()
    assert revision.reason == "generated" and revision.content["options"] == question.options
    assert ReviewSlot.objects.filter(item=item, status="open").count() == entity_project.reviewers_per_item
    assert services.question_counts(entity_project) == {
        "generated": 52,
        "accepted": 0,
        "rejected": 0,
        "value_corrected": 0,
    }


def test_verification_fixes_wording_swaps_a_distractor_and_accepts(entity_project, reviewer):
    services.questions_generate(project=entity_project)
    question = services.verification_next(project=entity_project, user=reviewer)
    distractor_index = next(i for i in range(4) if i != question.answer)
    old = question.options[distractor_index]

    question = services.question_verify(
        question=question, user=reviewer, version=question.version, decision="swap", swap=distractor_index
    )
    assert question.options[distractor_index] != old and question.status == "generated"
    values = {e.pk: e for e in Entity.objects.all()}
    assert all(
        question.correct_value not in services.facts(values[pk], question.attribute) for pk in question.distractors
    )

    question = services.question_verify(
        question=question, user=reviewer, version=question.version, decision="accept", text="Where is it based?"
    )
    assert (question.status, question.question, question.edited) == ("accepted", "Where is it based?", True)
    # every change is a revision of the shared item; the acceptance is the review app's judgment
    revisions = question.item.revisions.order_by("number")
    assert [r.reason for r in revisions] == ["generated", "reviewer_rewrite", "reviewer_rewrite"]
    assert revisions[0].content["options"][distractor_index] == old
    assert revisions[2].question == "Where is it based?"
    assert list(Judgment.objects.filter(item=question.item).values_list("criterion", "verdict", "reviewer")) == [
        ("correct", "pass", reviewer.pk)
    ]


def test_a_rejected_question_is_rejected_and_leaves_the_queue(entity_project, reviewer):
    services.questions_generate(project=entity_project)
    question = services.verification_next(project=entity_project, user=reviewer)

    with pytest.raises(InvalidInput) as error:
        services.question_verify(question=question, user=reviewer, version=question.version, decision="reject")
    assert error.value.field == "reason"

    question = services.question_verify(
        question=question, user=reviewer, version=question.version, decision="reject", reason="Two options are right."
    )

    assert question.status == "rejected" and question.item.status == QAItem.Status.REJECTED
    assert Judgment.objects.get(item=question.item).comment == "Two options are right."
    assert question.item.events.filter(note__contains="Two options are right.").exists()
    assert services.verification_next(project=entity_project, user=reviewer).pk != question.pk
    assert services.question_counts(entity_project)["rejected"] == 1


def test_a_question_another_verifier_holds_is_not_theirs_to_verify(entity_project, reviewer):
    other = factories.user("verifier2")
    membership_set(project=entity_project, user=other, roles={"reviewer"})
    services.questions_generate(project=entity_project)
    held = services.verification_next(project=entity_project, user=reviewer)

    assert services.verification_next(project=entity_project, user=other).pk != held.pk
    with pytest.raises(InvalidState):
        services.question_verify(question=held, user=other, version=held.version, decision="accept")
    assert services.verification_next(project=entity_project, user=reviewer).pk == held.pk  # still the holder's


def test_swapping_the_correct_option_is_refused(entity_project, reviewer):
    services.questions_generate(project=entity_project)
    question = services.verification_next(project=entity_project, user=reviewer)

    with pytest.raises(InvalidInput):
        services.question_verify(
            question=question, user=reviewer, version=question.version, decision="swap", swap=question.answer
        )


def _record(question):
    entities = {e.pk: e for e in Entity.objects.all()}
    return services.question_record(question, entities, {a["key"]: a for a in ATTRIBUTES}), entities


def test_the_perfect_context_states_the_fact_and_misleading_points_to_a_distractor(entity_project):
    services.questions_generate(project=entity_project)
    question = EntityQuestion.objects.get(entity__name="Iberdrola", attribute="headquarters", direction="inductive")

    record, entities = _record(question)

    assert set(record["contexts"]) == {"none", "perfect", "misleading", "distraction"}
    assert record["contexts"]["none"] == ""
    assert record["contexts"]["perfect"] == "Iberdrola is headquartered in Bilbao, Spain."
    target = record["misleading_option"]
    assert target != question.answer
    wrong = question.options[target]
    assert record["contexts"]["misleading"] == f"Iberdrola is headquartered in {wrong}."
    first = entities[question.distractors[0]]
    assert services.facts(first, "headquarters") == [wrong]  # the most similar distractor's value
    assert record["contexts"]["distraction"] == f"{first.name} is headquartered in {wrong}."
    assert record["groupings"] == {"market": "Energy", "country": "Spain", "region": "Europe"}


def test_deductive_questions_get_contexts_of_their_own(entity_project):
    services.questions_generate(project=entity_project)
    question = EntityQuestion.objects.get(entity__name="Iberdrola", attribute="headquarters", direction="deductive")

    record, entities = _record(question)

    assert record["contexts"]["perfect"] == "Iberdrola is headquartered in Bilbao, Spain."
    target = question.options[record["misleading_option"]]
    assert target != "Iberdrola" and target in record["distractor_entities"]
    assert record["contexts"]["misleading"] == f"{target} is headquartered in Bilbao, Spain."  # a distractor named
    other = next(e for e in entities.values() if e.name == target)
    assert record["contexts"]["distraction"] == f"{target} is headquartered in {other.values['headquarters']}."


def test_a_list_attribute_asks_about_one_element_and_no_option_gives_it_away(entity_project):
    services.questions_generate(project=entity_project)
    repsol = EntityQuestion.objects.filter(entity__name="Repsol", attribute="key_people")

    assert sorted(repsol.values_list("direction", "correct_value")) == [
        ("deductive", "Antonio Brufau"),
        ("deductive", "Josu Jon Imaz"),
        ("inductive", "Antonio Brufau"),
        ("inductive", "Josu Jon Imaz"),
    ]
    deductive = repsol.get(direction="deductive", correct_value="Josu Jon Imaz")
    assert deductive.question == "At which company is Josu Jon Imaz a key person?"
    inductive = repsol.get(direction="inductive", correct_value="Antonio Brufau")
    assert inductive.question == "Who is a key person at Repsol?"
    assert "Josu Jon Imaz" not in inductive.options  # the other key person would be right too
    for question in EntityQuestion.objects.filter(attribute="key_people"):
        assert not any(";" in option or "|" in option for option in question.options)  # one name each
    record, _ = _record(inductive)
    assert record["contexts"]["perfect"] == "Antonio Brufau is a key person at Repsol."
    assert Entity.objects.get(name="Repsol").values["key_people"] == ["Josu Jon Imaz", "Antonio Brufau"]


def test_correcting_a_value_flags_the_questions_of_the_old_value(entity_project, coordinator, reviewer):
    services.questions_generate(project=entity_project)
    question = EntityQuestion.objects.get(
        entity__name="Repsol", attribute="key_people", direction="deductive", correct_value="Antonio Brufau"
    )
    services.question_verify(question=question, user=reviewer, version=question.version, decision="accept")
    repsol = Entity.objects.get(name="Repsol")

    services.entity_correct(
        entity=repsol, attribute="key_people", value="Josu Jon Imaz; Manuel Manrique", user=coordinator
    )

    flagged = EntityQuestion.objects.filter(value_corrected_at__isnull=False)
    assert sorted(flagged.values_list("correct_value", "direction")) == [
        ("Antonio Brufau", "deductive"),
        ("Antonio Brufau", "inductive"),
    ]
    assert flagged.get(direction="deductive").item.status == QAItem.Status.ACCEPTED  # released or not
    assert services.question_counts(entity_project)["value_corrected"] == 2
    assert services.questions_generate(project=entity_project)["created"] == 2  # the new element's pair


def test_corrections_and_generation_are_in_the_audit_log(entity_project, coordinator):
    from audit.models import AuditEvent

    entity = Entity.objects.get(name="Petronor")
    services.entity_correct(entity=entity, attribute="founded", value="1969", user=coordinator)
    services.questions_generate(project=entity_project, user=coordinator)

    corrected = AuditEvent.objects.get(project=entity_project, action="entity.corrected")
    assert (corrected.actor_id, corrected.object_id) == (coordinator.pk, entity.pk)
    assert corrected.details == {"attribute": "founded", "before": "1968", "after": "1969", "questions_flagged": 0}
    generated = AuditEvent.objects.get(project=entity_project, action="entity.questions_generated")
    assert generated.details["created"] == 52


def test_a_reimport_updates_entities_keeps_corrections_and_flags_old_questions(entity_project, coordinator):
    services.entity_correct(entity=Entity.objects.get(name="Iberia"), attribute="founded", value="1928")
    services.questions_generate(project=entity_project)
    data = CSV.replace("Ignacio Galán", "Ignacio Galán; Armando Martínez").replace(",1927,", ",1940,")

    report = services.entities_import(project=entity_project, data=data.encode(), name="again.csv", user=coordinator)

    assert report["created"] == 0
    assert report["updated"] == [{"entity": "Iberdrola", "attributes": ["key_people"]}]
    assert report["kept_corrected"] == [{"entity": "Iberia", "attribute": "founded", "file": "1940", "kept": "1928"}]
    assert Entity.objects.get(name="Iberdrola").values["key_people"] == ["Ignacio Galán", "Armando Martínez"]
    assert report["questions_flagged"] == 0  # Ignacio Galán is still a key person: nothing outdated
    assert services.questions_generate(project=entity_project)["created"] == 2  # Armando Martínez's pair

    moved = data.replace(
        'Eroski is a retailer in Elorrio, Spain.",Elorrio', 'Eroski is a retailer in Arrasate.",Arrasate'
    )
    report = services.entities_import(project=entity_project, data=moved.encode(), name="moved.csv")
    eroski = Entity.objects.get(name="Eroski")
    assert EntityQuestion.objects.filter(entity=eroski, value_corrected_at__isnull=False).count() == 2
    # and the questions Eroski is a distractor of that were built from Elorrio (or that Arrasate now answers)
    flagged = EntityQuestion.objects.filter(value_corrected_at__isnull=False).exclude(entity=eroski)
    assert flagged and all(eroski.pk in q.distractors for q in flagged)
    assert report["questions_flagged"] == 2 + flagged.count()


def test_a_name_twice_in_one_file_refuses_it(entity_project):
    data = "name,headquarters,founded,key_people\nA,Bilbao,1990,X\nA,Vigo,1991,Y\n"

    with pytest.raises(InvalidInput) as error:
        services.entities_import(project=entity_project, data=data.encode(), name="twice.csv")

    assert "twice.csv line 3: name: 'A' is also on twice.csv line 2" in error.value.message


def test_an_attribute_error_names_its_position():
    bad = [ATTRIBUTES[0], ATTRIBUTES[1] | {"deductive": "Which company?"}]

    with pytest.raises(InvalidInput) as error:
        services.entity_project_create(name="X", slug="x", language="eng", attributes=bad)

    assert error.value.field == "attributes[2].deductive"
    assert error.value.message.startswith("attributes[2].deductive: the template needs {value}")


def test_an_attribute_defined_by_its_name_gets_a_key_and_a_statement(db):
    project = services.entity_project_create(
        name="X",
        slug="x",
        language="eng",
        attributes=[{"label": "Key people", "kind": "list", "inductive": "Who at {entity}?", "deductive": "{value}?"}],
    )

    attribute = services.entity_settings(project).attributes[0]
    assert (attribute["key"], attribute["statement"]) == ("key_people", "Key people of {entity}: {value}.")
