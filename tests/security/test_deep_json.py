"""JSON nested a thousand levels deep (a 2 KB body) is refused with a 400 that says why, on every JSON endpoint,
signed in or not; it used to be a RecursionError in the parser, a 500 for anyone."""

from __future__ import annotations

import json

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.parsers import JSONParser as DrfJSONParser
from rest_framework.test import APIClient

from annotation.services.items import qa_item_create
from tests.conftest import api_as

DEEP = "[" * 1000 + "]" * 1000  # 2,000 bytes
SOMEWHAT_DEEP = json.dumps({"username": "x", "roles": ["annotator"], "name": json.loads("[" * 150 + "]" * 150)})


def _refused(response) -> None:
    assert response.status_code == 400, response.content
    assert "levels deep" in response.json()["detail"]


@pytest.mark.parametrize("body", [DEEP, SOMEWHAT_DEEP])
def test_anyone_sending_deep_json_to_sign_in_gets_a_400(db, body):
    _refused(APIClient().post("/api/auth/token/", body, content_type="application/json"))


@pytest.mark.parametrize("body", [DEEP, SOMEWHAT_DEEP])
def test_a_member_sending_deep_json_gets_a_400(project, trivia, coordinator, annotator, body):
    client = api_as(coordinator)

    _refused(client.post(f"/api/projects/{project.slug}/people/", body, content_type="application/json"))
    # A view with its own parser list
    _refused(
        api_as(annotator).post(f"/api/projects/{trivia.slug}/trivia/items/", body, content_type="application/json")
    )


def test_json_of_ordinary_depth_still_reads(project, coordinator):
    body = json.dumps({"username": "mei", "roles": ["annotator"]})

    response = api_as(coordinator).post(f"/api/projects/{project.slug}/people/", body, content_type="application/json")

    assert response.status_code == 201


def test_deep_json_in_the_spans_field_of_the_item_form_is_a_message(client, annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    client.force_login(annotator)

    response = client.post(
        reverse("item_save", args=[annotating_pair.project.slug, item.pk]),
        {"version": item.version, "question": "问题？", "spans": DEEP},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 400
    assert "levels deep" in response.content.decode()


def _views(patterns) -> list:
    found = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            found += _views(pattern.url_patterns)
        elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "cls"):
            found.append(pattern.callback.cls)
    return found


def test_every_api_view_that_reads_json_reads_it_with_the_depth_check():
    from common import jsontext
    from common.parsers import JSONParser

    readers = {
        view.__name__: parser
        for view in _views(get_resolver().url_patterns)
        for parser in view.parser_classes
        if issubclass(parser, DrfJSONParser)
    }

    assert readers
    assert {name for name, parser in readers.items() if not issubclass(parser, JSONParser)} == set()
    assert jsontext.deeper_than(json.loads(SOMEWHAT_DEEP))
