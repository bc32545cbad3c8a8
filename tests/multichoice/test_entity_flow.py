"""Entity questions end to end over HTTP and the API: import, correct, generate, verify, release."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.services.members import membership_set
from exports.services import release_build_now, release_file_path
from multichoice import entities as services
from multichoice.models import Entity, EntityQuestion
from tests.conftest import api_as
from tests.multichoice.test_entities import ATTRIBUTES, CSV


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def companies(coordinator, reviewer):
    project = services.entity_project_create(
        name="Companies",
        slug="companies",
        language="eng",
        attributes=ATTRIBUTES,
        grouping_fields=["market", "country", "region"],
        seed=5,
        created_by=coordinator,
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    return project


def test_the_pages_import_show_normalisation_correct_and_generate(
    client, companies, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)
    upload = SimpleUploadedFile("companies.csv", CSV.encode())

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("entity_import", args=["companies"]), {"file": upload})
    assert "8 entities imported" in client.get(response.url).content.decode()
    page = client.get(reverse("entity_home", args=["companies"])).content.decode()
    assert "Bilbao, Spain" in page and "(was Bilbao)" in page
    iberdrola = Entity.objects.get(name="Iberdrola")
    data = {"entity": iberdrola.pk, "attribute": "founded", "value": "1901"}
    page = client.post(reverse("entity_correct", args=["companies"]), data, follow=True).content.decode()
    assert "Iberdrola: corrected, founded is now 1901;" in page and "corrected</span>" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("entity_generate", args=["companies"]))
    assert "52 questions generated" in client.get(response.url).content.decode()


def test_a_verifier_swaps_and_accepts_on_the_page(client, companies, reviewer):
    services.entities_import(project=companies, data=CSV.encode(), name="c.csv")
    services.questions_generate(project=companies)
    client.force_login(reviewer)

    response = client.post(reverse("entity_verify_next", args=["companies"]))
    question = EntityQuestion.objects.get(item_id=int(response.url.rstrip("/").rsplit("/", 1)[1]))
    distractor = next(i for i in range(4) if i != question.answer)
    url = reverse("entity_verify", args=["companies", question.item_id])
    client.post(url, {"version": question.version, "decision": "swap", "swap": distractor})
    question = EntityQuestion.objects.select_related("item").get(pk=question.pk)
    client.post(url, {"version": question.version, "decision": "accept", "question": question.question})

    question = EntityQuestion.objects.select_related("item").get(pk=question.pk)
    assert question.status == "accepted" and question.edited


def test_the_api_release_carries_the_four_context_conditions_and_groupings(
    companies, coordinator, reviewer, django_capture_on_commit_callbacks
):
    upload = SimpleUploadedFile("companies.jsonl", b"".join(
        json.dumps(row).encode() + b"\n"
        for row in [
            {"name": n, "description": f"{n} is based in {c}.", "headquarters": c, "founded": y, "key_people": "X",
             "market": "M", "country": "Spain", "region": "Europe"}
            for n, c, y in [("Alpha", "Bilbao", 1900), ("Beta", "Madrid", 1910), ("Gamma", "Vigo", 1920),
                            ("Delta", "Leon", 1930), ("Epsilon", "Soria", 1940)]
        ]
    ))  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        imported = api_as(coordinator).post(
            "/api/projects/companies/entities/import/", {"file": upload}, format="multipart"
        )
    assert imported.status_code == 202, imported.content
    with django_capture_on_commit_callbacks(execute=True):
        generated = api_as(coordinator).post("/api/projects/companies/entities/generate/", {}, format="json")
    assert api_as(coordinator).get(generated.json()["url"]).json()["report"]["result"]["created"] == 20
    question = api_as(reviewer).post("/api/projects/companies/entities/verify/next/").json()
    verified = api_as(reviewer).post(
        f"/api/projects/companies/entities/questions/{question['id']}/",
        {"version": question["version"], "decision": "accept"},
        format="json",
    )
    assert verified.json()["status"] == "accepted"

    release = release_build_now(project=companies, user=coordinator, seed=1)

    assert release.status == "done", release.error
    lines = release_file_path(release, "entity_questions.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    assert len(lines) == 1 and release.counts["entity_questions"] == 1
    assert set(record["contexts"]) == {"none", "perfect", "misleading", "distraction"}
    assert record["groupings"] == {"market": "M", "country": "Spain", "region": "Europe"}
    assert record["options"][record["answer"]] in (record["entity"], record["correct_value"])


def test_a_release_with_splits_has_the_files_its_page_announces_and_an_entity_stays_in_one(
    companies, coordinator, reviewer
):
    services.entities_import(project=companies, data=CSV.encode(), name="companies.csv")
    services.questions_generate(project=companies)
    while (question := services.verification_next(project=companies, user=reviewer)) is not None:
        services.question_verify(question=question, user=reviewer, version=question.version, decision="accept")

    release = release_build_now(project=companies, user=coordinator, seed=4, splits={"train": 60, "test": 40})

    assert release.status == "done", release.error
    read = lambda name: [json.loads(line) for line in release_file_path(release, name).read_text().splitlines()]  # noqa: E731
    everything = read("entity_questions.jsonl")
    by_split = {split: [line for line in everything if line["split"] == split] for split in ("train", "test")}
    assert len(everything) == 52 == sum(len(lines) for lines in by_split.values())
    assert all(line["split"] == split for split, lines in by_split.items() for line in lines)
    assert all(by_split.values())
    entities_in = {split: {line["entity"] for line in lines} for split, lines in by_split.items()}
    assert not entities_in["train"] & entities_in["test"]  # no fact leaks from train into test
    assert release.counts["entity_questions_by_split"] == {split: len(v) for split, v in by_split.items()}
    card = release_file_path(release, "README.md").read_text()
    assert '- split: full\n    path: "entity_questions.jsonl"' in card and "entity_questions/" not in card


def test_an_entity_release_splits_as_previewed_and_every_config_loads(
    client, companies, coordinator, reviewer, tmp_path
):
    from tests.exports.loading import assert_release_loads, rows_by_split

    services.entities_import(project=companies, data=CSV.encode(), name="companies.csv")
    services.questions_generate(project=companies)
    rejected = 0
    while (question := services.verification_next(project=companies, user=reviewer)) is not None:
        decision = "reject" if rejected < 3 else "accept"
        rejected += decision == "reject"
        services.question_verify(
            question=question, user=reviewer, version=question.version, decision=decision, reason="unclear wording"
        )
    client.force_login(coordinator)

    preview = client.get("/api/projects/companies/releases/readiness/?seed=4").json()
    release = release_build_now(project=companies, user=coordinator, seed=4)

    assert release.status == "done", release.error
    sizes = release.counts["entity_questions_by_split"]
    assert sizes == preview["splits"]["sizes"] and sum(sizes.values()) == 49
    assert all(sizes.values()), sizes  # 70/10/20 of 49 questions on 8 entities: no split left empty
    assert preview["splits"]["left_out"] == {"questions not accepted": 3}
    loaded = assert_release_loads(release, tmp_path / "hf")
    assert rows_by_split(loaded["entity_questions"]) == {split: n for split, n in sizes.items() if n}
    card = release_file_path(release, "README.md").read_text(encoding="utf-8")
    assert "Left out of this release: 3 items (questions not accepted 3)." in card
