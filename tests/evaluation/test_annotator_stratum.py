"""The annotator stratum of a Wikipedia QA run: each released item's author as the platform records them, named
as pages name people (full name, else username, never an e-mail address), an item whose author is gone counted in
a named unknown cell, all authors read in one query."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.services.members import membership_set
from evaluation import annotators, services
from evaluation.gold import release_gold
from exports import services as releases
from exports.models import Release
from tests import factories
from tests.conftest import api_as
from tests.evaluation.conftest import predictions, prompt_lines
from tests.exports.conftest import authored_pair


@pytest.fixture
def authors_release(project, annotator, second_annotator, coordinator):
    """v1: two lead QAs each by Mei Chan (full name), annotator2 (no name), lee@example.org (a username that is an
    address) and a person whose account is deleted after the release."""
    annotator.first_name, annotator.last_name = "Mei", "Chan"
    annotator.save()
    lee = factories.user("lee@example.org")
    gone = factories.user("gone")
    for person in (lee, gone):
        membership_set(project=project, user=person, roles={"annotator"})
    authored_pair(project, annotator)
    authored_pair(project, second_annotator, evidence=("深水埗", "六十幾年"))
    authored_pair(project, lee, evidence=("星期三休息", "招牌菜"))
    authored_pair(project, gone, evidence=("茶餐廳", "老闆"))
    release = releases.release_build_now(project=project, user=coordinator, seed=1)
    assert release.status == Release.Status.DONE, release.error
    gone.delete()
    return release


def test_each_item_is_named_by_its_author_in_one_query(authors_release):
    gold = release_gold(authors_release)
    with CaptureQueriesContext(connection) as queries:
        authors = annotators.release_item_authors(authors_release.project, gold.items)
    assert len(queries) == 1
    assert sorted(authors.values()) == sorted(
        ["Mei Chan"] * 2 + ["annotator2"] * 2 + ["lee"] * 2 + [annotators.UNKNOWN] * 2
    )
    assert not any("@" in label for label in authors.values())


def test_an_id_naming_no_item_of_the_project_is_unknown(authors_release, other_project):
    gold = release_gold(authors_release)
    some = sorted(gold.items)[0]
    found = annotators.release_item_authors(authors_release.project, [some, "yue-cmn-q999999", "not-an-id"])
    assert found[some] != annotators.UNKNOWN
    assert found["yue-cmn-q999999"] == found["not-an-id"] == annotators.UNKNOWN
    assert set(annotators.release_item_authors(other_project, [some]).values()) == {annotators.UNKNOWN}


def test_people_sharing_a_name_are_told_apart():
    people = {
        1: User(pk=1, username="b", first_name="Mei"),
        2: User(pk=2, username="a", first_name="Mei"),
        3: User(pk=3, username="@x.org"),
    }
    assert annotators._distinct_labels(people) == {2: "Mei", 1: "Mei (2)", 3: "person 3"}


def test_a_run_has_the_annotator_stratum_with_n_and_the_unknown_cell(
    authors_release, researcher, client, django_capture_on_commit_callbacks
):
    data = predictions(authors_release, lambda line: f"<answer>{line['answer_standard']}</answer>")
    run = services.evaluation_run_create(
        project=authors_release.project, release=authors_release, user=researcher, data=data, enqueue=False
    )
    run = services.evaluation_run_score(run_id=run.pk)
    assert run is not None and run.status == "done", run and run.error
    body = api_as(researcher).get(f"/api/projects/{authors_release.project.slug}/evaluation/runs/{run.pk}/").json()
    cells = {
        row["value"]: row
        for row in body["results"]
        if (row["stratum"], row["scenario"], row["mode"], row["metric"])
        == ("annotator", "question_only", "recommended", "exact_match")
    }
    assert set(cells) == {"Mei Chan", "annotator2", "lee", annotators.UNKNOWN}
    assert all((cell["n"], cell["mean"]) == (2, 1.0) for cell in cells.values())
    assert body["counts"]["annotator_unknown"] == 2
    assert "who wrote each released item" in body["provenance"]["annotator_stratum"]

    client.force_login(researcher)
    page = client.get(run.get_absolute_url()).content.decode()
    assert 'data-stratum="annotator"' in page and "Mei Chan" in page and annotators.UNKNOWN in page
    assert "lee@example.org" not in page and 'id="annotator-provenance"' in page
    for fmt in ("md", "tex", "csv", "json"):
        text = services.evaluation_run_results_download(run, fmt)
        assert "lee@example.org" not in text
        assert "Mei Chan" in text
    assert "by annotator" in services.evaluation_run_results_download(run, "md")


def test_the_stratum_is_read_with_a_bounded_number_of_queries(authors_release, researcher):
    """Scoring a run reads all authors in one query: twice the items, the same number of queries."""
    data = predictions(authors_release, lambda line: "<answer>x</answer>", scenarios=["question_only"])
    run = services.evaluation_run_create(
        project=authors_release.project, release=authors_release, user=researcher, data=data, enqueue=False
    )
    with CaptureQueriesContext(connection) as queries:
        services.evaluation_run_score(run_id=run.pk)
    author_queries = [q for q in queries.captured_queries if "author" in q["sql"] and "qaitem" in q["sql"].lower()]
    assert len(author_queries) == 1
    assert len(prompt_lines(authors_release, "question_only")) == 8
