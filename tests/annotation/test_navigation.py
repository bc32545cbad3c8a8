"""The project bar: grouped by task, each kind's own links, and only the links the member's roles may open."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model

from annotation.access import project_access
from annotation.navigation import project_nav

pytestmark = pytest.mark.django_db

HOMES = {
    "yue-cmn": "/projects/yue-cmn/",
    "doha-val": "/projects/doha-val/validation/",
    "bavaria-trivia": "/projects/bavaria-trivia/trivia/",
    "bavaria-companies": "/projects/bavaria-companies/entities/",
}


@pytest.fixture
def demo(demo_once, db):
    """The demo, made once for this module (`demo_once`); each test's changes are rolled back."""


def bar(username: str, slug: str) -> dict[str, list[str]]:
    user = get_user_model().objects.get(username=username)
    access = project_access(user, slug)
    return {
        group.label: [link.label for link in group.links] for group in project_nav(access.project, access.membership)
    }


def test_a_coordinators_bar_is_four_task_groups_with_members_under_settings(demo):
    groups = bar("coordinator", "yue-cmn")

    assert list(groups) == ["Work", "Review", "Data", "Settings"]
    assert groups["Settings"] == ["Settings", "Members", "Model endpoints", "Local-knowledge check", "Audit log"]
    # the 17 links of the flat bar (after the project's name) are all still there, and Evaluation beside Releases
    # (and, under Review, the LLM judge's checks by people)
    assert sum(len(links) for links in groups.values()) == 20
    assert groups["Review"][-1] == "Judge checks"
    assert groups["Data"][:2] == ["Releases", "Evaluation"]
    for slug in ("doha-val", "bavaria-trivia", "bavaria-companies"):
        assert {"Members", "Model endpoints"} <= set(bar("coordinator", slug)["Settings"])


def test_an_annotator_sees_no_coordinator_or_reviewer_links(demo):
    assert bar("annotator1", "yue-cmn") == {"Work": ["Guidelines", "My items"], "Data": ["Releases"]}
    assert bar("annotator1", "bavaria-trivia") == {"Work": ["Write an item"], "Data": ["Releases"]}
    assert bar("reviewer", "doha-val") == {"Data": ["Releases"]}
    assert bar("reviewer", "bavaria-companies") == {"Review": ["Review queue", "Agreement"], "Data": ["Releases"]}


@pytest.mark.parametrize("slug", list(HOMES))
def test_every_link_in_the_bar_opens_for_the_member_who_sees_it(client, demo, slug):
    for username in ("coordinator", "annotator1", "reviewer"):
        client.force_login(get_user_model().objects.get(username=username))
        page = client.get(HOMES[slug]).content.decode()
        nav = re.search(r'<nav class="crumbs" aria-label="Project">(.*?)</nav>', page, re.S).group(1)
        links = re.findall(r'href="([^"]+)"', nav)

        assert links[0] == HOMES[slug]
        for url in links:
            assert client.get(url).status_code == 200, (username, url)


def test_a_group_of_one_link_is_a_plain_link_and_larger_ones_are_menus(client, demo):
    client.force_login(get_user_model().objects.get(username="coordinator"))
    page = client.get("/projects/yue-cmn/").content.decode()

    assert re.findall(r"<summary>(\w+)</summary>", page) == ["Review", "Data", "Settings"]
    assert '<a href="/projects/yue-cmn/guidelines/">Guidelines</a>' in page
    # the page's own link is marked for assistive technology
    assert 'class="project-home" href="/projects/yue-cmn/" aria-current="page"' in page
