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
from typing import Any

from evaluation import extraction, metrics
from evaluation.gold import ItemGold, ReleaseGold
from evaluation.statistics import Estimate, bootstrap_mean, bootstrap_means, proportion

PROPORTIONS = frozenset({"exact_match", "exact_match_folded", "accuracy_strict", "accuracy_tolerant"})
METRIC_NAMES = {
    "rouge_l": "ROUGE-L F1",
    "rouge_l_folded": "ROUGE-L F1, script folded (OpenCC t2s)",
    "chrf": "chrF",
    "chrf_pp": "chrF++",
    "exact_match": "Exact match",
    "exact_match_folded": "Exact match, script folded",
    "accuracy_strict": "Accuracy, strict letter",
    "accuracy_tolerant": "Accuracy, tolerant letter",
}
MODE_NAMES = {
    "parity": "paper parity (each study's conventions)",
    "recommended": "recommended (language-aware)",
}


def extract(reply: str | None, item: ItemGold, scenario: str, gold: ReleaseGold) -> dict[str, str]:
    """Outcome and text, strict (and tolerant, for multiple choice); a missing prediction is `missing`."""
    if reply is None:
        missing = extraction.MISSING
        return {"extraction": missing, "extracted": "", "extraction_tolerant": missing if gold.multiple_choice else ""}
    if gold.multiple_choice:
        options = item.options.get(scenario, 0)
        strict, tolerant = extraction.letter_strict(reply, options), extraction.letter_tolerant(reply, options)
        return {
            "extraction": strict.outcome,
            "extracted": strict.text,
            "extraction_tolerant": tolerant.outcome,
            "extracted_tolerant": tolerant.text,
        }
    found = extraction.answer_tag(reply)
    return {"extraction": found.outcome, "extracted": found.text}


def score(extracted: dict[str, str], item: ItemGold, gold: ReleaseGold, unavailable: dict[str, str]) -> dict[str, Any]:
    """The item's scores in [0, 1]; {} when the item has no gold (left out of every score)."""
    if not item.gold:
        return {}
    if gold.multiple_choice:
        return {
            "parity:accuracy_strict": float(extracted.get("extracted") == item.gold),
            "recommended:accuracy_tolerant": float(extracted.get("extracted_tolerant") == item.gold),
        }
    answer, language = extracted.get("extracted", ""), gold.language
    scores: dict[str, Any] = {}
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
    scored: list[tuple[str, str, str, dict[str, Any]]], gold: ReleaseGold, *, draws: int, seed: int
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
