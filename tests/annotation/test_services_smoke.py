from annotation.services.items import qa_item_create, qa_item_update
from annotation.services.submission import pair_submit


def test_annotator_claims_screens_and_writes_an_item(annotating_pair, annotator):
    item = qa_item_create(pair=annotating_pair, user=annotator)
    lead = annotating_pair.local_lead
    start = lead.index("菠蘿油")
    item = qa_item_update(
        item=item,
        user=annotator,
        version=item.version,
        question="这家茶餐厅的招牌菜是什么？",
        answer_standard="菠萝油和鸳鸯",
        answer_local="菠蘿油同埋鴛鴦",
        spans=[{"start": start, "end": start + 3, "text": "菠蘿油"}],
    )
    span = item.spans.get()
    assert lead[span.start : span.end] == "菠蘿油"
    assert item.version == 2


def test_submitting_a_pair_records_revision_one_of_each_item(annotating_pair, annotator):
    lead = annotating_pair.local_lead
    for question in ("这家店在哪里？", "老板姓什么？"):
        start = lead.index("深水埗")
        qa_item_create(
            pair=annotating_pair,
            user=annotator,
            question=question,
            answer_standard="深水埗",
            answer_local="深水埗",
            spans=[{"start": start, "end": start + 3, "text": "深水埗"}],
        )
    pair_submit(pair=annotating_pair, user=annotator)
    items = list(annotating_pair.items.all())
    assert {item.status for item in items} == {"submitted"}
    for item in items:
        revision = item.revisions.get()
        assert revision.number == 1
        assert revision.question == item.question
        assert revision.spans == [
            {"document": "local_lead", "start": start, "end": start + 3, "text": "深水埗", "match": "exact"}
        ]
