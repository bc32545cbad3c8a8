"""A run compared with a baseline run of the same release, item by item, under one correct/incorrect measure.

The measure is a proportion metric of the scores (exact match, strict or tolerant letter accuracy) or a judge's
verdict (after people's overrides; YES and CORRECT are correct, NO, INCORRECT and NOT_ATTEMPTED incorrect; unscored and
failed items are not comparable). Items are paired by scenario and
item id; a flip is correct ↔ incorrect; regressions (correct in the baseline, incorrect here) come first. The paired
difference is the mean of (this − baseline) over comparable pairs with a percentile bootstrap interval resampled by
page pair, and an exact McNemar test on the discordant pairs (evaluation/statistics.py, as the scenario Δ).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from common.errors import InvalidInput
from evaluation.models import EvaluationRun, JudgedItem, Judgment, Prediction, Verdict
from evaluation.scoring import METRIC_NAMES, PROPORTIONS
from evaluation.services import evaluation_run_gold
from evaluation.statistics import bootstrap_means, mcnemar_exact

OTHER_ROWS_SHOWN = 200
ORDER = {"regression": 0, "improvement": 1, "not comparable": 2, "both incorrect": 3, "both correct": 4}


def _metric_keys(run: EvaluationRun) -> list[str]:
    keys = {f"{row['mode']}:{row['metric']}" for row in run.results if row.get("metric") in PROPORTIONS}
    return sorted(keys)


# A judge's verdict as an outcome: correct, incorrect (a three-way NOT_ATTEMPTED is not correct), or not comparable.
OUTCOMES: dict[str, bool] = {
    Verdict.YES: True,
    Verdict.NO: False,
    Verdict.CORRECT: True,
    Verdict.INCORRECT: False,
    Verdict.NOT_ATTEMPTED: False,
}


def _judges(run: EvaluationRun) -> list[Judgment]:
    return list(Judgment.objects.filter(run=run, status="done").order_by("-id"))


def compare_options(run: EvaluationRun) -> dict[str, Any]:
    """What the compare form offers: baselines on the same release, measures, models and scenarios of this run."""
    measures = [
        (key, f"{METRIC_NAMES.get(key.split(':', 1)[1], key)} ({key.split(':', 1)[0]})") for key in _metric_keys(run)
    ]
    seen = set()
    for judgment in _judges(run):
        key = f"judge:{judgment.endpoint_name}:{judgment.prompt_version}"
        if key not in seen:
            seen.add(key)
            measures.append(
                (key, f"Judge {judgment.endpoint_name} ({judgment.endpoint_model}), prompt v{judgment.prompt_version}")
            )
    rows = Prediction.objects.filter(run=run)
    return {
        "baselines": EvaluationRun.objects.filter(release_id=run.release_id, status="done").exclude(pk=run.pk),
        "measures": measures,
        "models": sorted(set(rows.values_list("model", flat=True).distinct())),
        "scenarios": sorted(set(rows.values_list("scenario", flat=True).distinct())),
    }


def _outcomes(run: EvaluationRun, measure: str, model: str, scenario: str) -> dict[tuple[str, str], bool | None]:
    """(scenario, item id) → correct, incorrect, or None (not comparable) under the measure."""
    if measure.startswith("judge:"):
        _, name, version = measure.rsplit(":", 2) if measure.count(":") >= 2 else ("", "", "")
        judgment = (
            Judgment.objects.filter(run=run, status="done", endpoint_name=name, prompt_version=int(version or 0))
            .order_by("-id")
            .first()
            if version.isdigit()
            else None
        )
        if judgment is None:
            raise InvalidInput(
                f"Run {run.pk} has no finished judgment by {name or '?'} with prompt v{version or '?'}: "
                "judge it first.",
                field="measure",
            )
        items = JudgedItem.objects.filter(judgment=judgment, prediction__model=model)
        if scenario:
            items = items.filter(prediction__scenario=scenario)
        found: dict[tuple[str, str], bool | None] = {}
        for item_scenario, item_id, verdict, override in items.values_list(
            "prediction__scenario", "prediction__item_id", "verdict", "override"
        ):
            effective = override or verdict
            found[(item_scenario, item_id)] = OUTCOMES.get(str(effective))
        return found
    rows = Prediction.objects.filter(run=run, model=model)
    if scenario:
        rows = rows.filter(scenario=scenario)
    found = {}
    for row_scenario, item_id, scores in rows.values_list("scenario", "item_id", "scores"):
        value = scores.get(measure) if scores else None
        found[(row_scenario, item_id)] = None if value is None else bool(value >= 1.0)
    return found


def _only_model(run: EvaluationRun, model: str) -> str:
    if model:
        return model
    models = sorted(set(Prediction.objects.filter(run=run).values_list("model", flat=True).distinct()))
    if len(models) != 1:
        raise InvalidInput(f"Run {run.pk} has {len(models)} models: choose one.", field="model")
    return models[0]


def _status(base: bool | None, this: bool | None) -> str:
    if base is None or this is None:
        return "not comparable"
    if base and not this:
        return "regression"
    if this and not base:
        return "improvement"
    return "both correct" if this else "both incorrect"


def runs_compare(
    *,
    run: EvaluationRun,
    baseline: EvaluationRun,
    measure: str,
    model: str = "",
    baseline_model: str = "",
    scenario: str = "",
) -> dict[str, Any]:
    if baseline.pk == run.pk:
        raise InvalidInput("Choose another run as the baseline.", field="baseline")
    if baseline.release_id != run.release_id:
        raise InvalidInput("A baseline must be a run on the same release.", field="baseline")
    if not (run.is_done and baseline.is_done):
        raise InvalidInput("Compare scored runs.", field="baseline")
    if not measure.startswith("judge:") and measure not in _metric_keys(run):
        raise InvalidInput("Choose a correct/incorrect measure of this run.", field="measure")
    model = _only_model(run, model)
    baseline_model = _only_model(baseline, baseline_model or (model if model in _models(baseline) else ""))
    this = _outcomes(run, measure, model, scenario)
    base = _outcomes(baseline, measure, baseline_model, scenario)
    gold = evaluation_run_gold(run)
    rows: list[dict[str, Any]] = [
        {
            "scenario": key[0],
            "item_id": key[1],
            "baseline": base[key],
            "this": this[key],
            "status": _status(base[key], this[key]),
        }
        for key in sorted(set(this) & set(base))
    ]
    rows.sort(key=lambda row: (ORDER[str(row["status"])], row["scenario"], row["item_id"]))
    counts = {status.replace(" ", "_"): sum(1 for row in rows if row["status"] == status) for status in ORDER}
    comparable = [row for row in rows if row["status"] != "not comparable"]
    delta: dict[str, Any] = {"n": len(comparable), "delta": None, "ci_low": None, "ci_high": None, "p": None}
    if comparable:
        differences = [[float(row["this"]) - float(row["baseline"])] for row in comparable]
        clusters = [
            gold.items[row["item_id"]].cluster if row["item_id"] in gold.items else row["item_id"] for row in comparable
        ]
        found = bootstrap_means(differences, clusters, draws=run.bootstrap_draws, seed=run.seed)[0]
        delta.update(
            delta=found.mean,
            ci_low=found.low,
            ci_high=found.high,
            p=mcnemar_exact([float(row["baseline"]) for row in comparable], [float(row["this"]) for row in comparable]),
        )
    flips = [row for row in rows if row["status"] in ("regression", "improvement")]
    others = [row for row in rows if row["status"] not in ("regression", "improvement")]
    return {
        "run": run.pk,
        "baseline": baseline.pk,
        "measure": measure,
        "model": model,
        "baseline_model": baseline_model,
        "scenario": scenario,
        "counts": counts,
        "paired": delta,
        "only_here": len(set(this) - set(base)),
        "only_in_baseline": len(set(base) - set(this)),
        "rows": flips + others[:OTHER_ROWS_SHOWN],
        "rows_left_out": max(0, len(others) - OTHER_ROWS_SHOWN),
    }


def _models(run: EvaluationRun) -> Iterable[str]:
    return set(Prediction.objects.filter(run=run).values_list("model", flat=True).distinct())
