"""localqa JSONL with screening and items, CSV, and bad input in every format: refused whole, named exactly."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.importers.sources import ImportSource
from annotation.models import EvidenceSpan, PagePair, QAItem, QAItemRevision, Screening
from tests.wikiqa.conftest import BASE_NAME, QUALITY_NAME
from wikiqa.importers.services import pairs_import

LEAD = "𠮶間茶餐廳喺深水埗，招牌菜係菠蘿油。"


def pair(number: int = 1, **fields) -> dict:
    row = {
        "local_title": f"茶餐廳 {number}",
        "standard_title": f"茶餐厅 {number}",
        "local_url": f"https://zh-yue.wikipedia.org/wiki/P{number}",
        "standard_url": f"https://zh.wikipedia.org/wiki/P{number}",
        "local_lead": LEAD,
        "standard_lead": "茶餐厅。",
    }
    row.update(fields)
    return row


def jsonl(tmp_path, *rows, name="pairs.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def where(report) -> list[tuple]:
    return [(p.file, p.line, p.record, p.field) for p in report.problems]


def test_jsonl_brings_screening_decisions_and_items_with_spans_and_revisions(project, tmp_path):
    start = LEAD.index("菠蘿油")
    item = {
        "kind": "lead",
        "question": "招牌菜是什么？",
        "answer_standard": "菠萝油",
        "answer_local": "菠蘿油",
        "status": "accepted",
        "spans": [{"start": start, "end": start + 3, "text": "菠蘿油"}, {"text": "深水埗"}],
        "metadata": {"reviewer": "r1"},
    }
    path = jsonl(
        tmp_path,
        pair(1, screening={"decision": "annotate", "note": ""}, items=[item]),
        pair(2, screening={"decision": "translated", "note": "machine translated"}),
        pair(3),
    )

    report = pairs_import(project=project, paths=[path])

    assert report.ok, [str(p) for p in report.problems]
    assert report.created == 3
    assert report.counts["screenings"] == {"annotate": 1, "translated": 1}
    assert report.counts["items"] == {"lead": 1}
    assert report.counts["spans"] == {"local_lead exact": 2}
    annotated = PagePair.objects.get(project=project, local_title="茶餐廳 1")
    assert (annotated.status, annotated.screening_decision) == ("submitted", "annotate")
    excluded = PagePair.objects.get(project=project, local_title="茶餐廳 2")
    assert (excluded.status, excluded.screening_decision) == ("excluded", "translated")
    assert Screening.objects.get(pair=excluded).note == "machine translated"
    assert PagePair.objects.get(project=project, local_title="茶餐廳 3").status == "new"
    stored = QAItem.objects.get(pair=annotated)
    assert (stored.status, stored.metadata) == ("accepted", {"reviewer": "r1"})
    spans = list(stored.spans.order_by("position"))
    assert [(s.start, s.end, s.text) for s in spans] == [(start, start + 3, "菠蘿油"), (6, 9, "深水埗")]
    assert all(LEAD[s.start : s.end] == s.text for s in spans)
    assert stored.revisions.get().reason == QAItemRevision.Reason.IMPORTED


def test_a_span_whose_offsets_do_not_match_is_refused_with_its_path(project, tmp_path):
    item = {"question": "?", "spans": [{"start": 0, "end": 2, "text": "茶餐"}]}
    path = jsonl(tmp_path, pair(1, items=[item]))

    report = pairs_import(project=project, paths=[path])

    assert where(report) == [(None, 1, None, "items[0].spans[0].text")]
    assert "code points" in report.problems[0].message
    assert not PagePair.objects.exists()


def test_unknown_screening_decision_item_status_and_language_codes_are_named(project, tmp_path):
    path = jsonl(
        tmp_path,
        pair(1, screening={"decision": "maybe"}),
        pair(2, items=[{"question": "?", "status": "great"}]),
        pair(3, local_language="xx-yy", standard_language="deu"),
    )

    report = pairs_import(project=project, paths=[path])

    assert set(where(report)) == {
        (None, 1, None, "screening.decision"),
        (None, 2, None, "items[0].status"),
        (None, 3, None, "local_language"),
        (None, 3, None, "standard_language"),
    }
    messages = {p.field: p.message for p in report.problems}
    assert "unknown language code 'xx-yy'" in messages["local_language"]
    assert "'cmn'" in messages["standard_language"]
    assert not PagePair.objects.exists()


def test_a_pair_duplicated_across_two_files_is_refused_naming_both(project, tmp_path):
    first = jsonl(tmp_path, pair(1), name="a.jsonl")
    second = jsonl(tmp_path, pair(2), pair(1), name="b.jsonl")

    report = pairs_import(project=project, paths=[first, second])

    assert where(report) == [("b.jsonl", 2, None, "local_title")]
    assert "line 1 of a.jsonl" in report.problems[0].message
    assert not PagePair.objects.exists()


# CSV


def csv_file(tmp_path, text: str, name="pairs.csv", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


HEADER = "local_title,standard_title,local_url,standard_url,local_lead,standard_lead,screening_decision,metadata\n"


def test_csv_imports_pairs_with_multiline_cells_and_screening(project, tmp_path):
    lead = "第一行\n第二行, 有逗號 𠮶"
    path = csv_file(
        tmp_path,
        HEADER
        + f'Maibaam,Maibaum,https://bar.wikipedia.org/wiki/M,https://de.wikipedia.org/wiki/M,"{lead}",Std,'
        + 'translated,"{""rank"": 2}"\n'
        + "Kirta,Kirchweih,https://bar.wikipedia.org/wiki/K,https://de.wikipedia.org/wiki/K,Lead,Std,,\n",
    )

    report = pairs_import(project=project, paths=[path])

    assert report.ok, [str(p) for p in report.problems]
    assert report.created == 2 and report.counts["screenings"] == {"translated": 1}
    stored = PagePair.objects.get(project=project, local_title="Maibaam")
    assert (stored.local_lead, stored.metadata, stored.source) == (lead, {"rank": 2}, "csv")
    assert stored.status == "excluded"
    assert PagePair.objects.get(project=project, local_title="Kirta").status == "new"


def test_csv_problems_name_line_and_column(project, tmp_path):
    path = csv_file(
        tmp_path,
        HEADER
        + "Maibaam,Maibaum,not-a-url,https://de.wikipedia.org/wiki/M,Lead,Std,,\n"
        + "Kirta,Kirchweih,https://bar.wikipedia.org/wiki/K,https://de.wikipedia.org/wiki/K,Lead,,never,\n",
    )

    report = pairs_import(project=project, paths=[path])

    assert set(where(report)) == {
        (None, 2, None, "local_url"),
        (None, 3, None, "standard_lead"),
        (None, 3, None, "screening.decision"),
    }
    assert not PagePair.objects.exists()


def test_csv_in_a_wrong_encoding_is_refused(project, tmp_path):
    row = "Weißwurscht,Weißwurst,https://bar.wikipedia.org/wiki/W,https://de.wikipedia.org/wiki/W,Lead,Std,,\n"
    path = csv_file(tmp_path, HEADER + row, encoding="cp1252")

    report = pairs_import(project=project, paths=[path])

    assert not report.ok
    assert "not valid UTF-8" in report.problems[0].message
    assert not PagePair.objects.exists()


def test_csv_with_an_unknown_column_is_refused(project, tmp_path):
    path = csv_file(tmp_path, "local_title,local_titel\nA,B\n")

    report = pairs_import(project=project, paths=[path])

    assert (None, 1, None, "local_titel") in where(report)


# WiLoVa bad input


def wilova_row(**fields) -> dict:
    row = {
        "standard_title": "Weißwurst",
        "dialect_title": "Weißwurscht",
        "standard_summary": "Eine Brühwurst.",
        "dialect_summary": "A Weißwurscht is a Wurscht.",
        "Q0: Should we annotate this dialect-standard Wikipedia page pair? If no, specify why.": "Translated",
        "standard_url": "https://de.wikipedia.org/wiki/W",
        "dialect_url": "https://bar.wikipedia.org/wiki/W",
    }
    row.update(fields)
    return row


def test_a_wilova_row_with_an_unknown_screening_value_refuses_the_whole_import(bar_deu, wilova_release):
    good = json.loads(wilova_release[BASE_NAME])
    key = next(iter(good))
    q0 = "Q0: Should we annotate this dialect-standard Wikipedia page pair? If no, specify why."
    good[key][q0] = "Maybe"
    data = json.dumps(good, indent=4, ensure_ascii=False).encode()

    report = pairs_import(project=bar_deu, paths=[ImportSource(name=BASE_NAME, data=data)])

    assert where(report) == [(BASE_NAME, None, key, q0)]
    assert "unknown screening value 'Maybe'" in report.problems[0].message
    assert str(report.problems[0]).startswith(f"{BASE_NAME}, record {key!r}, field Q0:")
    assert not PagePair.objects.filter(project=bar_deu).exists()


def test_wilova_files_of_another_language_pair_are_refused(project, wilova_release):
    report = pairs_import(project=project, paths=[ImportSource(name=BASE_NAME, data=wilova_release[BASE_NAME])])

    assert not report.ok
    assert "bar→de" in report.problems[0].message
    assert not PagePair.objects.exists()


def test_malformed_wilova_json_is_refused_with_its_position(bar_deu):
    data = b'{\n    "A": {\n        "standard_title": "A",\n    }\n}'

    report = pairs_import(project=bar_deu, paths=[ImportSource(name="de.bar-X.json", data=data)])

    assert where(report) == [("de.bar-X.json", None, None, None)]
    assert "invalid JSON" in report.problems[0].message and "line 4" in report.problems[0].message


def test_wilova_rows_name_every_wrong_field(bar_deu):
    rows = {
        "Weißwurst": wilova_row(dialect_summary="", standard_len_text="long"),
        "Brezel": wilova_row(dialect_title="Brezn", Question1=None, Answer1="orphan answer"),
    }
    data = json.dumps(rows).encode()

    report = pairs_import(project=bar_deu, paths=[ImportSource(name="de.bar-X.json", data=data)])

    assert set(where(report)) == {
        ("de.bar-X.json", None, "Weißwurst", "dialect_summary"),
        ("de.bar-X.json", None, "Weißwurst", "standard_len_text"),
    }
    # An answer without a question is residue, not a structural problem: a warning (see test_other_studies.py).
    assert [(w.record, w.field) for w in report.warnings] == [("Brezel", "Answer1")]


def test_an_unknown_region_label_is_refused(bar_deu):
    rows = {"Weißwurst": wilova_row(Article_Region="Mars", Article_Topic="food")}
    data = json.dumps(rows).encode()

    report = pairs_import(project=bar_deu, paths=[ImportSource(name=QUALITY_NAME, data=data)])

    assert where(report) == [(QUALITY_NAME, None, "Weißwurst", "Article_Region")]


def test_an_oversized_file_is_refused_before_reading(project, tmp_path, settings):
    path = jsonl(tmp_path, pair(1))
    settings.IMPORT_MAX_BYTES = 10

    report = pairs_import(project=project, paths=[path])

    assert "IMPORT_MAX_BYTES" in report.problems[0].message
    assert not PagePair.objects.exists()


# The command


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def wilova_dir(tmp_path):
    """Only for the command, which reads paths: synthetic stand-ins named like the release (never its content)."""
    rows = {"Weißwurst": wilova_row()}
    for name in (BASE_NAME, QUALITY_NAME):
        (tmp_path / name).write_text(json.dumps(rows, indent=4, ensure_ascii=False), encoding="utf-8")
    return tmp_path


def test_the_command_imports_a_wilova_pair_of_files_and_prints_the_counts(bar_deu, wilova_dir):
    output = run("pairs_import", bar_deu.slug, str(wilova_dir / BASE_NAME), str(wilova_dir / QUALITY_NAME))

    assert "1 pair created" in output
    assert "screening decisions: translated 1" in output
    assert "original release rows kept: base file rows 1, quality file rows 1" in output


def test_the_command_dry_run_with_a_forced_format(project, tmp_path):
    path = jsonl(tmp_path, pair(1), name="pairs.txt")

    output = run("pairs_import", project.slug, str(path), "--format", "jsonl", "--dry-run")

    assert "Dry run" in output and "1 pair would be created" in output
    assert not PagePair.objects.exists()


def test_the_command_refuses_a_name_it_cannot_place_without_format(project, tmp_path):
    path = jsonl(tmp_path, pair(1), name="pairs.txt")

    with pytest.raises(CommandError, match="cannot tell the format"):
        run("pairs_import", project.slug, str(path))


def test_spans_are_counted_by_how_they_were_located(project, tmp_path):
    item = {"question": "?", "spans": [{"text": "深水 埗"}, {"text": "不存在"}]}
    report = pairs_import(project=project, paths=[jsonl(tmp_path, pair(1, items=[item]))])

    assert report.counts["spans"] == {"local_lead unlocated": 2}
    unlocated = EvidenceSpan.objects.filter(match="unlocated")
    assert unlocated.count() == 2 and all(s.start is None and s.end is None for s in unlocated)


def test_a_wilova_file_in_a_wrong_encoding_is_refused(bar_deu):
    data = json.dumps({"Weißwurst": wilova_row()}, ensure_ascii=False).encode("cp1252")

    report = pairs_import(project=bar_deu, paths=[ImportSource(name="de.bar-X.json", data=data)])

    assert not report.ok and "not valid UTF-8" in report.problems[0].message
    assert not PagePair.objects.filter(project=bar_deu).exists()


def test_two_wilova_rows_for_the_same_local_page_are_refused(bar_deu):
    rows = {"Weißwurst": wilova_row(), "Weisswurst": wilova_row(standard_title="Weisswurst")}

    report = pairs_import(project=bar_deu, paths=[ImportSource(name="de.bar-X.json", data=json.dumps(rows).encode())])

    assert where(report) == [("de.bar-X.json", None, "Weisswurst", "local_title")]
    assert "record 'Weißwurst'" in report.problems[0].message
