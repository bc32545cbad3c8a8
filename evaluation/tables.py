"""The results rows shaped as each study's tables: overall (scenario × metric per model) and by stratum."""

from __future__ import annotations

import io
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from common.csv_safety import csv_writer
from evaluation.charts import SMALL_CELL, chart
from evaluation.scoring import METRIC_NAMES, MODE_NAMES, ODDS_OVERALL, ODDS_RATIO
from evaluation.statistics import ODDS_RATIO_METHOD
from evaluation.words import KIND_NAMES, scenario_name, stratum_name

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
    "validation": ("recommended", "rouge_l"),
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


ODDS_CAPTION = (
    "Odds of a right answer to an inductive question (entity → attribute) over the odds for a deductive one "
    f"(attribute → entity), with its 95% interval. Method: {ODDS_RATIO_METHOD}. Unparseable answers count as "
    "wrong (their number is shown). All conditions pools the conditions: an item counts once per condition it was "
    "asked under, and the interval treats those answers as independent."
)
CORRECTED_MARK = "[+0.5]"


def ratio_text(value: float | None) -> str:
    """An odds ratio to three significant digits, trailing zeros kept (1.80, 0.210, 15.4, 356)."""
    return "" if value is None else f"{value:#.3g}".rstrip(".")


def odds_ratio_table(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The odds ratios of one kind and model (entity questions): one line per context condition, then pooled."""
    picked = [row for row in rows if row["metric"] == ODDS_RATIO]
    if not picked:
        return None
    lines = [
        {
            "scenario": row["scenario"],
            "ratio": ratio_text(row["mean"]),
            "low": ratio_text(row["ci_low"]),
            "high": ratio_text(row["ci_high"]),
            "n": row["n"],
            "left_out": row.get("left_out", 0),
            "corrected": row["interval"] != "woolf",
            "cells": row.get("cells", {}),
            "row": row,
        }
        for row in picked
    ]
    corrected = [scenario_name(line["scenario"]) for line in lines if line["corrected"]]
    caption = ODDS_CAPTION + (
        f" Haldane–Anscombe correction (0.5 added to every cell, a cell being 0) used for: {', '.join(corrected)}; "
        f"marked {CORRECTED_MARK}."
        if corrected
        else " No cell was 0: no correction was used."
    )
    return {"lines": lines, "caption": caption}


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
                "odds_ratios": odds_ratio_table(rows),
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


# Downloads: the tables above (and the leaderboard) as CSV, Markdown and LaTeX, rendered in one place.

FORMATS = {"csv": "text/csv", "md": "text/markdown", "tex": "application/x-tex"}
FIGURE_FIELDS = ("mean", "ci_low", "ci_high", "n", "left_out")


@dataclass(frozen=True)
class Grid:
    """One table to download: a stub column of row labels, columns of cells. A cell is a results row (a mean with
    its interval and n, written in words in Markdown and LaTeX and as numbers in CSV), a text, or None (empty)."""

    name: str  # what the CSV calls the table
    caption: str
    stub: str
    columns: list[str]
    rows: list[tuple[str, list[dict[str, Any] | str | None]]]


def figure_text(row: dict[str, Any], *, small_mark: str = "⚠") -> str:
    """`61.2 (55.0–67.1), n=40`, × 100; no interval when there is none; a dash when nothing was scored."""
    if row.get("mean") is None:
        return f"—, n={row['n']}"
    if row.get("metric") == ODDS_RATIO:
        text = f"{ratio_text(row['mean'])} ({ratio_text(row['ci_low'])}–{ratio_text(row['ci_high'])}), n={row['n']}"
        return text + (f" {CORRECTED_MARK}" if row.get("interval") != "woolf" else "")
    text = f"{100 * row['mean']:.1f}"
    if row.get("ci_low") is not None and row.get("ci_high") is not None:
        text += f" ({100 * row['ci_low']:.1f}–{100 * row['ci_high']:.1f})"
    text += f", n={row['n']}"
    return text + (f" {small_mark}" if row["n"] < SMALL_CELL else "")


def _delta_text(compared: dict[str, str]) -> str:
    interval = f" ({compared['low']}, {compared['high']})" if compared["low"] else ""
    return f"{compared['delta']}{interval}, p Holm {compared['p_holm']}, n={compared['n']}"


def run_grids(
    run_results: list[dict[str, Any]],
    comparisons: list[dict[str, Any]],
    *,
    draws: int,
    seed: int,
    unit: str = "page pair",
) -> list[Grid]:
    """The run page's tables as grids: per item kind and model, scenarios × metrics (with the Δ against question
    only), then each stratum × scenarios under the primary metric. Each caption states what its numbers are."""
    grids: list[Grid] = []
    intervals = (
        f"95% intervals: Wilson for proportions (exact match, accuracy); percentile bootstrap for means, resampled "
        f"by {unit} ({draws:,} draws, seed {seed})"
    )
    modes = "; ".join(f"{mode} = {words}" for mode, words in MODE_NAMES.items())
    index = {
        (r["kind"], r["model"], r["scenario"], r["mode"], r["metric"]): r for r in run_results if r["stratum"] == "all"
    }
    for table in results_tables(run_results, comparisons):
        kind, model = table["kind"], table["model"]
        columns = [f"{column['name']} ({column['mode']})" for column in table["columns"]]
        delta = table["has_delta"]
        if delta:
            columns.append(f"Δ vs question only ({table['primary']['name']}, {table['primary']['mode']})")
        rows: list[tuple[str, list[dict[str, Any] | str | None]]] = []
        for row in table["rows"]:
            cells: list[dict[str, Any] | str | None] = [
                index.get((kind, model, row["scenario"], column["mode"], column["metric"]))
                for column in table["columns"]
            ]
            if delta:
                d = row["delta"]
                cells.append(_delta_text(d) if d else None)
            rows.append((scenario_name(row["scenario"]), cells))
        what = f"{table['kind_name']}, {model}"
        grids.append(
            Grid(
                name=f"{kind} · {model} · by scenario",
                caption=f"{what}: mean × 100 (95% interval), n by scenario. Modes: {modes}. {intervals}. "
                f"⚠: fewer than {SMALL_CELL} items.",
                stub="Scenario",
                columns=columns,
                rows=rows,
            )
        )
        odds = table["odds_ratios"]
        if odds:
            grids.append(
                Grid(
                    name=f"{kind} · {model} · odds ratios inductive vs deductive",
                    caption=f"{what}: {odds['caption']}",
                    stub="Context condition",
                    columns=[
                        "Odds ratio (95% interval), n",
                        "Inductive right / wrong",
                        "Deductive right / wrong",
                        "Unparseable, counted wrong (inductive / deductive)",
                    ],
                    rows=[_odds_grid_row(line) for line in odds["lines"]],
                )
            )
        primary = PRIMARY.get(kind)
        for stratum in table["strata"]:
            by = {
                (r["value"], r["scenario"]): r
                for r in run_results
                if (r["kind"], r["model"], r["stratum"]) == (kind, model, stratum["name"])
                and primary is not None
                and (r["mode"], r["metric"]) == primary
            }
            grids.append(
                Grid(
                    name=f"{kind} · {model} · by {stratum['name']}",
                    caption=f"{what}: {table['primary']['name']} ({table['primary']['mode']}), "
                    f"mean × 100 (95% interval), n by {stratum_name(stratum['name'])}. {intervals}. "
                    f"⚠: fewer than {SMALL_CELL} items.",
                    stub=stratum_name(stratum["name"]).capitalize(),
                    columns=[scenario_name(s) for s in stratum["scenarios"]],
                    rows=[
                        (row["value"], [by.get((row["value"], s)) for s in stratum["scenarios"]])
                        for row in stratum["rows"]
                    ],
                )
            )
    return grids


def _odds_grid_row(line: dict[str, Any]) -> tuple[str, list[dict[str, Any] | str | None]]:
    def pair(first: str, second: str) -> str:
        return f"{line['cells'].get(first, 0)} / {line['cells'].get(second, 0)}"

    label = "All conditions" if line["scenario"] == ODDS_OVERALL else scenario_name(line["scenario"])
    return (
        label,
        [
            line["row"],
            pair("inductive_right", "inductive_wrong"),
            pair("deductive_right", "deductive_wrong"),
            pair("inductive_unparseable", "deductive_unparseable"),
        ],
    )


def render(grids: list[Grid], fmt: str, *, title: str, fixed: dict[str, Any] | None = None) -> str:
    """The grids in one format: `csv` (one tidy line per cell, numbers in [0, 1], `fixed` columns — the run's or
    board's provenance — repeated on every line), `md` or `tex` (the tables as printed, captions included)."""
    if fmt == "csv":
        return _csv(grids, fixed or {})
    if fmt == "md":
        return _markdown(grids, title)
    if fmt == "tex":
        return _latex(grids, title)
    raise ValueError(f"unknown table format {fmt!r}")


def _csv(grids: list[Grid], fixed: dict[str, Any]) -> str:
    stream = io.StringIO()
    writer = csv_writer(stream)
    writer.writerow([*fixed, "table", "row", "column", *FIGURE_FIELDS, "text"])
    for grid in grids:
        for label, cells in grid.rows:
            for column, value in zip(grid.columns, cells, strict=True):
                if value is None:
                    continue
                numbers = [value.get(f) for f in FIGURE_FIELDS] if isinstance(value, dict) else [None] * 5
                text = figure_text(value) if isinstance(value, dict) else value
                writer.writerow([*fixed.values(), grid.name, label, column, *numbers, text])
    return stream.getvalue()


def markdown_escape(text: str) -> str:
    """A table cell's text for Markdown: pipes and backslashes escaped, line breaks as spaces, inline markup
    (`*`, `_`, backticks, brackets, `<`) escaped so a model's or a stratum's name is shown as it is."""
    text = " ".join(str(text).split())
    return re.sub(r"([\\|*_`\[\]<>#])", r"\\\1", text)


def _markdown(grids: list[Grid], title: str) -> str:
    out = [f"# {markdown_escape(title)}", ""]
    for grid in grids:
        out += [f"**{markdown_escape(grid.caption)}**", ""]
        header = [grid.stub, *grid.columns]
        out.append("| " + " | ".join(markdown_escape(h) for h in header) + " |")
        out.append("|" + "|".join([" --- "] + [" ---: "] * len(grid.columns)) + "|")
        for label, cells in grid.rows:
            texts = ["" if c is None else figure_text(c) if isinstance(c, dict) else c for c in cells]
            out.append("| " + " | ".join(markdown_escape(t) for t in [label, *texts]) + " |")
        out.append("")
    return "\n".join(out)


LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "|": r"\textbar{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "⚠": r"$^{\dagger}$",
    "Δ": r"$\Delta$",
    "×": r"$\times$",
    "—": "---",
    "–": "--",
}
_LATEX = re.compile("|".join(re.escape(key) for key in LATEX_SPECIALS))


def latex_escape(text: str) -> str:
    """Text for LaTeX: every special character as its command (in one pass, so no escape is escaped again),
    line breaks as spaces."""
    return _LATEX.sub(lambda match: LATEX_SPECIALS[match.group(0)], " ".join(str(text).split()))


def _latex(grids: list[Grid], title: str) -> str:
    out = [
        f"% {' '.join(title.split())}",
        "% Needs \\usepackage{booktabs}; non-Latin text (model names, strata) compiles with XeLaTeX or LuaLaTeX.",
        f"% $^{{\\dagger}}$: fewer than {SMALL_CELL} items in the cell.",
        "",
    ]
    for grid in grids:
        out += [
            "\\begin{table}[ht]",
            "\\centering",
            f"\\caption{{{latex_escape(grid.caption)}}}",
            "\\begin{tabular}{l" + "r" * len(grid.columns) + "}",
            "\\toprule",
            " & ".join(latex_escape(h) for h in [grid.stub, *grid.columns]) + " \\\\",
            "\\midrule",
        ]
        for label, cells in grid.rows:
            texts = ["" if c is None else figure_text(c) if isinstance(c, dict) else c for c in cells]
            out.append(" & ".join(latex_escape(t) for t in [label, *texts]) + " \\\\")
        out += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(out)
