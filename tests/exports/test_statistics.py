"""The statistics table's rows by topic and region: the review app's final label, else the imported one, else
"not labelled" — counted as QA pages, lead QAs and document QAs of the released items."""

from __future__ import annotations

from annotation.models import PagePair, QAItem
from exports.statistics import NOT_LABELLED, release_statistics
from review.models import FinalLabel
from tests.exports.conftest import bulk_accepted_items


def test_final_labels_win_over_imported_ones_and_pairs_without_either_are_not_labelled(project):
    bulk_accepted_items(project, 10, per_pair=2)  # five pairs with two lead QAs each
    first, second, third, fourth, fifth = PagePair.objects.filter(project=project).order_by("id")
    PagePair.objects.filter(pk=second.pk).update(metadata={"wilova": {"labels": {"topic": "History", "region": ""}}})
    PagePair.objects.filter(pk=third.pk).update(metadata={"wilova": {"labels": {"topic": "History"}}})
    FinalLabel.objects.create(
        project=third.project, pair=third, kind="topic", value="Food", method="agreement"
    )  # wins over History
    FinalLabel.objects.create(project=first.project, pair=first, kind="topic", value="Food", method="agreement")
    FinalLabel.objects.create(project=first.project, pair=first, kind="region", value="local", method="agreement")
    document = QAItem.objects.filter(pair=fourth).first()
    QAItem.objects.filter(pk=document.pk).update(kind=QAItem.Kind.DOCUMENT)
    QAItem.objects.filter(pair=fifth).update(status=QAItem.Status.SUBMITTED)  # not released: not counted

    table = release_statistics(project, [QAItem.Status.ACCEPTED])

    assert table["by_topic"] == {
        "Food": {"qa_pages": 2, "lead_qas": 4, "document_qas": 0},
        "History": {"qa_pages": 1, "lead_qas": 2, "document_qas": 0},
        NOT_LABELLED: {"qa_pages": 1, "lead_qas": 1, "document_qas": 1},
    }
    assert table["by_region"] == {
        "local": {"qa_pages": 1, "lead_qas": 2, "document_qas": 0},
        NOT_LABELLED: {"qa_pages": 3, "lead_qas": 5, "document_qas": 1},  # an empty imported label is no label
    }
    assert (table["qa_pages"], table["lead_qas"], table["document_qas"]) == (4, 7, 1)
