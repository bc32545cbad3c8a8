"""A run's tables and the leaderboard as downloads: CSV a dataframe reads, Markdown and LaTeX that print hostile
text as text, captions that state the mode, the interval convention and n."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.tables import Grid, latex_escape, markdown_escape, render
from tests.conftest import api_as
from tests.evaluation.conftest import predictions, write
from tests.evaluation.test_runs import scored

HOSTILE = r"a&b%c_d#e{f}g\h~i^j|k$l"


def row(mean, low, high, n):
    return {"mean": mean, "ci_low": low, "ci_high": high, "n": n, "left_out": 0}


def grid() -> Grid:
    return Grid(
        name="hostile",
        caption=f"Model {HOSTILE}: mean × 100 (95% interval), n. ⚠: fewer than 10 items.",
        stub="Scenario",
        columns=["ROUGE-L (recommended)", f"col {HOSTILE}"],
        rows=[(HOSTILE, [row(0.5, 0.25, 0.75, 40), None]), ("small", [row(1.0, None, None, 3), "text | cell"])],
    )


def test_latex_escapes_every_special_character_once():
    assert latex_escape(HOSTILE) == (
        r"a\&b\%c\_d\#e\{f\}g\textbackslash{}h\textasciitilde{}i\textasciicircum{}j\textbar{}k\$l"
    )
    tex = render([grid()], "tex", title=f"Run of {HOSTILE}")

    body = re.sub(r"\\text(backslash|asciitilde|asciicircum|bar)\{\}|\\[&%_#{}$]", "", tex)
    lines = [line for line in body.splitlines() if not line.startswith("%")]
    # What is left of the hostile text holds no special character but the table's own column separators.
    assert all("#" not in line and "%" not in line for line in lines)
    assert f"{latex_escape(HOSTILE)} & 50.0 (25.0--75.0), n=40 &  \\\\" in tex
    assert "small & 100.0, n=3 $^{\\dagger}$ & text \\textbar{} cell \\\\" in tex
    assert "\\caption{Model " + latex_escape(HOSTILE) in tex and "\\begin{tabular}{lrr}" in tex


def test_markdown_escapes_pipes_so_every_row_keeps_its_columns():
    md = render([grid()], "md", title="Run")

    table = [line for line in md.splitlines() if line.startswith("|")]
    assert len(table) == 4
    for line in table:
        assert len(re.findall(r"(?<!\\)\|", line)) == 4  # stub + two columns: four bars, the escaped ones aside
    assert markdown_escape("a|b") == r"a\|b" and "text \\| cell" in md
    assert "50.0 (25.0–75.0), n=40" in md and "100.0, n=3 ⚠" in md


def test_csv_is_one_tidy_line_per_cell_that_pandas_reads():
    frame = pd.read_csv(io.StringIO(render([grid()], "csv", title="", fixed={"project": "p", "run": 7})))

    assert list(frame.columns) == [
        "project", "run", "table", "row", "column", "mean", "ci_low", "ci_high", "n", "left_out", "text",
    ]  # fmt: skip
    assert len(frame) == 3  # the empty cell is no line
    first = frame.iloc[0]
    assert (first["row"], first["mean"], first["ci_low"], first["n"]) == (HOSTILE, 0.5, 0.25, 40)
    assert frame["run"].tolist() == [7, 7, 7]


@pytest.fixture
def bavarian_run(bar_world, django_capture_on_commit_callbacks):
    api = api_as(bar_world["researcher"])
    oracle = predictions(bar_world["release"], lambda line: f"<answer>{line['answer_standard']}</answer>")
    empty = predictions(bar_world["release"], lambda line: "", model="empty | model")
    run = scored(api, "bar-deu", oracle + empty, django_capture_on_commit_callbacks)
    return {**bar_world, "api": api, "run": run}


def test_a_runs_tables_download_as_markdown_and_latex_with_their_conventions(bavarian_run):
    api, run = bavarian_run["api"], bavarian_run["run"]
    base = f"/api/projects/bar-deu/evaluation/runs/{run['id']}/results."

    md = api.get(base + "md")
    tex = api.get(base + "tex")
    as_json = api.get(base + "json")

    assert md.status_code == tex.status_code == as_json.status_code == 200
    assert md["Content-Type"].startswith("text/markdown") and "attachment" in md["Content-Disposition"]
    text = md.content.decode()
    assert "release v1" in text and "Lead\\-section QA" not in text  # hyphens are not escaped
    assert "Lead-section QA, oracle: mean × 100 (95% interval), n by scenario" in text
    assert "paper parity (each study's conventions)" in text and "Wilson" in text and "bootstrap" in text
    assert "| Question only | 100.0" in text  # the gold scores 100
    assert "empty \\| model" in text
    latex = tex.content.decode()
    assert "\\toprule" in latex and "empty \\textbar{} model" in latex
    assert "+0.0, p Holm 1, n=2" in text  # a single page pair: no interval, and none pretended
    assert as_json.json()["provenance"]["release_version"] == 1 and as_json.json()["results"] == run["results"]
    assert api.get(base + "xls").status_code == 404
    strata = {(row["stratum"], row["value"]) for row in run["results"]}
    assert {("verification", "not_checked"), ("review", "accepted as first written")} <= strata
    assert "| Review history | Question only |" in text


def test_the_leaderboard_downloads_as_csv_markdown_and_latex(client, bavarian_run):
    client.force_login(bavarian_run["researcher"])
    page = client.get(reverse("evaluation_leaderboard", args=["bar-deu"])).content.decode()
    link = re.search(r'id="leaderboard-download-csv" href="([^"]+)"|href="([^"]+)" id="leaderboard-download-csv"', page)
    assert link is not None
    url = (link[1] or link[2]).replace("&amp;", "&")

    frame = pd.read_csv(io.StringIO(client.get(url).content.decode()))
    md = client.get(url.replace("leaderboard.csv", "leaderboard.md")).content.decode()
    tex = bavarian_run["api"].get("/api/projects/bar-deu/evaluation/leaderboard.tex").content.decode()

    oracle = frame[frame["row"].str.startswith("oracle")]
    assert set(oracle["mean"]) == {1.0} and set(frame["metric"]) == {"rouge_l"}
    assert set(frame["mode"]) == {"recommended"} and set(frame["release_version"]) == {1}
    assert "ROUGE-L F1, recommended (language-aware): mean × 100 with its percentile bootstrap" in md
    assert "\\caption{" in tex and "oracle (run" in tex


def test_the_command_writes_markdown_and_latex_and_prints_the_leaderboard(bar_world, tmp_path, capsys):
    oracle = predictions(bar_world["release"], lambda line: f"<answer>{line['answer_standard']}</answer>")
    call_command("evaluate", "bar-deu", "1", str(write(tmp_path, "p.jsonl", oracle)), "--out", str(tmp_path / "out"))
    capsys.readouterr()

    call_command("evaluation_leaderboard", "bar-deu", "--format", "md")

    assert "| oracle (run" in capsys.readouterr().out
    assert (tmp_path / "out" / "results.md").read_text().startswith("# ")
    assert "\\begin{table}" in (tmp_path / "out" / "results.tex").read_text()
