"""Errors at the item and field they concern: an over-long field does not stop the rest of the item saving (it
keeps what was typed and says so at the field), and a refused submit names each problem at its item, not in a
stack of banners."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.lifecycle import MAX_TEXT_FIELD
from annotation.models import QAItem
from annotation.services.items import qa_item_create
from annotation.services.projects import project_update

pytestmark = pytest.mark.django_db


def test_an_over_long_question_does_not_stop_the_answers_saving(client, project, annotator, annotating_pair):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    client.force_login(annotator)
    too_long = "問" * (MAX_TEXT_FIELD + 3)

    response = client.post(
        reverse("item_save", args=[project.slug, item.pk]),
        {"version": item.version, "question": too_long, "answer_standard": "姓陈", "answer_local": "姓陳"},
        HTTP_HX_REQUEST="true",
    )

    item.refresh_from_db()
    assert (item.question, item.answer_standard, item.answer_local) == ("", "姓陈", "姓陳")
    assert response.status_code == 200
    html = response.content.decode()
    note = html[html.index(f'id="item-{item.pk}-question-note"') :]
    note = note[: note.index("</p>")]
    assert "3 over the limit" in note and "not saved" in note.lower()
    assert f'id="item-{item.pk}-version" value="{item.version}"' in html  # the saved version, for the next save


def test_the_plain_form_keeps_the_over_long_text_and_saves_the_rest(client, project, annotator, annotating_pair):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    client.force_login(annotator)
    too_long = "Wirtshaus " * (MAX_TEXT_FIELD // 10 + 1)

    response = client.post(
        reverse("item_save", args=[project.slug, item.pk]),
        {"version": item.version, "question": "Wo?", "answer_standard": too_long, "answer_local": "Im Dorf"},
    )

    item.refresh_from_db()
    assert (item.question, item.answer_local, item.answer_standard) == ("Wo?", "Im Dorf", "")
    html = response.content.decode()
    assert too_long.strip() in html  # what was typed is still in its field
    assert f'id="item-{item.pk}-answer_standard-note"' in html and "over the limit" in html
    assert f'name="version" id="item-{item.pk}-version" value="{item.version}"' in html


def test_a_refused_submit_names_each_problem_at_its_item_and_field(client, project, annotator, annotating_pair):
    project_update(project=project, lead_qa_min=1)
    first = qa_item_create(pair=annotating_pair, user=annotator, question="老板姓什么？")
    second = qa_item_create(pair=annotating_pair, user=annotator, answer_standard="深水埗")
    client.force_login(annotator)

    response = client.post(reverse("pair_submit", args=[project.slug, annotating_pair.pk]))

    assert response.status_code == 400
    html = response.content.decode()
    assert 'class="message error"' not in html  # no banners: every problem is at its item
    for item, field in ((first, "answer_standard"), (second, "question"), (first, "spans")):
        note = html[html.index(f'id="item-{item.pk}-{field}-note"') :]
        note = note[: note.index("</p>")]
        assert "empty" in note or "no evidence" in note.lower(), (item.pk, field, note)
    assert "item 1:" not in html.split('id="items-list"')[1]  # at its item, no need to number it
    assert QAItem.objects.filter(pair=annotating_pair, status="draft").count() == 2
