"""Aggregates of judgments and quick agreement figures."""

from __future__ import annotations

import statistics as stats
from collections.abc import Mapping, Sequence
from typing import Any

from django.db.models import Count

from annotation.models import Project, deleted_items
from review.agreement import agreement_summary
from validation.agreement import NOT_TAKEN, build_scopes, latest_suggestions, live_judgments, majority, model_scopes
from validation.models import (
    SuggestionOutcome,
    SuggestionUse,
    Task,
    ValidationJudgment,
)
from validation.services.projects import validation_settings


def judgments_aggregate(
    judgments: Sequence[ValidationJudgment], criteria: Sequence[Mapping[str, str]]
) -> dict[str, Any]:
    """Majority votes (None on a tie) and mean Likert scores of one item's judgments."""
    good = majority([j.question_good for j in judgments])
    reasons = majority([j.question_reason for j in judgments if j.question_good is False])
    likert: dict[str, Any] = {}
    for criterion in criteria:
        scores = [j.likert[criterion["key"]] for j in judgments if criterion["key"] in j.likert]
        likert[criterion["key"]] = round(stats.fmean(scores), 3) if scores else None
    return {
        "validators": len(judgments),
        "question": None if good is None else ("good" if good else "bad"),
        "question_reason": reasons,
        "location_relevant": majority([j.location_relevant for j in judgments]),
        "better_answer": majority([j.better_choice for j in judgments]),
        "answer_edited_by": sum(1 for j in judgments if j.edit_revision_id),
        "likert_mean": likert,
    }


def judgment_record(judgment: ValidationJudgment) -> dict[str, Any]:
    """A judgment as released and shown by the API (validators by user name only where the caller may see them)."""
    return {
        "validator": judgment.validator_id,
        "question": None if judgment.question_good is None else ("good" if judgment.question_good else "bad"),
        "question_reason": judgment.question_reason or None,
        "location_relevant": judgment.location_relevant,
        "edited_answer": judgment.edit_revision.answer_standard if judgment.edit_revision is not None else None,
        "better_order": judgment.better_order or None,
        "better_choice": judgment.better_choice or None,
        "better_position": judgment.better_position,
        "better_comment": judgment.better_comment or None,
        "likert": judgment.likert,
    }


def _figure(summary: dict[str, Any], name: str) -> dict[str, Any]:
    figure = summary["statistics"].get(name) or {}
    return {"value": figure.get("value"), "note": figure.get("note", ""), "n_units": figure.get("n_units")}


def _figures_by_name(scope: Any) -> dict[str, Any]:
    return {figure["name"]: figure["value"] for figure in scope.figures}


def validation_agreement(project: Project, *, judgments: Sequence[ValidationJudgment] | None = None) -> dict[str, Any]:
    """Quick agreement figures per task (no bootstrap), from the same scopes as the project's agreement report
    (`validation.agreement`): observed agreement, Gwet's AC1 and Cohen's kappa (mean over validator pairs) for
    the categorical tasks; Krippendorff's alpha (ordinal) and r*wg(j) for each Likert criterion, with its mean
    and spread; the better-answer choice's position bias.
    """
    if judgments is None:
        judgments = live_judgments(project)
    criteria = validation_settings(project).likert_criteria
    scopes = build_scopes(judgments, tasks=Task.values, criteria=criteria, rater=lambda validator: validator)
    result: dict[str, Any] = {"judgments": len(judgments), "categorical": [], "likert": [], "position_bias": None}
    for scope in scopes:
        key = scope.key.removeprefix("validation:")
        summary = (
            agreement_summary(
                scope.judgments, scope.level, categories=scope.categories, bootstrap=0, pairwise=False
            ).to_dict()
            if scope.judgments
            else None
        )
        if scope.level == "nominal":
            entry: dict[str, Any] = {"task": key, "label": scope.label, "judgments": len(scope.judgments)}
            if summary is not None:
                entry |= {
                    "observed": _figure(summary, "percent_agreement"),
                    "gwet_ac1": _figure(summary, "gwet_ac1"),
                    "cohen_kappa": _figure(summary, "cohen_kappa_mean"),
                    "units": summary["n_units"],
                    "excluded_units": summary["excluded_units"],
                }
            result["categorical"].append(entry)
            figures = _figures_by_name(scope)
            if key == "better_answer" and figures:
                result["position_bias"] = {
                    "choices": figures["choices"],
                    "left": figures["left_chosen"],
                    "left_share": figures["left_share"],
                    "p_value": figures["position_p_value"],
                }
            continue
        figures = _figures_by_name(scope)
        entry = {
            "criterion": key.removeprefix("likert:"),
            "label": scope.label.removeprefix("Likert: "),
            "judgments": len(scope.judgments),
            "mean": figures.get("mean"),
            "sd": figures.get("sd"),
        }
        if summary is not None:
            entry |= {
                "krippendorff_alpha": _figure(summary, "krippendorff_alpha"),
                "rwg_j": _figure(summary, "rwg_star_j"),
            }
        result["likert"].append(entry)
    result["model"] = model_agreement(project, judgments)
    return result


def _model_row(scope: Any, label: str, units: set[Any] | None) -> dict[str, Any]:
    rows = [row for row in scope.judgments if units is None or row[0] in units]
    entry: dict[str, Any] = {"task": scope.key.removeprefix("validation:model:"), "label": label, "items": 0}
    if rows:
        summary = agreement_summary(rows, "nominal", categories=scope.categories, bootstrap=0, pairwise=False).to_dict()
        entry |= {
            "items": summary["n_units"],
            "observed": _figure(summary, "percent_agreement"),
            "gwet_ac1": _figure(summary, "gwet_ac1"),
            "cohen_kappa": _figure(summary, "cohen_kappa_mean"),
        }
    return entry


def model_agreement(project: Project, judgments: Sequence[ValidationJudgment]) -> dict[str, Any]:
    """Model vs validators (the `validation:model:*` scopes): per suggested task, on every item with both, and on
    the items where no validator took the suggestion; and what validators did with each suggested field."""
    suggestions, taken = latest_suggestions(project)
    tasks = validation_settings(project).tasks
    rows = []
    for scope in model_scopes(judgments, suggestions, tasks=tasks, taken=taken):
        without = {unit for unit, stratum in scope.strata["suggestion"].items() if stratum == NOT_TAKEN}
        rows.append(_model_row(scope, scope.label.removeprefix("Model vs validators: "), None))
        rows.append(_model_row(scope, "… answered without the suggestion", without) | {"subset": True})
        rows[-2]["note"] = scope.notes[0]
    counts: dict[str, dict[str, int]] = {
        field: {outcome: 0 for outcome in SuggestionOutcome.values} for field in SuggestionUse.Field.values
    }
    # The project's own uses, less those of its deleted items' judgments (found through the judgments' item index).
    gone = ValidationJudgment.objects.filter(item_id__in=deleted_items(project)).values("pk")
    uses = SuggestionUse.objects.filter(project=project).exclude(judgment__in=gone)
    for field, outcome, n in uses.values_list("field", "outcome").annotate(n=Count("id")).order_by():
        counts[field][outcome] = n
    return {
        "suggested_items": len(suggestions),
        "rows": rows,
        "uses": [
            {"field": field, "label": SuggestionUse.Field(field).label, **counts[field]}
            for field in SuggestionUse.Field.values
        ],
    }
