"""The researcher's calculator through its three doors: the command, the page and the API."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from review import calculator
from tests.conftest import api_as

# Statistics from an uploaded file: the database only signs the visitor in.
pytestmark = pytest.mark.one_engine

# Krippendorff (2011) reliability data, long format; published α_nominal = 0.743, α_interval = 0.849.
KRIPPENDORFF_ROWS = [
    ("A", [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None]),
    ("B", [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3]),
    ("C", [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None]),
    ("D", [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]),
]


def krippendorff_csv(header: str = "unit,rater,value,comment") -> str:
    lines = [header]
    for rater, values in KRIPPENDORFF_ROWS:
        for unit, value in enumerate(values, start=1):
            if value is not None:
                lines.append(f"u{unit},{rater},{value},free text")
    return "\n".join(lines) + "\n"


def run_command(tmp_path, text: str | bytes, *args: str) -> dict:
    path = tmp_path / "ratings.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    out = io.StringIO()
    call_command("agreement_compute", "--ratings", str(path), *args, stdout=out)
    return json.loads(out.getvalue())


def command_error(tmp_path, text: str | bytes, *args: str) -> str:
    with pytest.raises(CommandError) as error:
        run_command(tmp_path, text, *args)
    return str(error.value)


# The command


def test_command_prints_every_statistic_as_json_for_krippendorffs_example(tmp_path):
    result = run_command(tmp_path, krippendorff_csv(), "--level", "nominal", "--bootstrap", "200", "--seed", "5")

    alpha = result["statistics"]["krippendorff_alpha"]
    assert round(alpha["value"], 3) == 0.743
    assert alpha["ci_low"] < alpha["value"] < alpha["ci_high"]
    assert (result["n_units"], result["n_raters"], result["n_judgments"], result["excluded_units"]) == (11, 4, 40, 1)
    assert result["bootstrap"]["replicates"] == 200 and result["bootstrap"]["seed"] == 5
    assert result["raters"] == ["A", "B", "C", "D"]


def test_command_reads_interval_values_with_columns_in_any_order_and_a_byte_order_mark(tmp_path):
    text = "\ufeff" + krippendorff_csv("comment,value,rater,unit")
    reordered = []
    for line in text.splitlines()[1:]:
        unit, rater, value, comment = line.split(",")
        reordered.append(f"{comment},{value},{rater},{unit}")
    text = text.splitlines()[0] + "\n" + "\n".join(reordered) + "\n"

    result = run_command(tmp_path, text, "--level", "interval", "--bootstrap", "0")

    assert round(result["statistics"]["krippendorff_alpha"]["value"], 3) == 0.849
    assert result["statistics"]["krippendorff_alpha"]["ci_low"] is None


def test_the_same_seed_gives_the_same_interval(tmp_path):
    first = run_command(tmp_path, krippendorff_csv(), "--level", "ordinal", "--bootstrap", "300", "--seed", "9")
    again = run_command(tmp_path, krippendorff_csv(), "--level", "ordinal", "--bootstrap", "300", "--seed", "9")
    assert first == again


def test_command_reports_strata_from_a_column(tmp_path):
    text = "unit,rater,value,topic\n" + "".join(
        f"{unit},{rater},{value},{topic}\n"
        for unit, topic, values in [("q1", "history", "pp"), ("q2", "history", "pf"), ("q3", "sport", "ff")]
        for rater, value in zip("ab", values, strict=True)
    ).replace(",p,", ",pass,").replace(",f,", ",flag,")

    result = run_command(tmp_path, text, "--level", "nominal", "--strata-column", "topic", "--categories", "pass,flag")

    strata = {stratum["label"]: stratum["statistics"] for stratum in result["strata"]}
    assert set(strata) == {"history", "sport"}
    assert strata["history"]["percent_agreement"]["value"] == 0.5
    assert strata["sport"]["percent_agreement"]["value"] == 1.0
    assert strata["sport"]["krippendorff_alpha"]["value"] is None
    assert "No variation" in strata["sport"]["krippendorff_alpha"]["note"]
    assert strata["sport"]["gwet_ac1"]["value"] == 1.0  # q = 2 declared: p_a = 1, p_e = 0


@pytest.mark.parametrize(
    ("text", "level", "expected"),
    [
        ("unit,rater,value\nq1,a,3\nq1,b,three\n", "interval", "line 3, column 'value': 'three' is not a number"),
        ("unit,rater,value\nq1,a,3\nq1,,3\n", "interval", "line 3, column 'rater': is empty"),
        ("unit,rater,value\nq1,a,3\nq1,b,\n", "nominal", "line 3, column 'value': is empty"),
        ("unit,rater,value\nq1,a,3\nq1,a,4\n", "nominal",
         "line 3, column 'rater': rater 'a' already judged unit 'q1' on line 2"),
        ("unit,rater,score\nq1,a,3\n", "nominal", "line 1: the header has no column 'value'"),
        ("unit,rater,value\nq1,a\n", "nominal", "line 2: has 2 column(s); the header has 3"),
        ("unit,rater,value\n", "nominal", "The file has a header but no ratings"),
        ("", "nominal", "The file is empty"),
        (b"unit,rater,value\nq1,a,\xff\n", "nominal", "not UTF-8"),
        ("unit,rater,value\nq1,a,9\nq1,b,1\n", "ordinal",
         "line 2, column 'value': value 9.0 is not one of the declared categories"),
    ],
)  # fmt: skip
def test_a_bad_file_is_refused_naming_line_and_column(tmp_path, text, level, expected):
    args = ["--level", level] + (["--categories", "1,2,3"] if level == "ordinal" else [])
    assert expected in command_error(tmp_path, text, *args)


def test_windows_line_endings_and_non_latin_names_are_read_as_they_are(tmp_path):
    text = "unit,rater,value\r\n茶餐廳,陳,合格\r\n茶餐廳,李,合格\r\n深水埗,陳,不合格\r\n深水埗,李,合格\r\n"

    result = run_command(tmp_path, text.encode("utf-8"), "--level", "nominal", "--bootstrap", "0")

    assert result["raters"] == ["陳", "李"]
    assert result["categories"] == ["不合格", "合格"]
    assert result["statistics"]["percent_agreement"]["value"] == 0.5


def test_a_unit_in_two_strata_is_refused_naming_both_lines(tmp_path):
    text = "unit,rater,value,topic\nq1,a,1,history\nq1,b,1,sport\n"
    message = command_error(tmp_path, text, "--level", "nominal", "--strata-column", "topic")
    assert "line 3, column 'topic': unit 'q1' is in stratum 'history' on line 2 but 'sport' here" in message


def test_a_missing_file_is_reported(tmp_path):
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("agreement_compute", "--ratings", str(tmp_path / "nope.csv"), "--level", "nominal")


def test_one_rater_only_is_reported_not_crashed_on(tmp_path):
    result = run_command(tmp_path, "unit,rater,value\nq1,a,1\nq2,a,2\n", "--level", "nominal")
    assert result["statistics"]["krippendorff_alpha"]["value"] is None
    assert "one rater" in result["statistics"]["krippendorff_alpha"]["note"]
    assert result["excluded_units"] == 2


# The page


def upload(text: str, name: str = "ratings.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/csv")


def test_coordinator_uploads_ratings_sees_the_table_and_downloads_json_and_csv(client, coordinator):
    client.force_login(coordinator)

    response = client.post(
        reverse("agreement_calculator"),
        {"ratings": upload(krippendorff_csv()), "level": "interval", "bootstrap": 100, "seed": 1},
    )

    assert response.status_code == 200
    page = response.content.decode()
    assert "Krippendorff&#x27;s alpha" in page and "0.849" in page
    assert "Download JSON" in page

    downloaded = client.get(reverse("agreement_calculator_download", args=["json"]))
    assert downloaded["Content-Disposition"] == 'attachment; filename="agreement.json"'
    data = json.loads(downloaded.content)
    assert round(data["statistics"]["krippendorff_alpha"]["value"], 3) == 0.849

    as_csv = client.get(reverse("agreement_calculator_download", args=["csv"]))
    rows = list(csv.reader(io.StringIO(as_csv.content.decode())))
    assert rows[0][:5] == ["scope", "rater_a", "rater_b", "stratum", "statistic"]
    assert rows[1][4] == "krippendorff_alpha" and round(float(rows[1][5]), 3) == 0.849
    assert any(row[0] == "pair" for row in rows)


def test_the_page_shows_a_bad_row_by_line_and_keeps_no_result(client, annotator):
    client.force_login(annotator)

    response = client.post(
        reverse("agreement_calculator"),
        {"ratings": upload("unit,rater,value\nq1,a,1\nq1,b,x\n"), "level": "ratio", "bootstrap": 10, "seed": 1},
    )

    assert response.status_code == 400
    assert "line 3, column &#x27;value&#x27;" in response.content.decode()
    assert "agreement-result" not in response.content.decode()
    assert client.get(reverse("agreement_calculator_download", args=["json"])).status_code == 302


def test_the_page_refuses_files_over_its_row_limit_and_points_to_the_command(client, reviewer, monkeypatch):
    monkeypatch.setattr(calculator, "MAX_PAGE_ROWS", 5)
    monkeypatch.setattr("review.views.calculator.MAX_PAGE_ROWS", 5)
    client.force_login(reviewer)

    response = client.post(
        reverse("agreement_calculator"),
        {"ratings": upload(krippendorff_csv()), "level": "nominal", "bootstrap": 10, "seed": 1},
    )

    assert response.status_code == 400
    assert "more than 5 ratings" in response.content.decode()
    assert "agreement_compute --ratings" in response.content.decode()


def test_an_htmx_upload_gets_only_the_calculator_fragment(client, coordinator):
    client.force_login(coordinator)

    response = client.post(
        reverse("agreement_calculator"),
        {"ratings": upload(krippendorff_csv()), "level": "nominal", "bootstrap": 10, "seed": 1},
        HTTP_HX_REQUEST="true",
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="calculator">') and "<html" not in body
    assert response["Vary"] and "HX-Request" in response["Vary"]


def test_a_rater_name_with_markup_is_escaped(client, coordinator):
    client.force_login(coordinator)
    text = "unit,rater,value\nq1,<script>x</script>,1\nq1,b,1\nq2,<script>x</script>,2\nq2,b,1\n"

    response = client.post(
        reverse("agreement_calculator"), {"ratings": upload(text), "level": "nominal", "bootstrap": 10, "seed": 1}
    )

    assert "<script>x</script>" not in response.content.decode()
    assert "&lt;script&gt;x&lt;/script&gt;" in response.content.decode()


def test_an_unknown_download_format_is_404(client, coordinator):
    client.force_login(coordinator)
    client.post(
        reverse("agreement_calculator"),
        {"ratings": upload(krippendorff_csv()), "level": "nominal", "bootstrap": 10, "seed": 1},
    )
    assert client.get(reverse("agreement_calculator_download", args=["xlsx"])).status_code == 404


# The API


def test_the_api_answers_the_same_json_as_the_command(tmp_path, annotator):
    expected = run_command(tmp_path, krippendorff_csv(), "--level", "ordinal", "--bootstrap", "150", "--seed", "3")

    response = api_as(annotator).post(
        "/api/agreement/calculate/",
        {"file": upload(krippendorff_csv()), "level": "ordinal", "bootstrap": 150, "seed": 3},
        format="multipart",
    )

    assert response.status_code == 200, response.content
    assert response.json() == expected
    assert round(response.json()["statistics"]["krippendorff_alpha"]["value"], 3) == 0.815


def test_the_api_refuses_a_bad_row_naming_line_and_column(annotator):
    response = api_as(annotator).post(
        "/api/agreement/calculate/",
        {"file": upload("unit,rater,value\nq1,a,1\nq1,b,1\nq1,b,2\n"), "level": "nominal"},
        format="multipart",
    )

    assert response.status_code == 400
    assert response.json()["field"] == "file"
    assert response.json()["detail"].startswith("line 4, column 'rater': rater 'b' already judged unit 'q1'")


def test_the_api_refuses_an_unknown_level_naming_the_field(annotator):
    response = api_as(annotator).post(
        "/api/agreement/calculate/", {"file": upload(krippendorff_csv()), "level": "cardinal"}, format="multipart"
    )

    assert response.status_code == 400
    assert response.json()["field"] == "level"


def test_the_api_refuses_too_many_bootstrap_resamples(annotator):
    response = api_as(annotator).post(
        "/api/agreement/calculate/",
        {"file": upload(krippendorff_csv()), "level": "nominal", "bootstrap": 10**6},
        format="multipart",
    )

    assert response.status_code == 400
    assert response.json()["field"] == "bootstrap"
