"""Each role lands on what it does next, on the project page of every project kind (demo_setup's projects)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Project
from annotation.services.members import membership_set
from review.models import Judgment

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(demo_once, db):
    """The demo, made once for this module (`demo_once`); each test's changes are rolled back."""


def page_as(client, username: str, url: str, **kwargs) -> str:
    client.force_login(get_user_model().objects.get(username=username))
    response = client.get(url, **kwargs)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def step(page: str, key: str) -> str:
    """The text of one next-step card, tags stripped and spaces squeezed."""
    match = re.search(rf'<div class="card next-step" id="step-{key}">(.*?)\n  </div>', page, re.S)
    assert match, f"no step {key}"
    return " ".join(re.sub(r"<[^>]+>", " ", match.group(1)).split())


def steps(page: str) -> list[str]:
    return re.findall(r'id="step-([\w-]+)"', page)


def test_an_annotator_lands_on_next_pair_with_counts_and_the_reviewers_reason(client, demo):
    page = page_as(client, "annotator1", "/projects/yue-cmn/")

    assert steps(page) == ["next-pair"]
    card = step(page, "next-pair")
    assert "Next pair" in card
    assert "4 pairs waiting for you" in card and "0 of yours in progress" in card
    assert "1 item of yours needs a rewrite" in card
    assert "Stand-alone validity: Which dish? Name the 缽仔糕 so the question stands on its own." in card
    flagged = Judgment.objects.get(item__project__slug="yue-cmn", verdict="flag").item
    assert f'href="/projects/yue-cmn/items/{flagged.pk}/rewrite/"' in page
    assert 'lang="cmn"' in page  # the question is shown in its language

    other = step(page_as(client, "annotator2", "/projects/yue-cmn/"), "next-pair")
    assert "1 of yours in progress" in other and "0 items of yours need a rewrite" in other


def test_a_reviewer_lands_on_review_next_with_the_count_waiting_for_them(client, demo):
    page = page_as(client, "reviewer", "/projects/bar-deu/")

    assert steps(page) == ["review-next"]
    assert "2 items waiting for you" in step(page, "review-next")
    assert 'action="/projects/bar-deu/review/next/"' in page


def test_a_coordinator_lands_on_the_dashboard(client, demo):
    page = page_as(client, "coordinator2", "/projects/bar-deu/")

    assert steps(page) == ["open-dashboard"]
    assert "2 items in review" in step(page, "open-dashboard")
    assert 'href="/projects/bar-deu/dashboard/"' in page
    assert 'id="next-pair"' not in page


def test_a_person_with_several_roles_sees_each_of_their_next_actions(client, demo):
    project = Project.objects.get(slug="yue-cmn")
    membership_set(
        project=project,
        user=get_user_model().objects.get(username="coordinator2"),
        roles={"coordinator", "annotator", "reviewer"},
    )
    page = page_as(client, "coordinator2", "/projects/yue-cmn/")
    assert steps(page) == ["next-pair", "review-next", "open-dashboard"]


@pytest.mark.parametrize(
    ("slug", "home"),
    [("doha-val", "validation/"), ("bavaria-trivia", "trivia/"), ("bavaria-companies", "entities/")],
)
def test_every_kind_has_its_own_project_page(client, demo, slug, home):
    client.force_login(get_user_model().objects.get(username="annotator1"))
    response = client.get(f"/projects/{slug}/")
    assert response.status_code == 302 and response["Location"] == f"/projects/{slug}/{home}"
    assert Project.objects.get(slug=slug).get_absolute_url() == f"/projects/{slug}/{home}"


def test_a_validator_lands_on_validate_next_with_the_items_left(client, demo):
    page = page_as(client, "reviewer", "/projects/doha-val/validation/")

    assert steps(page) == ["validation-next"]
    assert "4 items left" in step(page, "validation-next")
    assert "Next pair" not in page and "Standard Arabic" not in page
    assert "tasks: Question validation, Location relevance" in page


def test_trivia_writers_translators_and_reviewers_each_see_their_next_step(client, demo):
    writer = page_as(client, "annotator1", "/projects/bavaria-trivia/trivia/")
    assert steps(writer) == ["trivia-write", "trivia-translate-next"]
    assert "Next pair" not in writer and "pairs waiting" not in writer
    assert "1 of yours sent back" in step(writer, "trivia-write")
    assert "Say which Kirta" in step(writer, "trivia-write")
    # annotator1 wrote two of the three accepted items: one (annotator2's Maibaum) waits for them to translate
    assert "1 item waiting for a translator" in step(writer, "trivia-translate-next")
    assert "Written in German, translated into English" in writer

    reviewer = page_as(client, "reviewer", "/projects/bavaria-trivia/trivia/")
    assert steps(reviewer) == ["trivia-review-next"]
    assert "2 items waiting for you" in step(reviewer, "trivia-review-next")

    coordinator = page_as(client, "coordinator", "/projects/bavaria-trivia/trivia/")
    assert steps(coordinator) == ["trivia-problems-step"]


def test_an_entity_verifier_lands_on_verify_next(client, demo):
    page = page_as(client, "reviewer", "/projects/bavaria-companies/entities/")

    assert steps(page) == ["entity-verify-next"]
    # founding years (6 x 2 directions) and one per key person (8 x 2; BMW and Munich Re have two), less the 2
    # decided; headquarters have too few cities (3) for three distractors
    assert "26 questions waiting for you" in step(page, "entity-verify-next")
    coordinator = page_as(client, "coordinator", "/projects/bavaria-companies/entities/")
    assert "1 verified" in step(coordinator, "entity-release-step")


@pytest.mark.parametrize(
    ("url", "most"),
    [
        ("/projects/yue-cmn/", 13),
        ("/projects/doha-val/validation/", 14),
        ("/projects/bavaria-trivia/trivia/", 16),
        ("/projects/bavaria-companies/entities/", 12),  # with the import and generation jobs running now
    ],
)
def test_the_landing_page_of_a_member_with_every_role_takes_a_fixed_number_of_queries(
    client, demo, django_assert_max_num_queries, url, most
):
    user = get_user_model().objects.get(username="coordinator2")
    for project in Project.objects.all():
        membership_set(project=project, user=user, roles={"coordinator", "annotator", "reviewer"})
    client.force_login(user)
    with django_assert_max_num_queries(most):
        assert client.get(url).status_code == 200


def test_the_api_gives_the_same_next_steps(demo):
    from tests.conftest import api_as

    response = api_as(get_user_model().objects.get(username="annotator1")).get("/api/projects/yue-cmn/next-steps/")

    assert response.status_code == 200
    (step,) = response.json()
    assert (step["key"], step["title"], step["post"]) == ("next-pair", "Next pair", True)
    assert step["url"] == "/projects/yue-cmn/next/"
    assert {"count": 4, "label": "pairs waiting for you"} in step["facts"]
    (rewrite,) = step["rewrites"]
    assert rewrite["lang"] == "cmn" and rewrite["reasons"][0].startswith("Stand-alone validity: Which dish?")
