"""The WiLoVa release import on the real bar–deu release, and writing it back byte for byte."""

from __future__ import annotations

import hashlib
import json

from annotation.importers.sources import ImportSource
from annotation.models import EvidenceSpan, PagePair, QAItem, QAItemRevision, Screening, SourceFile, SourceRow
from exports.formats.wilova import wilova_file_bytes, write_wilova
from tests.wikiqa.conftest import BASE_NAME, QUALITY_NAME
from wikiqa.importers.services import pairs_import

Q0 = "Q0: Should we annotate this dialect-standard Wikipedia page pair? If no, specify why."


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_bar_deu_release_imports_with_exactly_the_published_counts(bar_deu, wilova_sources):
    report = pairs_import(project=bar_deu, paths=wilova_sources)

    assert report.ok, [str(p) for p in report.problems]
    assert (report.created, report.already_present) == (497, 0)
    assert report.counts["screenings"] == {"annotate": 94, "translated": 261, "structural": 134, "error": 8}
    assert report.counts["items"] == {"lead": 178, "document": 46}
    spans = report.counts["spans"]
    assert spans["local_lead exact"] == 175
    assert spans.get("local_lead whitespace", 0) + spans.get("local_lead unlocated", 0) == 3
    assert (spans["local_lead whitespace"], spans["local_lead unlocated"]) == (2, 1)
    assert spans["local_text unlocated"] == 46

    assert PagePair.objects.filter(project=bar_deu).count() == 497
    decisions = Screening.objects.filter(pair__project=bar_deu).values_list("decision", flat=True)
    assert sorted(set(decisions)) == ["annotate", "error", "structural", "translated"]
    assert QAItem.objects.filter(project=bar_deu, kind="lead").count() == 178
    assert QAItem.objects.filter(project=bar_deu, kind="document").count() == 46
    lead_spans = EvidenceSpan.objects.filter(item__project=bar_deu, document="local_lead")
    assert lead_spans.filter(match="exact").count() == 175
    assert lead_spans.exclude(match="exact").count() == 3
    for span in lead_spans.exclude(match="unlocated").select_related("item__pair"):
        assert span.item.pair.local_lead[span.start : span.end] == span.text
    for span in EvidenceSpan.objects.filter(item__project=bar_deu, match="unlocated"):
        assert (span.start, span.end) == (None, None) and span.text


def test_review_outcomes_become_item_statuses_and_rewrites_second_revisions(bar_deu, wilova_sources, wilova_release):
    pairs_import(project=bar_deu, paths=wilova_sources)
    quality = json.loads(wilova_release[QUALITY_NAME])
    base = json.loads(wilova_release[BASE_NAME])

    rewritten = rejected = 0
    for key, row in quality.items():
        for slot in (1, 2, 3, 4):
            question = base[key][f"Question{slot}"]
            if question is None:
                continue
            item = QAItem.objects.get(pair__project=bar_deu, pair__standard_title=key, metadata__wilova__slot=slot)
            revisions = list(item.revisions.order_by("number"))
            assert revisions[0].reason == QAItemRevision.Reason.IMPORTED
            assert revisions[0].question == question
            checked = row.get(f"Question{slot}_qualitychecked")
            if checked is None:
                assert item.status == QAItem.Status.REJECTED
                rejected += 1
            else:
                assert item.status == QAItem.Status.ACCEPTED
                assert item.question == checked
                if len(revisions) == 2:
                    assert revisions[1].reason == QAItemRevision.Reason.REVIEWER_REWRITE
                    rewritten += 1
    assert rejected == 1
    assert rewritten == 13


def test_labels_verification_and_everything_else_are_kept(bar_deu, wilova_sources):
    pairs_import(project=bar_deu, paths=wilova_sources)

    labelled = PagePair.objects.filter(project=bar_deu, metadata__wilova__has_key="labels")
    assert labelled.count() == 94
    topics = {pair.metadata["wilova"]["labels"]["topic"] for pair in labelled}
    assert topics <= set(bar_deu.topics)
    regions = {pair.metadata["wilova"]["labels"]["region"] for pair in labelled}
    assert regions <= {"local", "standard", "other"}
    found = QAItem.objects.filter(project=bar_deu, metadata__verification__status="found").count()
    not_checked = QAItem.objects.filter(project=bar_deu, metadata__verification__status="not_checked").count()
    assert (found, found + not_checked) == (78, 178)  # empty Validate means "not checked", never "absent"
    assert SourceFile.objects.filter(project=bar_deu).count() == 2
    assert SourceRow.objects.filter(source_file__project=bar_deu).count() == 2 * 497


def test_the_round_trip_is_byte_identical(bar_deu, wilova_sources, wilova_release):
    pairs_import(project=bar_deu, paths=wilova_sources)

    written = dict(wilova_file_bytes(bar_deu))

    assert set(written) == {BASE_NAME, QUALITY_NAME}
    for name, data in written.items():
        assert sha(data) == sha(wilova_release[name]), name


def test_a_change_made_in_localqa_is_written_back_in_that_field_only(bar_deu, wilova_sources, wilova_release):
    pairs_import(project=bar_deu, paths=wilova_sources)
    item = QAItem.objects.filter(project=bar_deu, status="accepted", kind="lead").order_by("id").first()
    key = item.pair.standard_title
    QAItem.objects.filter(pk=item.pk).update(status=QAItem.Status.REJECTED)
    pair = item.pair
    pair.metadata["wilova"]["labels"]["topic"] = "food"
    pair.save(update_fields=["metadata"])

    written = dict(wilova_file_bytes(bar_deu))

    slot = item.metadata["wilova"]["slot"]
    original_base = json.loads(wilova_release[BASE_NAME])
    assert json.loads(written[BASE_NAME]) == original_base  # no base field changed
    original = json.loads(wilova_release[QUALITY_NAME])
    changed = json.loads(written[QUALITY_NAME])
    assert changed[key][f"Question{slot}_qualitychecked"] is None
    assert changed[key]["Article_Topic"] == "food"
    differing = {(k, f) for k in original for f in original[k] if original[k][f] != changed[k][f]}
    assert differing <= {
        (key, f"Question{slot}_qualitychecked"),
        (key, f"Translation{slot}_qualitychecked"),
        (key, "Article_Topic"),
    }


def test_write_wilova_writes_the_files_under_their_original_names(bar_deu, tmp_path):
    row = {
        "standard_title": "Weißwurst",
        "dialect_title": "Weißwurscht",
        "standard_len_sum": 20.0,
        "dialect_len_sum": 34.0,
        "standard_summary": "Eine Brühwurst aus 🐷.",
        "dialect_summary": "A Weißwurscht is a Wurscht aus 🐷.",
        Q0: "Yes",
        "Question1": "Woraus ist die Weißwurst?",
        "Source1": "aus 🐷",
        "Answer1": "aus 🐷",
        "Translation1": "aus Schwein",
        "standard_len_text": 20,
        "dialect_len_text": 34,
        "standard_url": "https://de.wikipedia.org/wiki/Wei%C3%9Fwurst",
        "dialect_url": "https://bar.wikipedia.org/wiki/Wei%C3%9Fwurscht",
    }
    data = json.dumps({"Weißwurst": row}, indent=2, ensure_ascii=True).encode() + b"\n"
    report = pairs_import(project=bar_deu, paths=[ImportSource(name="de.bar-TEST.json", data=data)])
    assert report.ok, [str(p) for p in report.problems]

    paths = write_wilova(bar_deu, tmp_path / "out")

    assert [p.name for p in paths] == ["de.bar-TEST.json"]
    assert paths[0].read_bytes() == data


def test_importing_the_release_twice_creates_nothing_new(bar_deu, wilova_sources):
    pairs_import(project=bar_deu, paths=wilova_sources)

    again = pairs_import(project=bar_deu, paths=wilova_sources)

    assert again.ok
    assert (again.created, again.already_present) == (0, 497)
    assert PagePair.objects.filter(project=bar_deu).count() == 497
    assert QAItem.objects.filter(project=bar_deu).count() == 224
    assert SourceRow.objects.filter(source_file__project=bar_deu).count() == 2 * 497


def test_either_file_alone_imports(bar_deu, other_project, wilova_release):
    base_only = pairs_import(project=bar_deu, paths=[ImportSource(name=BASE_NAME, data=wilova_release[BASE_NAME])])

    assert base_only.ok and base_only.created == 497
    assert set(QAItem.objects.filter(project=bar_deu).values_list("status", flat=True)) == {"submitted"}


def test_dry_run_counts_the_release_and_writes_nothing(bar_deu, wilova_sources):
    report = pairs_import(project=bar_deu, paths=wilova_sources, dry_run=True)

    assert report.ok and report.created == 497
    assert report.counts["items"] == {"lead": 178, "document": 46}
    assert not PagePair.objects.filter(project=bar_deu).exists()
    assert not SourceFile.objects.filter(project=bar_deu).exists()


def test_a_row_key_with_a_lone_surrogate_is_a_problem_named_not_a_crash(bar_deu, wilova_release):
    rows = json.loads(wilova_release[BASE_NAME])
    first = next(iter(rows))
    rows = {(first + "\ud800" if key == first else key): value for key, value in rows.items()}
    data = json.dumps(rows, indent=4).encode()  # ensure_ascii: the half pair is written as \ud800, as JSON allows

    report = pairs_import(project=bar_deu, paths=[ImportSource(name=BASE_NAME, data=data)])

    assert not report.ok
    assert any("surrogate" in problem.message for problem in report.problems), report.problems
    assert not PagePair.objects.filter(project=bar_deu).exists()
