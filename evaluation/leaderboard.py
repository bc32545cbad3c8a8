"""A project's leaderboard: models × scenarios under one metric, each cell a run's own result row (mean, n,
interval), and the bar charts drawn from results rows as inline SVG geometry (no script, no chart library)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import orjson

from annotation.models import Project
from common.jobs import JobStatus
from evaluation.charts import SMALL_CELL, chart
from evaluation.gold import resampled_by
from evaluation.models import EvaluationRun
from evaluation.scoring import PROPORTIONS
from evaluation.tables import PRIMARY, SCENARIO_ORDER, Grid, render
from evaluation.words import KIND_NAMES, MODE_NAMES, metric_name, scenario_name

KIND_ORDER = ("lead", "document", "trivia", "entity", "validation")
CELL_FIELDS = ("n", "mean", "ci_low", "ci_high", "interval", "left_out")


def convention(mode: str, metric: str, unit: str = "page pair") -> str:
    """How the numbers of one metric were made, said in words: printed under every leaderboard and chart."""
    interval = (
        "Wilson 95% interval"
        if metric in PROPORTIONS
        else f"percentile bootstrap 95% interval, resampled by {unit} (each run's seed and draws)"
    )
    return f"{metric_name(metric)}, {MODE_NAMES.get(mode, mode)}: mean × 100 with its {interval} and n per cell"


@dataclass(frozen=True)
class Board:
    release_version: int | None
    versions: list[int]
    kind: str
    kinds: list[str]
    mode: str
    metric: str
    metrics: list[tuple[str, str]]
    scenarios: list[str]
    rows: list[dict[str, Any]]
    unit: str = "page pair"  # what the bootstrap resampled (gold.RESAMPLED_BY)

    @property
    def convention(self) -> str:
        return convention(self.mode, self.metric, self.unit) if self.metric else ""


def _order(scenario: str) -> tuple[int, str]:
    return (SCENARIO_ORDER.index(scenario) if scenario in SCENARIO_ORDER else len(SCENARIO_ORDER), scenario)


def leaderboard(project: Project, *, version: int | None = None, kind: str = "", metric: str = "") -> Board:
    """Each model's newest scored run on one release (the newest release with a scored run unless `version` is
    given), one item kind, one `mode:metric` (the kind's primary one unless given). Rows are ordered by the
    unweighted mean of their cells' means (a ranking only; no pooled number is shown)."""
    runs = EvaluationRun.objects.filter(project=project, status=JobStatus.DONE).order_by("-created_at", "-id")
    versions = sorted(set(runs.values_list("release_version", flat=True)), reverse=True)
    if version not in versions:
        version = versions[0] if versions else None
    newest: dict[tuple[str, str], tuple[int, dict[tuple[str, str, str], dict[str, Any]]]] = {}
    for run_id, results in runs.filter(release_version=version or 0).values_list("id", "results"):
        found: dict[tuple[str, str], dict[tuple[str, str, str], dict[str, Any]]] = {}
        for row in results:
            if row["stratum"] == "all":
                found.setdefault((row["kind"], row["model"]), {})[(row["scenario"], row["mode"], row["metric"])] = row
        for key, rows in found.items():
            newest.setdefault(key, (run_id, rows))  # runs come newest first: the first one seen is kept
    kinds = sorted({k for k, _ in newest}, key=lambda k: (KIND_ORDER.index(k) if k in KIND_ORDER else 9, k))
    kind = kind if kind in kinds else (kinds[0] if kinds else "")
    entries = {model: found for (k, model), found in newest.items() if k == kind}
    metrics = sorted(
        {(mode, name) for _, rows in entries.values() for (_, mode, name) in rows},
        key=lambda pair: (pair[0] != "parity", pair),
    )
    mode, _, name = metric.partition(":")
    chosen = (mode, name) if (mode, name) in metrics else PRIMARY.get(kind, metrics[0] if metrics else ("", ""))
    if chosen not in metrics:
        chosen = metrics[0] if metrics else ("", "")
    scenarios = sorted({s for _, rows in entries.values() for (s, m, n) in rows if (m, n) == chosen}, key=_order)
    ranked: list[tuple[float, dict[str, Any]]] = []
    for model, (run_id, rows) in entries.items():
        cells: list[dict[str, Any] | None] = []
        for scenario in scenarios:
            row = rows.get((scenario, *chosen))
            cells.append({"scenario": scenario, **{f: row[f] for f in CELL_FIELDS}} if row else None)
        means = [cell["mean"] for cell in cells if cell and cell["mean"] is not None]
        ranked.append((sum(means) / len(means) if means else -1.0, {"model": model, "run": run_id, "cells": cells}))
    ranked.sort(key=lambda entry: (-entry[0], entry[1]["model"]))
    board_rows = [row for _, row in ranked]
    return Board(
        version, versions, kind, kinds, chosen[0], chosen[1], metrics, scenarios, board_rows, resampled_by(project.kind)
    )


def leaderboard_chart(board: Board) -> dict[str, Any]:
    return chart(
        [
            (row["model"], [(scenario_name(cell["scenario"]), cell) for cell in row["cells"] if cell])
            for row in board.rows
        ],
        id="leaderboard-chart",
        title=f"Leaderboard: {metric_name(board.metric)} by model and scenario",
        caption=f"{board.convention}.",
    )


def kind_names(kinds: list[str]) -> list[tuple[str, str]]:
    return [(kind, KIND_NAMES.get(kind, kind)) for kind in kinds]


def leaderboard_grid(board: Board, project: Project) -> Grid:
    """The board as a table to download (evaluation.tables.render): models × scenarios, its convention captioned."""
    kind = KIND_NAMES.get(board.kind, board.kind)
    return Grid(
        name="leaderboard",
        caption=f"{project.name}, release v{board.release_version}, {kind}. {board.convention}; each row is the "
        f"model's newest scored run. ⚠: fewer than {SMALL_CELL} items.",
        stub="Model (run)",
        columns=[scenario_name(s) for s in board.scenarios],
        rows=[(f"{row['model']} (run {row['run']})", list(row["cells"])) for row in board.rows],
    )


def leaderboard_download(board: Board, project: Project, fmt: str) -> str:
    """The board as CSV (one tidy line per cell), Markdown or LaTeX (the table, its convention as the caption), or
    JSON (what the API gives)."""
    if fmt == "json":
        return orjson.dumps({**asdict(board), "convention": board.convention}, option=orjson.OPT_INDENT_2).decode()
    fixed = {
        "project": project.slug,
        "release_version": board.release_version,
        "kind": board.kind,
        "mode": board.mode,
        "metric": board.metric,
    }
    title = f"Leaderboard of {project.name}, release v{board.release_version}"
    return render([leaderboard_grid(board, project)], fmt, title=title, fixed=fixed)
