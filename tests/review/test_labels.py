"""Article labels: independent labelling, raw rows kept, agreement, adjudication, stale saves."""

from __future__ import annotations

import pytest

from annotation.services.members import membership_set
from common.errors import InvalidInput, InvalidState, StaleEdit
from review import labels as review_labels
from review.models import ArticleLabel, FinalLabel
from tests import factories


@pytest.fixture
def labellers(project, coordinator):
    other = factories.user("coordinator2")
    membership_set(project=project, user=other, roles={"coordinator"})
    return coordinator, other


def label_both(pair, user, topic, region, detail=""):
    review_labels.label_set(pair=pair, user=user, kind="topic", value=topic)
    review_labels.label_set(pair=pair, user=user, kind="region", value=region, detail=detail)


def test_agreeing_labellers_make_the_final_label_without_adjudication(submitted, labellers):
    pair, _ = submitted
    label_both(pair, labellers[0], "food", "local", "Hong Kong")
    assert not FinalLabel.objects.exists()  # one labeller is not enough
    label_both(pair, labellers[1], "food", "local")
    finals = {(f.kind, f.value, f.detail, f.method) for f in FinalLabel.objects.filter(pair=pair)}
    assert finals == {("topic", "food", "", "agreement"), ("region", "local", "Hong Kong", "agreement")}
    assert review_labels.adjudication_list(pair.project) == []


def test_a_relabel_keeps_the_earlier_row_and_can_break_an_agreement(submitted, labellers):
    pair, _ = submitted
    label_both(pair, labellers[0], "food", "local")
    label_both(pair, labellers[1], "food", "local")
    review_labels.label_set(pair=pair, user=labellers[1], kind="topic", value="history", version=1)

    rows = ArticleLabel.objects.filter(pair=pair, labeller=labellers[1], kind="topic").order_by("created_at")
    assert [(row.value, row.superseded_at is not None, row.version) for row in rows] == [
        ("food", True, 1),
        ("history", False, 2),
    ]
    assert not FinalLabel.objects.filter(pair=pair, kind="topic").exists()
    assert [(row["kind"], row["final"]) for row in review_labels.adjudication_list(pair.project)] == [("topic", None)]


def test_adjudication_sets_the_final_label_and_refuses_stale_versions(submitted, labellers):
    pair, _ = submitted
    label_both(pair, labellers[0], "food", "local")
    label_both(pair, labellers[1], "history", "local")
    final = review_labels.label_adjudicate(pair=pair, user=labellers[0], kind="topic", value="food", version=0)
    assert (final.method, final.adjudicator, final.version) == ("adjudicated", labellers[0], 1)
    with pytest.raises(StaleEdit):
        review_labels.label_adjudicate(pair=pair, user=labellers[1], kind="topic", value="history", version=0)
    changed = review_labels.label_adjudicate(pair=pair, user=labellers[1], kind="topic", value="history", version=1)
    assert (changed.value, changed.version) == ("history", 2)
    assert ArticleLabel.objects.current().filter(pair=pair).count() == 4  # raw labels untouched


def test_adjudication_waits_until_every_labeller_is_done(submitted, labellers):
    pair, _ = submitted
    label_both(pair, labellers[0], "food", "local")
    with pytest.raises(InvalidState, match="waits until 2 labellers"):
        review_labels.label_adjudicate(pair=pair, user=labellers[0], kind="topic", value="food")


def test_labels_must_come_from_the_projects_label_sets_and_only_for_kept_pairs(project, submitted, labellers):
    pair, _ = submitted
    with pytest.raises(InvalidInput) as error:
        review_labels.label_set(pair=pair, user=labellers[0], kind="region", value="mars")
    assert error.value.field == "value"
    with pytest.raises(InvalidInput, match="Only a region"):
        review_labels.label_set(pair=pair, user=labellers[0], kind="topic", value="food", detail="Bavaria")
    new_pair = factories.pair(project)
    with pytest.raises(InvalidState, match="kept pairs"):
        review_labels.label_set(pair=new_pair, user=labellers[0], kind="topic", value="food")


def test_a_stale_label_save_is_refused(submitted, labellers):
    pair, _ = submitted
    review_labels.label_set(pair=pair, user=labellers[0], kind="topic", value="food")
    with pytest.raises(StaleEdit):
        review_labels.label_set(pair=pair, user=labellers[0], kind="topic", value="sport", version=0)
    assert ArticleLabel.objects.current().get(pair=pair).value == "food"


def test_different_finer_regions_are_a_disagreement_adjudicated_and_released(
    client, submitted, labellers, settings, tmp_path
):
    import json
    from pathlib import Path

    from annotation.models import QAItem
    from exports import services as releases

    settings.MEDIA_ROOT = tmp_path / "media"
    pair, _ = submitted
    label_both(pair, labellers[0], "food", "local", "Hong Kong")
    label_both(pair, labellers[1], "food", "local", "Guangdong")

    # Both fold into the local region, yet the labellers did not agree: no "all labellers agreed".
    assert not FinalLabel.objects.filter(pair=pair, kind="region").exists()
    assert [row["kind"] for row in review_labels.adjudication_list(pair.project)] == ["region"]
    client.force_login(labellers[0])
    page = client.get(f"/projects/{pair.project.slug}/adjudication/").content.decode()
    assert "(Hong Kong)" in page and "(Guangdong)" in page
    response = client.post(
        f"/projects/{pair.project.slug}/pairs/{pair.pk}/labels/final/",
        {"kind": "region", "value": "local", "detail": "Hong Kong", "version": 0},
    )
    assert response.status_code in (200, 302)
    final = FinalLabel.objects.get(pair=pair, kind="region")
    assert (final.value, final.detail, final.method) == ("local", "Hong Kong", "adjudicated")

    QAItem.objects.filter(pair=pair).update(status=QAItem.Status.ACCEPTED)
    release = releases.release_build_now(project=pair.project, user=labellers[0], splits={})
    root = Path(settings.MEDIA_ROOT) / release.path
    lead = [json.loads(line) for line in (root / "lead_qa.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {(r["region"], r["region_detail"]) for r in lead} == {("local", "Hong Kong")}
    pairs = [json.loads(line) for line in (root / "page_pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(p["region"], p["region_detail"]) for p in pairs if p["lead_qas"]] == [("local", "Hong Kong")]
