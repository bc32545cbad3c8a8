"""Full article texts read with their wiki section headings as headings: the document-QA page (the standard full
text beside the local one, and a submit key there), the review of a document QA (the standard full text it must
be absent from) and the verification panel's whole article."""

from __future__ import annotations

from django.urls import reverse

from annotation.services.items import qa_item_create
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_update
from annotation.services.submission import pair_submit
from review import queue as review_queue
from tests import factories
from tests.review.conftest import LOCAL_TEXT, complete_item, span_of

STANDARD_WITH_HEADINGS = "这是一家茶餐厅。\n== 历史 ==\n老板姓陈。\n=== 菜单 ===\n以菠萝包闻名。"


def _document_pair(project, annotator):
    project_update(project=project, collect_document_qa=True, lead_qa_min=1)
    factories.pair(project, local_text=LOCAL_TEXT, standard_text=STANDARD_WITH_HEADINGS)
    pair = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=pair, user=annotator, decision="annotate")
    return pair


def test_the_document_qa_page_shows_the_standard_headings_as_headings_and_offers_the_submit_key(
    client, project, annotator
):
    pair = _document_pair(project, annotator)
    client.force_login(annotator)
    url = reverse("document_qa", args=[project.slug, pair.pk])
    client.post(url)

    page = client.get(url).content.decode()

    standard = page[page.index('id="standard-full-text"') :]
    assert 'class="wiki-heading level-2" role="heading" aria-level="3">历史</p>' in standard
    assert 'class="wiki-heading level-3" role="heading" aria-level="4">菜单</p>' in standard
    assert "== 历史 ==" not in standard
    assert 'id="submit-next"' in page and "Ctrl</kbd>+<kbd>Enter" in page


def test_the_review_of_a_document_qa_shows_the_standard_full_text(client, project, annotator, reviewer):
    pair = _document_pair(project, annotator)
    complete_item(pair, annotator, "深水埗")
    qa_item_create(
        pair=pair, user=annotator, kind="document", question="几种茶叶？", answer_standard="五种",
        answer_local="五種", spans=[span_of("五種茶葉", LOCAL_TEXT)],
    )  # fmt: skip
    pair_submit(pair=pair, user=annotator)
    document = pair.items.get(kind="document")
    slot = review_queue.review_claim(item=document, user=reviewer)
    client.force_login(reviewer)

    page = client.get(reverse("review_slot", args=[project.slug, slot.pk])).content.decode()

    assert 'id="standard-full-text"' in page and "以菠萝包闻名。" in page and ">菜单</p>" in page


def test_the_verification_panel_reads_the_whole_article_with_its_headings(client, project, annotator):
    pair = _document_pair(project, annotator)
    item = complete_item(pair, annotator, "深水埗")
    client.force_login(annotator)

    page = client.get(
        reverse("item_verify", args=[project.slug, item.pk]) + "?panel=1&whole=1", HTTP_HX_REQUEST="true"
    ).content.decode()

    assert page.count('class="wiki-heading') == 2 and "<p>老板姓陈。</p>" in page and "==" not in page
