"""The JSONL page-pair import: exact storage, idempotence, and all-or-nothing refusal."""

from __future__ import annotations

import json
import math

import pytest
from django.db import connection

from annotation.models import PagePair
from wikiqa.importers.services import pairs_import_jsonl

# Tabs, newlines, a carriage return, leading/trailing spaces, a non-BMP character (𠮶 U+20BB6),
# a combining mark and right-to-left text: all must come back exactly as given.
AWKWARD_LEAD = "  𠮶間舖頭\t喺\r\n深水埗，\n\nقهوة بلدى e\u0301 \u200f "


def pair_row(number: int = 1, **fields) -> dict:
    row = {
        "local_title": f"缽仔糕 {number}",
        "standard_title": f"钵仔糕 {number}",
        "local_url": f"https://zh-yue.wikipedia.org/wiki/P{number}",
        "standard_url": f"https://zh.wikipedia.org/wiki/P{number}",
        "local_lead": "缽仔糕係廣東嘅街頭小食，用瓦缽蒸，𠵱家好難搵。",
        "standard_lead": "钵仔糕是广东小吃。",
    }
    row.update(fields)
    return row


def write_lines(tmp_path, *lines, name="pairs.jsonl"):
    """Each line is a dict (dumped as JSON) or a str (written as it is)."""
    path = tmp_path / name
    text = "".join((json.dumps(line, ensure_ascii=False) if isinstance(line, dict) else line) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


def problems(report) -> list[tuple]:
    return [(p.line, p.field) for p in report.problems]


def test_import_stores_texts_exactly_as_given(project, tmp_path):
    path = write_lines(
        tmp_path,
        pair_row(1, local_lead=AWKWARD_LEAD, local_text=AWKWARD_LEAD + "\tmore", metadata={"rank": 3}),
        pair_row(2),
    )

    report = pairs_import_jsonl(project=project, path=path)

    assert report.ok and report.created == 2 and report.already_present == 0
    stored = PagePair.objects.get(project=project, local_title="缽仔糕 1")
    assert stored.local_lead == AWKWARD_LEAD
    assert stored.local_lead.encode("utf-8") == AWKWARD_LEAD.encode("utf-8")
    assert stored.local_text == AWKWARD_LEAD + "\tmore"
    assert stored.source == PagePair.Source.JSONL
    assert stored.metadata == {"rank": 3}


def test_lengths_default_to_code_points_of_the_given_texts(project, tmp_path):
    path = write_lines(tmp_path, pair_row(1, local_text="𠮶𨋢𡃁", standard_text_length=12345))

    pairs_import_jsonl(project=project, path=path)

    stored = PagePair.objects.get(project=project)
    assert stored.local_lead_length == len(pair_row()["local_lead"])
    assert stored.local_text_length == 3  # code points, not UTF-16 units (6) or bytes (12)
    assert stored.standard_text == ""
    assert stored.standard_text_length == 12345


def test_reimporting_the_same_file_creates_nothing_new(project, tmp_path):
    path = write_lines(tmp_path, pair_row(1), pair_row(2))
    pairs_import_jsonl(project=project, path=path)

    again = pairs_import_jsonl(project=project, path=path)

    assert again.ok
    assert (again.created, again.already_present) == (0, 2)
    assert PagePair.objects.filter(project=project).count() == 2


def test_existing_titles_are_left_untouched_by_an_import(project, tmp_path):
    pairs_import_jsonl(project=project, path=write_lines(tmp_path, pair_row(1)))

    report = pairs_import_jsonl(
        project=project, path=write_lines(tmp_path, pair_row(1, local_lead="changed"), pair_row(2), name="b.jsonl")
    )

    assert (report.created, report.already_present) == (1, 1)
    assert PagePair.objects.get(project=project, local_title="缽仔糕 1").local_lead != "changed"


def test_the_same_title_may_exist_in_another_project(project, other_project, tmp_path):
    path = write_lines(tmp_path, pair_row(1))
    pairs_import_jsonl(project=project, path=path)

    report = pairs_import_jsonl(project=other_project, path=path)

    assert report.created == 1


def test_broken_json_names_the_line_and_position_and_writes_nothing(project, tmp_path):
    path = write_lines(tmp_path, pair_row(1), '{"local_title": "x", oops}', pair_row(3))

    report = pairs_import_jsonl(project=project, path=path)

    assert not report.ok
    assert problems(report) == [(2, None)]
    assert "invalid JSON" in report.problems[0].message
    assert "column 22" in report.problems[0].message
    assert report.created == 0
    assert not PagePair.objects.filter(project=project).exists()


def test_an_error_after_a_full_batch_rolls_back_the_rows_already_inserted(project, tmp_path, monkeypatch):
    monkeypatch.setattr("wikiqa.importers.writer.BATCH_ROWS", 2)
    path = write_lines(tmp_path, *(pair_row(n) for n in range(1, 6)), "[]")

    report = pairs_import_jsonl(project=project, path=path)

    assert problems(report) == [(6, None)]
    assert "must be a JSON object, not an array" in report.problems[0].message
    assert not PagePair.objects.filter(project=project).exists()


def test_missing_empty_and_mistyped_fields_are_each_named(project, tmp_path):
    row = pair_row(1, standard_lead="", local_text=42, metadata=["a"], local_text_length=-1)
    del row["local_url"]
    path = write_lines(tmp_path, row, pair_row(2, standard_url="not a url", local_titel="typo"))

    report = pairs_import_jsonl(project=project, path=path)

    assert set(problems(report)) == {
        (1, "local_url"),
        (1, "standard_lead"),
        (1, "local_text"),
        (1, "local_text_length"),
        (1, "metadata"),
        (2, "standard_url"),
        (2, "local_titel"),
    }
    messages = {(p.line, p.field): p.message for p in report.problems}
    assert messages[(1, "local_url")] == "is missing"
    assert messages[(1, "standard_lead")] == "is empty"
    assert messages[(1, "local_text")] == "must be a string, not a number"
    assert not PagePair.objects.exists()


def test_a_title_duplicated_within_the_file_is_refused(project, tmp_path):
    path = write_lines(tmp_path, pair_row(1), pair_row(2), pair_row(1, local_lead="again"))

    report = pairs_import_jsonl(project=project, path=path)

    assert problems(report) == [(3, "local_title")]
    assert "line 1" in report.problems[0].message
    assert not PagePair.objects.exists()


def test_titles_repeated_batches_later_name_their_first_lines(project, tmp_path):
    path = write_lines(tmp_path, *(pair_row(n) for n in range(2_500)), pair_row(2_400), pair_row(7))

    report = pairs_import_jsonl(project=project, path=path, dry_run=True)

    assert problems(report) == [(2_501, "local_title"), (2_502, "local_title")]
    assert "is already on line 2401 of this import" in report.problems[0].message
    assert "is already on line 8 of this import" in report.problems[1].message


def test_text_postgres_cannot_store_is_refused_not_mangled(project, tmp_path):
    nul = json.dumps(pair_row(1, local_lead="before\x00after"))  # written as \u0000
    lone_surrogate = json.dumps(pair_row(2, local_lead="half \ud800 a pair"))  # written as \ud800
    path = write_lines(tmp_path, nul, lone_surrogate)

    report = pairs_import_jsonl(project=project, path=path)

    assert problems(report) == [(1, "local_lead"), (2, "local_lead")]
    assert "NUL" in report.problems[0].message
    assert "surrogate" in report.problems[1].message
    assert not PagePair.objects.exists()


def test_an_oversized_file_is_refused_before_reading(project, tmp_path, settings):
    path = write_lines(tmp_path, pair_row(1))
    settings.IMPORT_MAX_BYTES = path.stat().st_size - 1

    report = pairs_import_jsonl(project=project, path=path)

    assert not report.ok
    assert problems(report) == [(None, None)]
    assert "IMPORT_MAX_BYTES" in report.problems[0].message
    assert not PagePair.objects.exists()


def test_a_non_utf8_file_is_refused_with_the_byte_position(project, tmp_path):
    good = (json.dumps(pair_row(1), ensure_ascii=False) + "\n").encode("utf-8")
    bad = b'{"local_title": "Stra' + "ße".encode("latin-1") + b'"}\n'
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(good + bad)

    report = pairs_import_jsonl(project=project, path=path)

    assert problems(report) == [(2, None)]
    offset = len(good) + len(b'{"local_title": "Stra')
    assert f"byte offset {offset}" in report.problems[0].message
    assert "0xdf" in report.problems[0].message
    assert not PagePair.objects.exists()


def test_blank_lines_and_a_byte_order_mark_are_accepted(project, tmp_path):
    path = tmp_path / "bom.jsonl"
    first, second = (json.dumps(pair_row(n)).encode() for n in (1, 2))
    path.write_bytes(b"\xef\xbb\xbf" + first + b"\r\n\n   \n" + second)  # no newline after the last line

    report = pairs_import_jsonl(project=project, path=path)

    assert report.ok, report.problems
    assert report.created == 2 and report.lines == 2


def test_a_repeated_key_on_one_line_is_refused(project, tmp_path):
    line = json.dumps(pair_row(1))[:-1] + ', "local_lead": "second"}'

    report = pairs_import_jsonl(project=project, path=write_lines(tmp_path, line))

    assert problems(report) == [(1, "local_lead")]


def test_dry_run_counts_without_writing(project, tmp_path):
    pairs_import_jsonl(project=project, path=write_lines(tmp_path, pair_row(1), name="first.jsonl"))
    path = write_lines(tmp_path, pair_row(1), pair_row(2), pair_row(3))

    report = pairs_import_jsonl(project=project, path=path, dry_run=True)

    assert report.ok and report.dry_run
    assert (report.created, report.already_present) == (2, 1)
    assert PagePair.objects.filter(project=project).count() == 1


def test_dry_run_reports_problems_too(project, tmp_path):
    report = pairs_import_jsonl(project=project, path=write_lines(tmp_path, pair_row(1), "nope"), dry_run=True)

    assert problems(report) == [(2, None)]


def test_report_as_dict_is_ready_for_the_api(project, tmp_path):
    report = pairs_import_jsonl(project=project, path=write_lines(tmp_path, pair_row(1, local_title=7)))

    assert report.as_dict() == {
        "ok": False,
        "dry_run": False,
        "lines": 1,
        "created": 0,
        "already_present": 0,
        "counts": {
            "screenings": {},
            "items": {},
            "item_statuses": {},
            "spans": {},
            "source_rows": {},
            "review_outcomes": {},
        },
        "files": [{"name": "pairs.jsonl", "format": "jsonl", "size": report.files[0]["size"]}],
        "problems": [
            {
                "file": None,
                "line": 1,
                "record": None,
                "field": "local_title",
                "message": "must be a string, not a number",
            }
        ],
        "problems_total": 1,
        "warnings": [],
        "warnings_total": 0,
        "unknown_regions": {},
    }


def test_a_file_wrong_on_every_line_gets_a_bounded_report(project, tmp_path, monkeypatch):
    monkeypatch.setattr("annotation.importers.report.MAX_REPORTED_PROBLEMS", 3)

    report = pairs_import_jsonl(project=project, path=write_lines(tmp_path, *(["x"] * 10)))

    assert len(report.problems) == 3
    assert report.problems_total == 10


def test_import_streams_in_batches(project, tmp_path, monkeypatch, django_assert_max_num_queries):
    monkeypatch.setattr("wikiqa.importers.writer.BATCH_ROWS", 50)
    path = write_lines(tmp_path, *(pair_row(n) for n in range(1, 501)))

    # Per batch: one lookup of existing titles, one savepoint, the inserts, one release (plus the outer
    # transaction). SQLite caps the variables of one statement, so a batch of 50 may take more than one insert.
    fields = [f for f in PagePair._meta.get_fields() if f.concrete and not f.many_to_many and not f.primary_key]
    inserts = math.ceil(50 / connection.ops.bulk_batch_size(fields, [None] * 50))
    with django_assert_max_num_queries(10 * (3 + inserts) + 2):
        report = pairs_import_jsonl(project=project, path=path)

    assert report.created == 500


@pytest.mark.parametrize(
    "url",
    [
        "https://de.wikipedia.org/wiki/Maibaum",
        "https://de.wikipedia.org/wiki/A b",
        "https://de.wikipedia.org/wiki/x\n",
        "https://de.wikipedia.org/wiki/\u3000x",
        "https://de.wikipedia.org",
        "https://de.wikipedia.org#part",
        "HTTPS://DE.WIKIPEDIA.ORG/wiki/x",
        "https://de.wikipedia.org:8080/x",
        "https://[::1]/x",
        "https://[zz]/x",
        "https://-a.org/x",
        "https://x/y",
        "ftp://de.wikipedia.org/x",
        "http://a?b@example.com",
        "http://localhost?x@example.com/",
        "https://de.wikipedia.org/" + "a" * 3000,
    ],
)
def test_a_url_is_checked_once_per_site_with_the_same_verdict_as_djangos_validator(url):
    from django.core.exceptions import ValidationError
    from django.core.validators import URLValidator

    from wikiqa.importers.checks import _is_url

    try:
        URLValidator(schemes=["http", "https"])(url)
        valid = True
    except ValidationError:
        valid = False

    assert _is_url(url) is valid
