"""One item's scores, and the results table's rows from all of them.

Per item (Wikipedia QA), against the standard-language gold, with the answer taken from the `<answer>` tag:
`parity:rouge_l` (WiLoVa's package conventions), `parity:chrf_pp` (raw text), `recommended:rouge_l`,
`recommended:chrf`, `recommended:chrf_pp`, `recommended:exact_match`, and for Chinese golds the OpenCC-folded
`recommended:rouge_l_folded` and `recommended:exact_match_folded`. An item whose answer was not found, empty or
missing is scored as an empty answer (the study's n is every item of the release). Multiple choice:
`parity:accuracy_strict` (reply exactly the letter) and `recommended:accuracy_tolerant` (the harnesses' filter).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from evaluation import extraction, metrics, words
from evaluation.gold import ENTITY_CONDITIONS, ItemGold, ReleaseGold, resampled_by
from evaluation.statistics import (
    Estimate,
    bootstrap_mean,
    bootstrap_means,
    holm,
    mcnemar_exact,
    odds_ratio_woolf,
    proportion,
    sign_flip_p,
)
from evaluation.words import CHANGES

PROPORTIONS = frozenset(
    {
        "exact_match",
        "exact_match_folded",
        "accuracy_strict",
        "accuracy_tolerant",
        "accuracy_parsed",
        "accuracy_json",
        "unparseable",
        *CHANGES,
    }
)
METRIC_NAMES, MODE_NAMES = words.METRIC_NAMES, words.MODE_NAMES


def extract(reply: str | None, item: ItemGold, scenario: str, gold: ReleaseGold) -> dict[str, str]:
    """Outcome and text, strict (and tolerant, for multiple choice); a missing prediction is `missing`."""
    if reply is None:
        missing = extraction.MISSING
        both = gold.multiple_choice and not gold.entity  # trivia records a tolerant outcome too
        return {"extraction": missing, "extracted": "", "extraction_tolerant": missing if both else ""}
    if gold.entity:
        letter = extraction.json_letter(reply, item.options.get(scenario, 0))
        return {"extraction": letter.outcome, "extracted": letter.text}
    if gold.multiple_choice:
        options = item.options.get(scenario, 0)
        strict, tolerant = extraction.letter_strict(reply, options), extraction.letter_tolerant(reply, options)
        return {
            "extraction": strict.outcome,
            "extracted": strict.text,
            "extraction_tolerant": tolerant.outcome,
            "extracted_tolerant": tolerant.text,
        }
    found = extraction.answer_or_reply(reply) if gold.validation else extraction.answer_tag(reply)
    return {"extraction": found.outcome, "extracted": found.text}


def score(extracted: dict[str, str], item: ItemGold, gold: ReleaseGold, unavailable: dict[str, str]) -> dict[str, Any]:
    """The item's scores in [0, 1]; {} when the item has no gold (left out of every score)."""
    if not item.gold:
        return {}
    if gold.entity:  # parity: the study left unparseable answers out; recommended: they are wrong, and counted
        parsed = extracted.get("extraction") == extraction.FOUND
        right = float(extracted.get("extracted") == item.gold)
        entity = {"recommended:accuracy_json": right, "recommended:unparseable": float(not parsed)}
        return {**entity, "parity:accuracy_parsed": right} if parsed else entity
    if gold.multiple_choice:
        return {
            "parity:accuracy_strict": float(extracted.get("extracted") == item.gold),
            "recommended:accuracy_tolerant": float(extracted.get("extracted_tolerant") == item.gold),
        }
    answer, language = extracted.get("extracted", ""), item.language or gold.language
    scores: dict[str, Any] = {}
    if not gold.validation:  # NativQA scores no model: there is no study convention to keep parity with
        try:
            scores["parity:rouge_l"] = metrics.rouge_l_parity(answer, item.gold, language)
        except metrics.MetricUnavailable as error:
            unavailable["parity:rouge_l"] = str(error)
        scores["parity:chrf_pp"] = metrics.chrf(answer, item.gold, word_order=2)
    clean, reference = metrics.normalise(answer, language), metrics.normalise(item.gold, language)
    scores["recommended:rouge_l"] = metrics.rouge_l(
        metrics.tokens(answer, language), metrics.tokens(item.gold, language)
    )
    scores["recommended:chrf"] = metrics.chrf(clean, reference, word_order=0)
    scores["recommended:chrf_pp"] = metrics.chrf(clean, reference, word_order=2)
    scores["recommended:exact_match"] = metrics.exact_match(answer, item.gold, language)
    if metrics.is_cjk(language):
        folded, folded_gold = metrics.fold_script(answer), metrics.fold_script(item.gold)
        scores["recommended:rouge_l_folded"] = metrics.rouge_l(
            metrics.tokens(folded, language), metrics.tokens(folded_gold, language)
        )
        scores["recommended:exact_match_folded"] = metrics.exact_match(folded, folded_gold, language)
    return scores


def _estimates(entries: list[tuple[str, dict[str, Any]]], *, draws: int, seed: int) -> dict[str, Estimate]:
    """Every metric of one cell: Wilson for proportions, one shared cluster bootstrap for the means."""
    keys = sorted({key for _, scores in entries for key in scores})
    found: dict[str, Estimate] = {}
    means = [key for key in keys if key.split(":", 1)[1] not in PROPORTIONS]
    for key in keys:
        if key not in means:
            found[key] = proportion([scores[key] for _, scores in entries if key in scores])
    if means and all(key in scores for _, scores in entries for key in means):
        clusters = [cluster for cluster, _ in entries]
        rows = [[scores[key] for key in means] for _, scores in entries]
        found.update(zip(means, bootstrap_means(rows, clusters, draws=draws, seed=seed), strict=True))
    else:  # a metric missing on some items (unavailable for them): each resampled on its own items
        for key in means:
            have = [(cluster, scores[key]) for cluster, scores in entries if key in scores]
            found[key] = bootstrap_mean([v for _, v in have], [c for c, _ in have], draws=draws, seed=seed)
    return found


def results_rows(
    scored: list[tuple[str, str, str, dict[str, Any]]],
    gold: ReleaseGold,
    *,
    draws: int,
    seed: int,
    beat: Callable[[], None] | None = None,
) -> list[dict[str, Any]]:
    """Tidy rows from (model, scenario, item id, scores): overall and by every stratum, each with n and its interval.

    Items without gold have no scores and are counted as left out in every row of their cell.
    """
    cells: dict[tuple[str, str, str, str, str], list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    left_out: dict[tuple[str, str, str, str, str], int] = defaultdict(int)
    for model, scenario, item_id, scores in scored:
        item = gold.items[item_id]
        places = [("all", "all")] + [(stratum, item.strata.get(stratum, "(none)")) for stratum in gold.strata]
        for stratum, value in places:
            if scores:
                cells[(item.kind, model, scenario, stratum, value)].append((item.cluster, scores))
            else:
                left_out[(item.kind, model, scenario, stratum, value)] += 1
    rows = []
    for (kind, model, scenario, stratum, value), entries in sorted(cells.items()):
        if beat is not None:  # a sign of life between cells: 10,000-draw intervals on many items take a while
            beat()
        for key, found in sorted(_estimates(entries, draws=draws, seed=seed).items()):
            mode, metric = key.split(":", 1)
            rows.append(
                {
                    "kind": kind,
                    "model": model,
                    "scenario": scenario,
                    "metric": metric,
                    "mode": mode,
                    "stratum": stratum,
                    "value": value,
                    "n": found.n,
                    "mean": found.mean,
                    "ci_low": found.low,
                    "ci_high": found.high,
                    "interval": "wilson" if metric in PROPORTIONS else "bootstrap",
                    "left_out": left_out.get((kind, model, scenario, stratum, value), 0),
                }
            )
    return rows


BASELINE = "question_only"
COMPARED = {"lead": "recommended:rouge_l", "document": "recommended:rouge_l"}
BINARY_COMPARED = "recommended:exact_match"


def comparison_rows(
    scored: list[tuple[str, str, str, dict[str, Any]]], gold: ReleaseGold, *, draws: int, seed: int
) -> list[dict[str, Any]]:
    """Each scenario against question only on the same items, per kind and model: the paired difference with its
    cluster-bootstrap interval and a paired test (sign-flip permutation by the kind's cluster for means, exact McNemar
    for exact match), Holm-adjusted over the scenarios compared for one kind, model and metric."""
    by: dict[tuple[str, str, str], dict[str, tuple[str, dict[str, Any]]]] = defaultdict(dict)
    for model, scenario, item_id, scores in scored:
        if scores:
            item = gold.items[item_id]
            by[(item.kind, model, scenario)][item_id] = (item.cluster, scores)
    rows: list[dict[str, Any]] = []
    for (kind, model, scenario), items in sorted(by.items()):
        base = by.get((kind, model, BASELINE))
        if scenario == BASELINE or base is None or kind not in COMPARED:
            continue
        common = sorted(set(items) & set(base))
        for key in (COMPARED[kind], BINARY_COMPARED):
            pairs: list[tuple[str, float, float]] = [
                (items[i][0], float(base[i][1][key]), float(items[i][1][key]))
                for i in common
                if key in base[i][1] and key in items[i][1]
            ]
            if not pairs:
                continue
            clusters = [cluster for cluster, _, _ in pairs]
            differences = [o - b for _, b, o in pairs]
            found = bootstrap_means([[d] for d in differences], clusters, draws=draws, seed=seed)[0]
            binary = key == BINARY_COMPARED
            p = (
                mcnemar_exact([b for _, b, _ in pairs], [o for _, _, o in pairs])
                if binary
                else sign_flip_p(differences, clusters, draws=draws, seed=seed)
            )
            mode, metric = key.split(":", 1)
            rows.append(
                {
                    "kind": kind,
                    "model": model,
                    "scenario": scenario,
                    "baseline": BASELINE,
                    "metric": metric,
                    "mode": mode,
                    "n": len(pairs),
                    "delta": found.mean,
                    "ci_low": found.low,
                    "ci_high": found.high,
                    "test": "McNemar (exact)"
                    if binary
                    else f"paired sign-flip permutation by {resampled_by(gold.project_kind)}",
                    "p": p,
                }
            )
    families: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        families[(row["kind"], row["model"], row["metric"])].append(row)
    for family in families.values():
        for row, adjusted in zip(family, holm([row["p"] for row in family]), strict=True):
            row["p_holm"] = adjusted
    return rows


CHANGE_BASELINE = "none"
# condition → (metric, items counted: right or wrong without context, what counts as a change)
CHANGE_RULES = {
    "perfect": ("change_correction", False, True),  # wrong without context → right with the perfect one
    "misleading": ("change_misleading", True, False),  # right without context → wrong with the misleading one
    "distraction": ("change_distraction", True, False),  # right without context → wrong with a distractor's text
}


def change_rows(scored: list[tuple[str, str, str, dict[str, Any]]], gold: ReleaseGold) -> list[dict[str, Any]]:
    """Geo-bias answer-change rates against the no-context answer to the same item, per model, condition and
    stratum: a proportion of the items right (or wrong) without context, with n and its Wilson interval. The
    correctness is the recommended one (an unparseable answer is wrong)."""
    if not gold.entity:
        return []
    right: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)
    for model, scenario, item_id, scores in scored:
        if "recommended:accuracy_json" in scores:
            right[(model, scenario)][item_id] = bool(scores["recommended:accuracy_json"])
    cells: dict[tuple[str, str, str, str, str], list[float]] = defaultdict(list)
    for (model, scenario), answers in right.items():
        if scenario not in CHANGE_RULES or (model, CHANGE_BASELINE) not in right:
            continue
        metric, counted, changed = CHANGE_RULES[scenario]
        base = right[(model, CHANGE_BASELINE)]
        for item_id, now in answers.items():
            if item_id not in base or base[item_id] != counted:
                continue
            item = gold.items[item_id]
            places = [("all", "all")] + [(s, item.strata.get(s, "(none)")) for s in gold.strata]
            for stratum, value in places:
                cells[(model, scenario, metric, stratum, value)].append(float(now == changed))
    rows = []
    for (model, scenario, metric, stratum, value), values in sorted(cells.items()):
        found = proportion(values)
        rows.append(
            {
                "kind": "entity",
                "model": model,
                "scenario": scenario,
                "metric": metric,
                "mode": "recommended",
                "stratum": stratum,
                "value": value,
                "n": found.n,
                "mean": found.mean,
                "ci_low": found.low,
                "ci_high": found.high,
                "interval": "wilson",
                "left_out": 0,
            }
        )
    return rows


ODDS_RATIO = "odds_ratio"
ODDS_STRATUM = "direction"
ODDS_VALUE = "inductive vs deductive"
ODDS_OVERALL = "all"  # the conditions pooled: each item counted once per condition it was asked under
ODDS_CELLS = (
    "inductive_right",
    "inductive_wrong",
    "deductive_right",
    "deductive_wrong",
    "inductive_unparseable",
    "deductive_unparseable",
)


def odds_ratio_rows(scored: list[tuple[str, str, str, dict[str, Any]]], gold: ReleaseGold) -> list[dict[str, Any]]:
    """Geo-bias: the odds of a right answer to an inductive question (entity → attribute) over the odds for a
    deductive one (attribute → entity), per model and context condition and pooled over the conditions, with
    Woolf's 95% interval (Haldane–Anscombe +0.5 only when a cell is 0, said in the row's `interval`). The
    correctness is the recommended one: an unparseable answer is wrong, and counted in `cells`. Items without gold
    are left out and counted; items of neither direction are not in the table and counted as `left_out` too."""
    if not gold.entity:
        return []
    tables: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: dict.fromkeys(ODDS_CELLS, 0))
    left_out: dict[tuple[str, str], int] = defaultdict(int)
    for model, scenario, item_id, scores in scored:
        direction = gold.items[item_id].strata.get(ODDS_STRATUM)
        for condition in (scenario, ODDS_OVERALL):
            if direction not in ("inductive", "deductive") or "recommended:accuracy_json" not in scores:
                left_out[(model, condition)] += 1
                continue
            cell = tables[(model, condition)]
            cell[f"{direction}_{'right' if scores['recommended:accuracy_json'] else 'wrong'}"] += 1
            cell[f"{direction}_unparseable"] += int(bool(scores.get("recommended:unparseable")))
    rows = []
    order = (*ENTITY_CONDITIONS, ODDS_OVERALL)

    def place(key: tuple[str, str]) -> tuple[str, int, str]:
        model, condition = key
        return (model, order.index(condition) if condition in order else len(order), condition)

    for (model, condition), cells in sorted(tables.items(), key=lambda entry: place(entry[0])):
        found = odds_ratio_woolf(
            cells["inductive_right"], cells["inductive_wrong"], cells["deductive_right"], cells["deductive_wrong"]
        )
        rows.append(
            {
                "kind": "entity",
                "model": model,
                "scenario": condition,
                "metric": ODDS_RATIO,
                "mode": "recommended",
                "stratum": ODDS_STRATUM,
                "value": ODDS_VALUE,
                "n": sum(cells[name] for name in ODDS_CELLS[:4]),
                "mean": found.value,
                "ci_low": found.low,
                "ci_high": found.high,
                "interval": "woolf_haldane_anscombe" if found.corrected else "woolf",
                "left_out": left_out.get((model, condition), 0),
                "cells": cells,
            }
        )
    return rows
