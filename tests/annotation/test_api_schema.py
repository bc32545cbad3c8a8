"""The API's OpenAPI schema is complete and valid; its lists take a fixed number of queries."""

from __future__ import annotations

import pytest
import yaml
from django.core.management import call_command
from drf_spectacular.validation import validate_schema

from annotation.api_urls import urlpatterns
from annotation.services.items import qa_item_create
from annotation.services.pairs import pair_claim_next, pair_screen
from tests import factories
from tests.conftest import api_as


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_schema_endpoint_serves_a_valid_openapi_document_with_every_api_route(client):
    response = client.get("/api/schema/", {"format": "json"})

    assert response.status_code == 200
    schema = response.json()
    validate_schema(schema)
    documented = set(schema["paths"])
    for pattern in urlpatterns:
        route = "/api/" + str(pattern.pattern)
        for converter in ("slug:", "int:", "str:"):
            route = route.replace("<" + converter, "{")
        assert route.replace(">", "}") in documented


def test_schema_generation_has_no_warnings_or_errors(tmp_path):
    output = tmp_path / "schema.yaml"

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(output))

    schema = yaml.safe_load(output.read_text())
    patch_item = schema["paths"]["/api/projects/{slug}/items/{item_id}/"]["patch"]
    assert {"200", "400", "403", "404", "409"} <= set(patch_item["responses"])


def make_pairs(project, annotator, count: int) -> None:
    for _ in range(count):
        factories.pair(project)
    for _ in range(count // 2):  # half of them claimed, screened and given an item
        pair = pair_claim_next(project=project, user=annotator)
        assert pair is not None
        pair_screen(pair=pair, user=annotator, decision="annotate")
        qa_item_create(pair=pair, user=annotator, question="问题？")


@pytest.mark.parametrize("count", [2, 30])
def test_coordinator_pairs_list_takes_four_queries_however_many_pairs(
    project, annotator, coordinator, count, django_assert_max_num_queries
):
    make_pairs(project, annotator, count)
    client = api_as(coordinator)

    # project, membership, count, page
    with django_assert_max_num_queries(4):
        response = client.get(f"/api/projects/{project.slug}/pairs/")

    assert len(response.data["results"]) == count


@pytest.mark.parametrize("count", [2, 30])
def test_annotator_pairs_list_takes_four_queries_however_many_pairs(
    project, annotator, count, django_assert_max_num_queries
):
    make_pairs(project, annotator, count)
    client = api_as(annotator)

    with django_assert_max_num_queries(4):
        response = client.get(f"/api/projects/{project.slug}/pairs/", {"status": "annotating"})

    assert len(response.data["results"]) == count // 2


def test_pair_detail_takes_five_queries_however_many_items_and_spans(
    annotating_pair, annotator, django_assert_max_num_queries
):
    lead = annotating_pair.local_lead
    for evidence in ("深水埗", "菠蘿油", "姓陳"):
        start = lead.index(evidence)
        qa_item_create(
            pair=annotating_pair,
            user=annotator,
            question="问题？",
            spans=[
                {"start": start, "end": start + len(evidence), "text": evidence},
                {"start": 0, "end": 1, "text": "𠮶"},
            ],
        )
    client = api_as(annotator)

    # project, membership, pair, items with authors, spans
    with django_assert_max_num_queries(5):
        response = client.get(f"/api/projects/{annotating_pair.project.slug}/pairs/{annotating_pair.pk}/")

    assert [len(item["spans"]) for item in response.data["items"]] == [2, 2, 2]
