"""Geo-bias odds ratios, inductive vs deductive: the odds of a right answer to an inductive question over the odds
for a deductive one, per context condition and pooled, with Woolf's interval equal to statsmodels' `Table2x2`
(Haldane–Anscombe +0.5 on every cell only when a cell is 0, checked by hand), unparseable answers counted wrong
and their number shown; on the run page, in the API, results.json and every table download."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import Table2x2

from evaluation import services, tables
from evaluation.gold import release_gold
from evaluation.scoring import ODDS_CELLS
from evaluation.statistics import odds_ratio_woolf
from tests.conftest import api_as
from tests.evaluation import test_geobias
from tests.evaluation.test_geobias import records

entity_release = test_geobias.entity_release  # the geo-bias tests' release, a fixture


@pytest.mark.parametrize("table", [(7, 3, 2, 8), (12, 30, 25, 9), (1, 1, 1, 1), (40, 2, 5, 60)])
def test_woolf_odds_ratio_and_interval_equal_statsmodels(table):
    a, b, c, d = table
    expected = Table2x2(np.array([[a, b], [c, d]], dtype=float), shift_zeros=False)
    found = odds_ratio_woolf(a, b, c, d)
    low, high = expected.oddsratio_confint(alpha=0.05, method="normal")
    assert (found.value, found.low, found.high) == (
        pytest.approx(expected.oddsratio),
        pytest.approx(low),
        pytest.approx(high),
    )
    assert not found.corrected


def test_a_zero_cell_adds_half_to_every_cell_checked_by_hand():
    found = odds_ratio_woolf(3, 0, 2, 4)
    # by hand: (3.5 · 4.5) / (0.5 · 2.5) = 12.6; SE = √(1/3.5 + 1/0.5 + 1/2.5 + 1/4.5) = 1.705267…
    se = math.sqrt(1 / 3.5 + 1 / 0.5 + 1 / 2.5 + 1 / 4.5)
    assert found.corrected
    assert found.value == pytest.approx(12.6)
    assert found.low == pytest.approx(0.4454966, rel=1e-6) == pytest.approx(12.6 * math.exp(-1.959964 * se), rel=1e-6)
    assert found.high == pytest.approx(356.36635, rel=1e-6)
    shifted = Table2x2(np.array([[3.5, 0.5], [2.5, 4.5]]), shift_zeros=False)  # the same table, corrected
    assert (found.low, found.high) == tuple(pytest.approx(x) for x in shifted.oddsratio_confint())
    # statsmodels' own default replaces only the zero cell by 0.5: another convention, another number
    assert Table2x2(np.array([[3, 0], [2, 4]])).oddsratio == pytest.approx(12.0)


def test_no_odds_ratio_when_one_direction_has_no_item():
    found = odds_ratio_woolf(0, 0, 3, 4)
    assert (found.value, found.low, found.high, found.corrected) == (None, None, None, False)


def scored_run(release, researcher, reply):
    lines = records(release)
    asked = release_gold(release).scenarios
    rows = [
        {"id": r["id"], "scenario": c, "prediction": reply(r, c), "model": "geo"}
        for c in ("none", "perfect", "misleading", "distraction")
        for r in lines
        if r["id"] in asked[c]
    ]
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    run = services.evaluation_run_create(
        project=release.project, release=release, user=researcher, data=data, enqueue=False
    )
    run = services.evaluation_run_score(run_id=run.pk)
    assert run is not None and run.status == "done", run and run.error
    return run, lines, asked


def test_odds_ratios_per_condition_and_pooled_with_unparseable_counted_wrong(entity_release, researcher, client):
    right_letter = {r["id"]: "ABCD"[r["answer"]] for r in records(entity_release)}
    inductive = sorted(r["id"] for r in records(entity_release) if r["direction"] == "inductive")
    garbled = inductive[0]

    def reply(record, condition):
        item = record["id"]
        if condition == "none" and item == garbled:
            return "no JSON here"  # unparseable: wrong, and counted
        right = right_letter[item]
        wrong = "ABCD"[("ABCD".index(right) + 1) % 4]
        if condition == "perfect":
            letter = right  # every answer right: two zero cells, the corrected table
        elif condition == "none":
            letter = right if (record["direction"] == "inductive") == (int(item.rsplit("e", 1)[-1]) % 3 != 0) else wrong
        else:
            letter = right if int(item.rsplit("e", 1)[-1]) % 2 else wrong
        return json.dumps({"response": letter})

    run, lines, asked = scored_run(entity_release, researcher, reply)
    body = api_as(researcher).get(f"/api/projects/companies/evaluation/runs/{run.pk}/").json()
    ratios = {row["scenario"]: row for row in body["results"] if row["metric"] == "odds_ratio"}
    assert set(ratios) == {*asked, "all"}

    direction = {r["id"]: r["direction"] for r in lines}
    expected_cells = {}
    for condition in [*asked, "all"]:
        cells = dict.fromkeys(ODDS_CELLS, 0)
        for r in lines:
            for c in asked if condition == "all" else [condition]:
                if r["id"] not in asked[c]:
                    continue
                text = reply(r, c)
                letter = json.loads(text)["response"] if text.startswith("{") else ""
                outcome = "right" if letter == right_letter[r["id"]] else "wrong"
                cells[f"{direction[r['id']]}_{outcome}"] += 1
                cells[f"{direction[r['id']]}_unparseable"] += not text.startswith("{")
        expected_cells[condition] = cells

    for condition, row in ratios.items():
        cells = expected_cells[condition]
        assert row["cells"] == cells
        assert (row["stratum"], row["value"], row["mode"]) == ("direction", "inductive vs deductive", "recommended")
        a, b, c, d = (cells[k] for k in ODDS_CELLS[:4])
        assert row["n"] == a + b + c + d
        zero = 0 in (a, b, c, d)
        table = np.array([[a, b], [c, d]], dtype=float) + (0.5 if zero else 0.0)
        expected = Table2x2(table, shift_zeros=False)
        low, high = expected.oddsratio_confint()
        assert (row["mean"], row["ci_low"], row["ci_high"]) == (
            pytest.approx(expected.oddsratio),
            pytest.approx(low),
            pytest.approx(high),
        )
        assert row["interval"] == ("woolf_haldane_anscombe" if zero else "woolf")
    assert ratios["perfect"]["interval"] == "woolf_haldane_anscombe"  # every answer right: no wrong ones
    assert ratios["none"]["cells"]["inductive_unparseable"] == 1

    document = json.loads(services.evaluation_run_results_download(run, "json"))
    assert [r for r in document["results"] if r["metric"] == "odds_ratio"] == list(ratios.values())
    markdown = services.evaluation_run_results_download(run, "md")
    assert "odds ratio" in markdown.lower() and "Woolf" in markdown and "Haldane–Anscombe" in markdown
    assert "Perfect context" in markdown and "\\[+0.5\\]" in markdown
    latex = services.evaluation_run_results_download(run, "tex")
    assert "Woolf" in latex and "Haldane" in latex
    tidy = list(csv.DictReader(io.StringIO(services.evaluation_run_results_download(run, "csv"))))
    pooled = next(line for line in tidy if (line["metric"], line["scenario"]) == ("odds_ratio", "all"))
    assert float(pooled["mean"]) == pytest.approx(ratios["all"]["mean"])
    assert {name: int(pooled[name]) for name in ODDS_CELLS} == ratios["all"]["cells"]
    table = tables.render(
        tables.run_grids(run.results, run.comparisons, draws=run.bootstrap_draws, seed=run.seed), "csv", title=""
    )
    grid = [line for line in csv.DictReader(io.StringIO(table)) if "odds ratios" in line["table"]]
    assert {line["row"] for line in grid} == {
        "No context",
        "Perfect context",
        "Misleading context",
        "Distraction context",
        "All conditions",
    }
    assert any(line["mean"] and float(line["mean"]) == pytest.approx(ratios["all"]["mean"]) for line in grid)

    client.force_login(researcher)
    html = client.get(run.get_absolute_url()).content.decode()
    assert 'id="odds-ratios-1"' in html and "All conditions" in html
    assert "Woolf" in html and "Haldane–Anscombe correction" in html
    # the odds ratios stay out of the accuracy tables and the leaderboard's metrics
    assert not any(row["metric"] == "odds_ratio" and row["stratum"] == "all" for row in body["results"])


def test_without_a_zero_cell_the_caption_says_no_correction(entity_release, researcher):
    right_letter = {r["id"]: "ABCD"[r["answer"]] for r in records(entity_release)}
    ids = sorted(right_letter)

    def reply(record, condition):
        right = right_letter[record["id"]]
        wrong = "ABCD"[("ABCD".index(right) + 1) % 4]
        return json.dumps({"response": right if ids.index(record["id"]) % 3 else wrong})

    run, _, _ = scored_run(entity_release, researcher, reply)
    rows = [row for row in run.results if row["metric"] == "odds_ratio" and row["scenario"] == "none"]
    assert 0 not in [rows[0]["cells"][k] for k in ODDS_CELLS[:4]]
    assert rows[0]["interval"] == "woolf"
