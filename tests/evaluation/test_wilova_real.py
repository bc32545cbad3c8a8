"""The real Bavarian–German WiLoVa release (../shared/fixtures), imported, released and scored: the gold scores 100
in every scenario, kind and metric, an empty answer 0, another item's gold low; the item without gold is left out,
counted and named."""

from __future__ import annotations

import json
import os

import pytest

from annotation.importers.sources import ImportSource
from annotation.services.members import membership_set
from exports import services as releases
from exports.models import Release
from tests import factories
from tests.conftest import api_as
from tests.evaluation.conftest import prompt_lines
from tests.evaluation.test_runs import scored
from tests.wikiqa.conftest import BASE_NAME, QUALITY_NAME, WILOVA_ZIP, wilova_bytes
from wikiqa.importers.services import pairs_import

pytestmark = pytest.mark.skipif(not WILOVA_ZIP.exists(), reason="the shared WiLoVa fixture is not beside this checkout")
SCENARIOS = ("question_only", "standard_lead", "local_lead", "both_leads")


@pytest.fixture
def wilova_run(coordinator, django_capture_on_commit_callbacks):
    project = factories.project(coordinator, slug="wilova-bar-deu", local_language="bar", standard_language="deu")
    sources = [ImportSource(name=name, data=wilova_bytes(name)) for name in (BASE_NAME, QUALITY_NAME)]
    assert pairs_import(project=project, paths=sources).ok
    release = releases.release_build_now(project=project, user=coordinator, seed=1)
    assert release.status == Release.Status.DONE, release.error
    researcher = factories.user("wilova_researcher")
    membership_set(project=project, user=researcher, roles={"researcher"})

    lines = {scenario: prompt_lines(release, scenario) for scenario in SCENARIOS}
    predictions = []
    for scenario, scenario_lines in lines.items():
        golds = [line["answer_standard"] for line in scenario_lines]
        shuffled = golds[1:] + golds[:1]  # each item gets the next item's gold
        for line, other in zip(scenario_lines, shuffled, strict=True):
            for model, answer in (("oracle", line["answer_standard"]), ("empty", ""), ("shuffled", other)):
                predictions.append(
                    {"id": line["id"], "scenario": scenario, "prediction": f"<answer>{answer}</answer>", "model": model}
                )
    data = "\n".join(json.dumps(p, ensure_ascii=False) for p in predictions).encode() + b"\n"
    api = api_as(researcher)
    run = scored(api, project.slug, data, django_capture_on_commit_callbacks)
    return {"api": api, "run": run, "lines": lines, "slug": project.slug}


def test_the_real_bavarian_release_scores_gold_100_empty_0_and_shuffled_gold_low(wilova_run):
    run, lines = wilova_run["run"], wilova_run["lines"]
    rows = [row for row in run["results"] if row["stratum"] == "all"]
    kinds = {row["kind"] for row in rows}
    assert kinds == {"lead", "document"}  # scored apart, never mixed in one table
    cells = {(r["kind"], r["mode"], r["metric"], r["scenario"], r["model"]): r for r in rows}
    checked = 0
    for (kind, mode, metric, scenario, model), row in cells.items():
        if model == "oracle":
            assert row["mean"] == pytest.approx(1.0), (kind, mode, metric, scenario)
        elif model == "empty":
            assert row["mean"] == pytest.approx(0.0), (kind, mode, metric, scenario)
        else:
            assert row["mean"] < 0.3, (kind, mode, metric, scenario, row["mean"])
        assert row["n"] == cells[(kind, mode, metric, scenario, "oracle")]["n"] > 0
        checked += 1
    assert checked >= 2 * 4 * 3 * 4  # two kinds, four scenarios, three models, at least four metrics each
    # The lead QA with a question and no answer is left out of every score, counted in its cell and named.
    lead_cell = cells[("lead", "recommended", "chrf_pp", "question_only", "oracle")]
    lead_lines = [line for line in lines["question_only"] if line["kind"] == "lead"]
    no_gold = [line["id"] for line in lead_lines if not line["answer_standard"].strip()]
    assert len(no_gold) == 1
    assert (lead_cell["n"], lead_cell["left_out"]) == (len(lead_lines) - 1, 1)
    assert run["counts"]["left_out_no_gold"] == no_gold
    # Items imported from the study's spreadsheets have no author on the platform: one named cell, not dropped.
    assert run["counts"]["annotator_unknown"] == len(lines["question_only"])
    annotators = {r["value"] for r in run["results"] if r["stratum"] == "annotator"}
    assert annotators == {"(no author recorded)"}

    if os.environ.get("WILOVA_TABLE"):  # the Markdown table a researcher downloads, for the record
        base = f"/api/projects/{wilova_run['slug']}/evaluation/runs/{run['id']}/results.md"
        print(wilova_run["api"].get(base).content.decode())
