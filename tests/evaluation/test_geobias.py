"""Geo-bias on an entity-question release: the JSON answer extraction of the study's code, accuracy under the four
context conditions (the study's convention, unparseable left out, beside unparseable counted wrong and its rate),
and answer-change rates against the no-context answer on the same item, by region, each with n and a Wilson
interval equal to statsmodels'."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from statsmodels.stats.proportion import proportion_confint

from annotation.services.members import membership_set
from evaluation import extraction, services
from evaluation.gold import release_gold
from exports.services import release_build_now, release_file_path
from multichoice import entities
from tests.conftest import api_as
from tests.multichoice.test_entities import ATTRIBUTES

CSV = """name,description,headquarters,founded,key_people,market,country,region
Iberdrola,"Iberdrola is an energy company in Bilbao, Spain.",Bilbao,1992,Ignacio Galán,Energy,Spain,Europe
Iberia,"Iberia is an airline based in Madrid, Spain.",Madrid,1927,Marco Sansavini,Airlines,Spain,Europe
Eroski,"Eroski is a retailer in Elorrio, Spain.",Elorrio,1969,Rosa Carabel,Retail,Spain,Europe
Repsol,"Repsol is an oil company in Madrid.",Madrid,1987,Josu Jon Imaz,Energy,Spain,Europe
Adidas,"Adidas makes shoes in Herzogenaurach.",Herzogenaurach,1949,Bjørn Gulden,Sportswear,Germany,Europe
Audi,"Audi makes cars in Ingolstadt.",Ingolstadt,1909,Gernot Döllner,Cars,Germany,Europe
Allianz,"Allianz is an insurer in Munich.",Munich,1890,Oliver Bäte,Insurance,Germany,Europe
Siemens,"Siemens is an engineering company in Munich.",Munich,1847,Roland Busch,Industry,Germany,Europe
"""
ACCEPTED = 16


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def entity_release(coordinator, reviewer, researcher):
    project = entities.entity_project_create(
        name="Companies",
        slug="companies",
        language="eng",
        attributes=ATTRIBUTES,
        grouping_fields=["market", "country", "region"],
        seed=5,
        created_by=coordinator,
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    membership_set(project=project, user=researcher, roles={"researcher"})
    entities.entities_import(project=project, data=CSV.encode(), name="companies.csv")
    entities.questions_generate(project=project)
    for _ in range(ACCEPTED):
        question = entities.verification_next(project=project, user=reviewer)
        entities.question_verify(question=question, user=reviewer, version=question.item.version, decision="accept")
    release = release_build_now(project=project, user=coordinator, seed=1)
    assert release.status == "done", release.error
    return release


def records(release) -> list[dict]:
    text = release_file_path(release, "entity_questions.jsonl").read_text(encoding="utf-8")
    return sorted((json.loads(line) for line in text.splitlines() if line.strip()), key=lambda r: r["id"])


@pytest.mark.parametrize(
    ("reply", "outcome", "letter"),
    [
        ('{"response": "B"}', "found", "B"),
        ('Sure. {"response": " c "} Hope this helps.', "found", "C"),
        ('{"response": "E"}', "not_found", ""),  # not one of four options
        ("B", "not_found", ""),  # no JSON: the study's parser finds nothing
        ('{"response": "A"} or {"response": "B"}', "not_found", ""),  # first { to last }: not one JSON value
        ('{"answer": "A"}', "not_found", ""),
        ("  ", "empty", ""),
    ],
)
def test_the_json_answer_is_read_between_the_first_and_last_brace(reply, outcome, letter):
    found = extraction.json_letter(reply, 4)
    assert (found.outcome, found.text) == (outcome, letter)


def test_the_entity_gold_asks_every_question_under_each_condition_it_has_a_context_for(entity_release):
    gold = release_gold(entity_release)

    assert len(gold.items) == ACCEPTED
    assert set(gold.scenarios) == {"none", "perfect", "misleading", "distraction"}
    assert gold.scenarios["none"] == set(gold.items)
    assert {"attribute", "direction", "country", "region", "market"} <= set(gold.strata)
    first = records(entity_release)[0]
    assert gold.items[first["id"]].gold == "ABCD"[first["answer"]]
    assert gold.items[first["id"]].cluster == first["entity"]


def wilson(k: int, n: int) -> tuple:
    low, high = proportion_confint(k, n, method="wilson")
    return pytest.approx(low), pytest.approx(high)


def test_accuracy_by_condition_and_change_rates_against_no_context_by_region(entity_release, researcher):
    lines = records(entity_release)
    ids = [r["id"] for r in lines]
    right = {r["id"]: "ABCD"[r["answer"]] for r in lines}
    wrong = {i: "ABCD"[("ABCD".index(letter) + 1) % 4] for i, letter in right.items()}
    knows = set(ids[: len(ids) // 2])  # right without context
    garbled = ids[-1]  # a no-context answer that is not JSON (wrong, and unparseable)
    distracted = sorted(knows)[0]  # the one a distractor's text turns wrong
    asked = release_gold(entity_release).scenarios

    def reply(item_id: str, condition: str) -> str:
        if condition == "none":
            if item_id == garbled:
                return f"I would say {wrong[item_id]}"
            letter = right[item_id] if item_id in knows else wrong[item_id]
        elif condition == "perfect":
            letter = right[item_id]
        elif condition == "misleading":
            letter = wrong[item_id]
        else:
            letter = wrong[item_id] if item_id == distracted else right[item_id]
        return json.dumps({"response": letter})

    rows = [
        {"id": i, "scenario": c, "prediction": reply(i, c), "model": "geo"}
        for c in ("none", "perfect", "misleading", "distraction")
        for i in ids
        if i in asked[c]
    ]
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    run = services.evaluation_run_create(
        project=entity_release.project, release=entity_release, user=researcher, data=data, enqueue=False
    )
    run = services.evaluation_run_score(run_id=run.pk)
    assert run.status == "done", run.error
    found = api_as(researcher).get(f"/api/projects/companies/evaluation/runs/{run.pk}/").json()["results"]

    def row(scenario, mode, metric, stratum="all", value="all"):
        return next(
            r
            for r in found
            if (r["scenario"], r["mode"], r["metric"], r["stratum"], r["value"])
            == (scenario, mode, metric, stratum, value)
        )

    n, k = len(ids), len(knows)
    none = row("none", "recommended", "accuracy_json")
    assert (none["n"], none["mean"], none["interval"]) == (n, pytest.approx(k / n), "wilson")
    assert (none["ci_low"], none["ci_high"]) == wilson(k, n)
    parity = row("none", "parity", "accuracy_parsed")  # the study's convention: the unparseable answer left out
    assert (parity["n"], parity["mean"]) == (n - 1, pytest.approx(k / (n - 1)))
    assert (parity["ci_low"], parity["ci_high"]) == wilson(k, n - 1)
    unparseable = row("none", "recommended", "unparseable")
    assert (unparseable["n"], unparseable["mean"]) == (n, pytest.approx(1 / n))
    assert row("perfect", "recommended", "accuracy_json")["mean"] == 1.0

    corrected = row("perfect", "recommended", "change_correction")
    assert (corrected["n"], corrected["mean"]) == (n - k, 1.0)
    assert (corrected["ci_low"], corrected["ci_high"]) == wilson(n - k, n - k)
    misled = row("misleading", "recommended", "change_misleading")
    assert (misled["n"], misled["mean"]) == (k, 1.0)
    distraction = row("distraction", "recommended", "change_distraction")
    assert (distraction["n"], distraction["mean"]) == (k, pytest.approx(1 / k))
    assert (distraction["ci_low"], distraction["ci_high"]) == wilson(1, k)

    by_country: dict[str, list[str]] = defaultdict(list)
    for r in lines:
        by_country[r["groupings"]["country"]].append(r["id"])
    for country, members in by_country.items():
        knew = [i for i in members if i in knows]
        cell = row("none", "recommended", "accuracy_json", "country", country)
        assert (cell["n"], cell["mean"]) == (len(members), pytest.approx(len(knew) / len(members)))
        assert (cell["ci_low"], cell["ci_high"]) == wilson(len(knew), len(members))
        if knew:
            cell = row("misleading", "recommended", "change_misleading", "country", country)
            assert (cell["n"], cell["mean"]) == (len(knew), 1.0)


def test_the_run_page_shows_conditions_and_change_rates_in_words(entity_release, researcher, client):
    lines = records(entity_release)
    data = "".join(
        json.dumps({"id": r["id"], "scenario": c, "prediction": '{"response": "A"}', "model": "m"}) + "\n"
        for r in lines
        for c in ("none", "misleading")
    ).encode()
    run = services.evaluation_run_create(
        project=entity_release.project, release=entity_release, user=researcher, data=data, enqueue=False
    )
    services.evaluation_run_score(run_id=run.pk)
    client.force_login(researcher)

    html = client.get(run.get_absolute_url()).content.decode()

    assert "Entity questions (multiple choice, JSON answer)" in html
    assert "Misleading context" in html and "No context" in html
    assert "Misled: right without context → wrong" in html
    assert "Accuracy of parsed answers (unparseable left out, as the study)" in html
    # an attribute's key is shown as code beside its words, never as the row's words
    assert html.count("key_people") == html.count("<code>key_people</code>")
