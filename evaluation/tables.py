"""The results rows shaped as each study's tables: overall (scenario × metric per model) and by stratum."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from evaluation.charts import SMALL_CELL, chart
from evaluation.scoring import METRIC_NAMES, MODE_NAMES
from evaluation.words import KIND_NAMES, scenario_name

SCENARIO_ORDER = (
    "question_only",
    "standard_lead",
    "local_lead",
    "both_leads",
    "none",
    "perfect",
    "misleading",
    "distraction",
)
PRIMARY = {
    "lead": ("recommended", "rouge_l"),
    "document": ("recommended", "rouge_l"),
    "trivia": ("parity", "accuracy_strict"),
    "entity": ("recommended", "accuracy_json"),
}


def cell(row: dict[str, Any]) -> dict[str, Any]:
    def pct(value: float | None) -> str:
        return "" if value is None else f"{100 * value:.1f}"

    return {
        "mean": pct(row["mean"]),
        "low": pct(row["ci_low"]),
        "high": pct(row["ci_high"]),
        "n": row["n"],
        "left_out": row.get("left_out", 0),
        "small": row["n"] < SMALL_CELL,
        "raw": row["mean"],
    }


def _scenario_key(scenario: str) -> tuple[int, str]:
    return (SCENARIO_ORDER.index(scenario) if scenario in SCENARIO_ORDER else len(SCENARIO_ORDER), scenario)


def _compared(row: dict[str, Any] | None) -> dict[str, str] | None:
    if row is None or row["delta"] is None:
        return None

    def signed(value: float | None) -> str:
        return "" if value is None else f"{100 * value:+.1f}"

    return {
        "delta": signed(row["delta"]),
        "low": signed(row["ci_low"]),
        "high": signed(row["ci_high"]),
        "p_holm": f"{row['p_holm']:.3g}",
        "test": row["test"],
        "n": str(row["n"]),
    }


def results_tables(
    results: list[dict[str, Any]], comparisons: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Per item kind and model: the overall table (rows scenarios, columns mode·metric, a Δ against question only
    for the primary metric) and one table per stratum (rows stratum values, columns scenarios, primary metric)."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in results:
        grouped[(row["kind"], row["model"])].append(row)
    tables: list[dict[str, Any]] = []
    for (kind, model), rows in sorted(grouped.items()):
        overall = [row for row in rows if row["stratum"] == "all"]
        columns = sorted({(row["mode"], row["metric"]) for row in overall}, key=lambda key: (key[0] != "parity", key))
        scenarios = sorted({row["scenario"] for row in overall}, key=_scenario_key)
        index = {(row["scenario"], row["mode"], row["metric"]): row for row in overall}
        primary = PRIMARY.get(kind, columns[0] if columns else ("", ""))
        baseline = index.get(("question_only", *primary))
        paired = {
            row["scenario"]: row
            for row in comparisons or []
            if (row["kind"], row["model"], row["mode"], row["metric"]) == (kind, model, *primary)
        }
        body = []
        for scenario in scenarios:
            cells = [cell(index[(scenario, *column)]) if (scenario, *column) in index else None for column in columns]
            body.append({"scenario": scenario, "cells": cells, "delta": _compared(paired.get(scenario))})
        strata = []
        for stratum in sorted({row["stratum"] for row in rows} - {"all"}):
            picked = [row for row in rows if row["stratum"] == stratum and (row["mode"], row["metric"]) == primary]
            values = sorted({row["value"] for row in picked})
            by = {(row["value"], row["scenario"]): row for row in picked}
            strata.append(
                {
                    "name": stratum,
                    "scenarios": scenarios,
                    "rows": [
                        {
                            "value": value,
                            "cells": [cell(by[(value, s)]) if (value, s) in by else None for s in scenarios],
                        }
                        for value in values
                    ],
                }
            )
        tables.append(
            {
                "kind": kind,
                "kind_name": KIND_NAMES.get(kind, kind),
                "model": model,
                "columns": [
                    {"mode": mode, "metric": metric, "name": METRIC_NAMES.get(metric, metric)}
                    for mode, metric in columns
                ],
                "rows": body,
                "has_delta": baseline is not None and kind != "trivia",
                "primary": {"mode": primary[0], "name": METRIC_NAMES.get(primary[1], primary[1])},
                "strata": strata,
                "chart": chart(
                    [("", [(scenario_name(s), index.get((s, *primary))) for s in scenarios if (s, *primary) in index])],
                    id=f"chart-{kind}-{len(tables) + 1}",
                    title=f"{METRIC_NAMES.get(primary[1], primary[1])} by scenario, {model}",
                    caption=f"{METRIC_NAMES.get(primary[1], primary[1])}, {MODE_NAMES.get(primary[0], primary[0])}.",
                ),
            }
        )
    return tables


def mode_captions() -> dict[str, str]:
    return MODE_NAMES
