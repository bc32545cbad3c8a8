from annotation import services


def test_annotator_claims_screens_and_writes_an_item(annotating_pair, annotator):
    item = services.qa_item_create(pair=annotating_pair, user=annotator)
    lead = annotating_pair.local_lead
    start = lead.index("菠蘿油")
    item = services.qa_item_update(
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
