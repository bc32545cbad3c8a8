"""The adjudication page: no value chosen until someone chooses one, the disputed values offered as buttons,
display names instead of codes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from review.models import FinalLabel
from tests.review.test_labels import label_both, labellers  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def disputed(submitted, labellers):  # noqa: F811
    pair, _ = submitted
    label_both(pair, labellers[0], "science-math-technology", "local")
    label_both(pair, labellers[1], "history", "local")
    return pair


def test_nothing_is_chosen_until_someone_chooses_and_names_are_display_names(disputed, client, coordinator):
    client.force_login(coordinator)

    html = client.get(reverse("adjudication", args=[disputed.project.slug])).content.decode()

    assert '<option value="" selected>Choose…</option>' in html
    assert '<select name="value" required>' in html
    assert html.count(" selected") == 1  # only the empty choice
    assert "Science, math &amp; technology" in html
    assert ">science-math-technology<" not in html and "<strong>science-math-technology</strong>" not in html
    assert 'name="choose" value="science-math-technology"' in html and 'name="choose" value="history"' in html
    assert "<td>Topic</td>" in html


def test_a_set_without_a_choice_records_nothing(disputed, client, coordinator):
    client.force_login(coordinator)
    url = reverse("label_adjudicate", args=[disputed.project.slug, disputed.pk])

    response = client.post(url, {"kind": "topic", "version": 0, "value": ""}, follow=True)

    assert not FinalLabel.objects.filter(pair=disputed, kind="topic").exists()
    assert response.status_code == 200
    assert "is not a topic of this project" in response.content.decode()


def test_a_disputed_value_button_records_that_value(disputed, client, coordinator):
    client.force_login(coordinator)
    url = reverse("label_adjudicate", args=[disputed.project.slug, disputed.pk])

    client.post(url, {"kind": "topic", "version": 0, "value": "", "choose": "history"})

    final = FinalLabel.objects.get(pair=disputed, kind="topic")
    assert (final.value, final.method) == ("history", "adjudicated")
