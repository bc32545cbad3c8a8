"""Words for the codes an evaluation carries (scenarios, metrics, modes, extraction outcomes, strata): pages show
these, the API and the downloads keep the codes (a researcher's scripts read them)."""

from __future__ import annotations

from annotation.languages import LANGUAGES

SCENARIO_NAMES = {
    "question_only": "Question only",
    "standard_lead": "With the standard lead",
    "local_lead": "With the local lead",
    "both_leads": "With both leads",
    "none": "No context",
    "perfect": "Perfect context",
    "misleading": "Misleading context",
    "distraction": "Distraction context",
}
METRIC_NAMES = {
    "rouge_l": "ROUGE-L F1",
    "rouge_l_folded": "ROUGE-L F1, script folded (OpenCC t2s)",
    "chrf": "chrF",
    "chrf_pp": "chrF++",
    "exact_match": "Exact match",
    "exact_match_folded": "Exact match, script folded",
    "accuracy_strict": "Accuracy, strict letter",
    "accuracy_tolerant": "Accuracy, tolerant letter",
    "bertscore": "BERTScore F1 (rescaled)",
    "accuracy_parsed": "Accuracy of parsed answers (unparseable left out, as the study)",
    "accuracy_json": "Accuracy (unparseable counted wrong)",
    "unparseable": "Unparseable answers (rate)",
    "change_correction": "Corrected: wrong without context → right",
    "change_misleading": "Misled: right without context → wrong",
    "change_distraction": "Distracted: right without context → wrong",
    "odds_ratio": "Odds ratio of a right answer, inductive vs deductive",
}
CHANGES = ("change_correction", "change_misleading", "change_distraction")
MODE_NAMES = {
    "parity": "paper parity (each study's conventions)",
    "recommended": "recommended (language-aware)",
}
MODE_SHORT = {"parity": "paper parity", "recommended": "recommended"}
OUTCOME_NAMES = {
    "found": "Answer found",
    "empty": "Empty answer",
    "not_found": "No answer found",
    "missing": "No prediction for this item",
    "error": "The model call failed",
}
STRATUM_NAMES = {
    "region_detail": "finer region",
    "local_knowledge_check": "local-knowledge check",
    # its values (annotation.models_checks.LocalCheckResult)
    "not_answered": "a model does not answer it (local knowledge)",
    "closed_book": "a model answers it without any article",
    "standard_lead": "a model answers it from the standard article",
    "verification": "full-document check",
    "review": "review history",
    "annotator": "annotator",
}
KIND_NAMES = {
    "lead": "Lead-section QA",
    "document": "Document-level QA",
    "trivia": "Trivia (multiple choice)",
    "entity": "Entity questions (multiple choice, JSON answer)",
    "validation": "Validated QA (against the validated answer)",
}


def scenario_name(code: str) -> str:
    """A Wikipedia QA scenario in words; a trivia scenario is a language: its name."""
    if code in SCENARIO_NAMES:
        return SCENARIO_NAMES[code]
    language = LANGUAGES.get(code)
    return language.name if language is not None else code


def metric_name(key: str) -> str:
    """`rouge_l` or `recommended:rouge_l` in words (the mode in brackets when given)."""
    mode, _, metric = key.rpartition(":")
    words = METRIC_NAMES.get(metric, metric.replace("_", " "))
    return f"{words} ({MODE_SHORT.get(mode, mode)})" if mode else words


def outcome_name(code: str) -> str:
    """An extraction outcome; `tolerant not_found` (the tolerant letter filter's) as "Tolerant letter: …"."""
    tolerant, _, outcome = code.rpartition(" ")
    words = OUTCOME_NAMES.get(outcome, outcome.replace("_", " "))
    return f"Tolerant letter: {words[0].lower()}{words[1:]}" if tolerant else words


def stratum_name(code: str) -> str:
    return STRATUM_NAMES.get(code, code.replace("_", " "))


def cell_name(cell: str) -> str:
    """A run's count key "<model> · <scenario>" with the scenario in words."""
    model, separator, scenario = cell.rpartition(" · ")
    return f"{model}{separator}{scenario_name(scenario)}" if separator else cell
