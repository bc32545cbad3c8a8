"""Each project kind's screens, words and files are its own: the same shared page, rendered for a project of
each kind, shows that kind's menu, columns and words and none of Wikipedia QA's."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Project
from annotation.services.members import membership_set
from exports.services import release_build_now, release_file_path
from multichoice.entities import entity_project_create
from multichoice.services.items import trivia_item_create
from multichoice.services.projects import trivia_project_create, trivia_settings
from multichoice.services.reviews import trivia_review
from multichoice.services.translation import translation_claim_next, translation_submit
from tests import factories
from validation.services import validation_project_create

ATTRIBUTES = [
    {"key": "founded", "label": "Founding year", "kind": "year",
     "inductive": "In which year was {entity} founded?", "deductive": "Which company was founded in {value}?"},
]  # fmt: skip
WIKIPEDIA_MENU = ("Pairs", "Collect", "Labels", "Dashboard")


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def kinds_projects(coordinator, annotator, reviewer):
    """A project of every kind, the same people in each."""
    projects = {
        Project.Kind.WIKIPEDIA_QA: factories.project(coordinator, slug="yue-qa"),
        Project.Kind.VALIDATION: validation_project_create(name="Doha check", slug="doha", language="arb"),
        Project.Kind.TRIVIA: trivia_project_create(
            name="Basque trivia", slug="eus-trivia", source_language="eus", target_language="arb",
            categories=["Geografia"], created_by=coordinator,
        ),
        Project.Kind.ENTITY_QA: entity_project_create(
            name="Companies", slug="companies", language="eng", attributes=ATTRIBUTES
        ),
    }  # fmt: skip
    for project in projects.values():
        membership_set(project=project, user=coordinator, roles={"coordinator"})
        membership_set(project=project, user=annotator, roles={"annotator"})
        membership_set(project=project, user=reviewer, roles={"reviewer"})
    return projects


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_releases_page_of_each_kind_shows_its_own_menu_and_columns(kinds_projects, coordinator):
    client = _client(coordinator)
    columns = {
        Project.Kind.WIKIPEDIA_QA: ["Lead QAs", "Document QAs"],
        Project.Kind.VALIDATION: ["QA pairs"],
        Project.Kind.TRIVIA: ["Trivia items"],
        Project.Kind.ENTITY_QA: ["Questions"],
    }
    for kind, project in kinds_projects.items():
        html = client.get(reverse("release_list", args=[project.slug])).content.decode()
        head = html.split('<table class="table" id="releases">', 1)[1].split("</thead>", 1)[0]
        for heading in columns[kind]:
            assert f">{heading}</th>" in head, kind
        others = {h for k, hs in columns.items() if k != kind for h in hs} - set(columns[kind])
        assert not any(f">{heading}</th>" in head for heading in others), kind
        wikipedia = kind == Project.Kind.WIKIPEDIA_QA
        for label in WIKIPEDIA_MENU:
            assert (f">{label}</a>" in html) is wikipedia, (kind, label)
        assert ("Prompt templates and license" in html) is wikipedia, kind
    validation = client.get(reverse("release_list", args=["doha"])).content.decode()
    assert ">Validation settings</a>" in validation and ">Seed queries</a>" in validation


def test_wikipedia_screens_are_no_part_of_other_kinds(kinds_projects, coordinator):
    client = _client(coordinator)
    pages = ["pair_list", "collection_start", "import_start", "label_list", "adjudication", "dashboard",
             "project_settings", "item_list"]  # fmt: skip
    for kind, project in kinds_projects.items():
        for name in pages:
            status = client.get(reverse(name, args=[project.slug])).status_code
            assert status == (200 if kind == Project.Kind.WIKIPEDIA_QA else 404), (kind, name)


def test_the_entity_review_queue_and_history_use_the_kind_s_words(kinds_projects, coordinator, reviewer):
    from multichoice import entities

    project = kinds_projects[Project.Kind.ENTITY_QA]
    data = b"name,founded\nAdidas,1949\nPuma,1948\nAudi,1909\nAllianz,1890\n"
    entities.entities_import(project=project, data=data, name="companies.csv")
    entities.questions_generate(project=project)
    html = _client(reviewer).get(reverse("review_queue", args=[project.slug])).content.decode()
    assert "Lead-section QA" not in html
    assert "<th>Entity</th><th>Direction</th>" in html and "Entity → attribute" in html
    assert "Review the next question" in html


def test_the_trivia_history_shows_candidates_not_answers_and_evidence(kinds_projects, annotator, reviewer):
    project = kinds_projects[Project.Kind.TRIVIA]
    item = trivia_item_create(
        project=project, user=annotator, question="Non dago Atxondo?",
        candidates=["Bizkaian", "Gipuzkoan", "Nafarroan"], answer=1,
        subset="local", category="Geografia", difficulty="easy",
    )  # fmt: skip
    html = _client(reviewer).get(reverse("item_history", args=[project.slug, item.item_id])).content.decode()
    assert "Lead-section QA" not in html and "Evidence" not in html and "Answer <small" not in html
    assert "Candidates (✓ correct)" in html and "✓ Gipuzkoan" in html
    assert 'lang="eus" dir="ltr"' in html


def test_trivia_reviewers_per_item_are_on_the_trivia_settings_page(kinds_projects, coordinator):
    project = kinds_projects[Project.Kind.TRIVIA]
    client = _client(coordinator)
    page = client.get(reverse("trivia_settings", args=[project.slug])).content.decode()
    assert 'name="reviewers_per_item"' in page
    version = trivia_settings(project).version
    criteria = "\n".join(f"{c['key']} | {c['label']} | {c.get('help', '')}" for c in project.review_criteria)
    response = client.post(
        reverse("trivia_settings", args=[project.slug]),
        {"version": version, "categories": "Geografia", "criteria": criteria, "reviewers_per_item": "2"},
    )
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.reviewers_per_item == 2


def test_the_home_list_shows_each_kind_s_own_count(kinds_projects, coordinator, annotator):
    factories.pair(kinds_projects[Project.Kind.WIKIPEDIA_QA])
    trivia_item_create(
        project=kinds_projects[Project.Kind.TRIVIA], user=annotator, question="Non?", candidates=["a", "b", "c"],
        answer=0, subset="local", category="Geografia", difficulty="easy",
    )  # fmt: skip
    html = _client(coordinator).get(reverse("home")).content.decode()
    assert "Page pairs" not in html
    for text in ("1 page pair", "0 QA pairs", "1 trivia item", "0 entities"):
        assert f'<td class="num project-size">{text}</td>' in html, text


def test_manifests_of_other_kinds_carry_no_wikipedia_settings_or_prompt_templates(
    kinds_projects, coordinator, annotator, reviewer
):
    project = kinds_projects[Project.Kind.TRIVIA]
    item = trivia_item_create(
        project=project, user=annotator, question="Non?", candidates=["a", "b", "c"], answer=0, subset="local",
        category="Geografia", difficulty="easy",
    )  # fmt: skip
    trivia_review(item=item, user=reviewer, criteria={c["key"]: True for c in project.review_criteria})
    release = release_build_now(project=project, user=coordinator, seed=1)
    manifest = json.loads(release_file_path(release, "manifest.json").read_text(encoding="utf-8"))
    text = json.dumps(manifest)
    assert "prompt_templates" not in manifest["release"]
    for key in ("local_wiki", "standard_wiki", "lead_qa_min", "collect_document_qa", "topics", "regions"):
        assert f'"{key}"' not in text, key
    assert manifest["project"]["kind"] == "trivia"
    assert manifest["project"]["settings"]["categories"] == ["Geografia"]


def test_the_trivia_write_form_marks_no_candidate_and_keeps_each_label_with_its_field(kinds_projects, annotator):
    import re

    project = kinds_projects[Project.Kind.TRIVIA]
    html = _client(annotator).get(reverse("trivia_item_new", args=[project.slug])).content.decode()
    form = html.split('id="trivia-item-form"', 1)[1].split("</form>", 1)[0]
    assert " checked" not in form  # nobody's answer is chosen for them
    for name in ("category", "subset", "difficulty"):
        cell = re.search(rf'<div class="field"><label for="id_{name}">[^<]+</label>\s*<select id="id_{name}"', form)
        assert cell is not None, name  # the label and its menu are one grid cell: no label shifts onto another menu
    assert 'name="question" rows="3" required lang="eus" dir="ltr"' in form


def test_an_arabic_translation_is_typed_and_shown_right_to_left(kinds_projects, annotator, second_annotator, reviewer):
    project = kinds_projects[Project.Kind.TRIVIA]
    membership_set(project=project, user=second_annotator, roles={"annotator"})
    item = trivia_item_create(
        project=project, user=annotator, question="Non?", candidates=["a", "b", "c"], answer=0, subset="local",
        category="Geografia", difficulty="easy",
    )  # fmt: skip
    trivia_review(item=item, user=reviewer, criteria={c["key"]: True for c in project.review_criteria})
    claimed = translation_claim_next(project=project, user=second_annotator)
    page = _client(second_annotator).get(reverse("trivia_translate", args=[project.slug, claimed.item_id]))
    html = page.content.decode()
    assert '<textarea name="target_question" rows="2" lang="arb" dir="rtl"' in html
    assert 'name="target0" value="" lang="arb" dir="rtl"' in html
    translation_submit(
        item=claimed, user=second_annotator, target_question="أين؟", target_candidates=["أ", "ب", "ج"],
        problem_tags=[], problem_note="",
    )  # fmt: skip
    shown = _client(reviewer).get(reverse("trivia_item", args=[project.slug, claimed.item_id])).content.decode()
    assert '<h3 lang="arb" dir="rtl">أين؟</h3>' in shown
