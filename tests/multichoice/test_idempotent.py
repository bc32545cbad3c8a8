"""The same trivia item sent twice (Back then Send again, a retry) is created once."""

from __future__ import annotations

from django.urls import reverse

from multichoice.models import TriviaItem
from tests.conftest import api_as
from tests.multichoice.conftest import item_values


def form(values: dict) -> dict:
    data = {k: v for k, v in values.items() if k != "candidates"}
    return data | {f"candidate{i}": text for i, text in enumerate(values["candidates"])}


def test_the_item_form_sent_twice_makes_one_item(client, trivia, annotator):
    client.force_login(annotator)
    url = reverse("trivia_item_new", args=[trivia.slug])

    first = client.post(url, form(item_values()))
    again = client.post(url, form(item_values()), follow=True)

    assert TriviaItem.objects.count() == 1
    assert again.redirect_chain[-1][0] == first.url
    assert "You sent this item already" in again.content.decode()


def test_the_api_answers_a_repeated_item_with_the_existing_one(trivia, annotator):
    url = f"/api/projects/{trivia.slug}/trivia/items/"

    first = api_as(annotator).post(url, item_values(), format="json")
    again = api_as(annotator).post(url, item_values(), format="json")
    other = api_as(annotator).post(url, item_values(question="Where's Ea?"), format="json")

    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
    assert again.json()["id"] == first.json()["id"] and TriviaItem.objects.count() == 2


def test_another_author_may_write_the_same_item(trivia, annotator, second_annotator):
    url = f"/api/projects/{trivia.slug}/trivia/items/"
    api_as(annotator).post(url, item_values(), format="json")

    assert api_as(second_annotator).post(url, item_values(), format="json").status_code == 201
