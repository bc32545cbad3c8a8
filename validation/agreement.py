"""Validators' judgments as agreement scopes: what `review.reports` computes and stores for a validation project.

Registered with the validation kind (validation/kind.py), so a validation project's agreement
report (the review app's page, API, command and worker) holds, besides the usual
statistics of every scope:

* `validation:question`, `validation:location`, `validation:better_answer`: nominal;
  observed agreement, Gwet's AC1, Cohen's kappa (mean over validator pairs), alpha.
  The better-answer scope also gives the position-bias figure: how often the answer
  shown on the left was chosen, with an exact two-sided binomial p-value against 1/2.
* `validation:likert:<criterion>`: ordinal 1–5; Krippendorff's alpha (ordinal) and
  r*wg(j) (A = 5), with the criterion's mean score and its spread (sample SD).

A unit is an item (every validator judges the same imported revision). The same
scopes feed the validation page's quick figures (`validation.services.validation_agreement`).

Model vs people (`model_scopes`): when a model suggested answers (validation/suggestions.py), the scopes
`validation:model:question` and `validation:model:location` hold two raters per item, the model's latest
suggestion and the validators' majority (an item whose validators tie is left out and counted in the notes),
so Cohen's kappa, Gwet's AC1 and their n come from the same statistics as every other scope. A stratum says
whether a validator took the suggestion: agreement on the items answered without it is the fair measure of
how far to trust the model, since taking a suggestion makes the two agree by construction.
"""

from __future__ import annotations

import statistics as stats
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from django.contrib.auth import get_user_model

from annotation.models import Project, deleted_items
from review.agreement import NO_STRATUM
from review.reports import Scope
from validation.models import (
    Suggestion,
    SuggestionOutcome,
    SuggestionUse,
    Task,
    ValidationItem,
    ValidationJudgment,
    ValidationSettings,
)

LIKERT_SCALE = [1, 2, 3, 4, 5]
# (scope key, task that must be on, label, categories, value of a judgment or None)
CATEGORICAL: list[tuple[str, str, str, list[str], Callable[[Any], str | None]]] = [
    (
        "question",
        Task.QUESTION,
        "Question good/bad",
        ["good", "bad"],
        lambda j: None if j.question_good is None else ("good" if j.question_good else "bad"),
    ),
    (
        "location",
        Task.LOCATION,
        "Location relevance",
        ["yes", "no"],
        lambda j: None if j.location_relevant is None else ("yes" if j.location_relevant else "no"),
    ),
    (
        "better_answer",
        Task.BETTER_ANSWER,
        "Better answer",
        ["original", "alternative", "neither"],
        # The second answer is the imported alternative or the model-edited one (never both on one item): for
        # agreement both are "the other answer", so the categories stay three.
        lambda j: "alternative" if j.better_choice == ValidationJudgment.Choice.MODEL else j.better_choice or None,
    ),
]


MODEL_RATER = "Model"
PEOPLE_RATER = "Validators (majority)"
TAKEN = "Taken by a validator"
NOT_TAKEN = "Answered without it"
# (scope key, task, label, categories, the suggestion's value, a judgment's value)
MODEL_COMPARED: list[tuple[str, str, str, list[str], Callable[[Any], str | None], Callable[[Any], str | None]]] = [
    (
        "question",
        Task.QUESTION,
        "Model vs validators: Question good/bad",
        ["good", "bad"],
        lambda s: None if s.question_good is None else ("good" if s.question_good else "bad"),
        CATEGORICAL[0][4],
    ),
    (
        "location",
        Task.LOCATION,
        "Model vs validators: Location relevance",
        ["yes", "no"],
        lambda s: None if s.location_relevant is None else ("yes" if s.location_relevant else "no"),
        CATEGORICAL[1][4],
    ),
]


def majority(values: Iterable[Any]) -> Any:
    """The most frequent value (None and "" aside); None on a tie or without values."""
    counts = Counter(value for value in values if value is not None and value != "")
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def model_scopes(
    judgments: Sequence[Any],
    suggestions: Mapping[int, Any],
    *,
    tasks: Iterable[str],
    taken: Mapping[str, set[int]],
) -> list[Scope]:
    """Model vs validators per suggested task: `suggestions` maps an item id to its latest suggestion, `taken`
    a field to the items where a validator took the suggestion (pure: no database)."""
    tasks = set(tasks)
    by_item: dict[int, list[Any]] = {}
    for judgment in judgments:
        by_item.setdefault(judgment.item_id, []).append(judgment)
    scopes = []
    for key, task, label, categories, suggested, judged in MODEL_COMPARED:
        if task not in tasks:
            continue
        rows: list[tuple[Hashable, Hashable, Any]] = []
        units: set[int] = set()
        ties = 0
        for item_id, suggestion in suggestions.items():
            model_value = suggested(suggestion)
            people = [v for j in by_item.get(item_id, []) if (v := judged(j)) is not None]
            if model_value is None or not people:
                continue
            verdict = majority(people)
            if verdict is None:
                ties += 1
                continue
            rows += [(item_id, MODEL_RATER, model_value), (item_id, PEOPLE_RATER, verdict)]
            units.add(item_id)
        scope = Scope(
            key=f"validation:model:{key}",
            kind="validation",
            label=label,
            level="nominal",
            categories=categories,
            unit="item",
            judgments=rows,
            strata={"suggestion": {u: TAKEN if u in taken.get(key, set()) else NOT_TAKEN for u in units}},
            links={unit: {"item_id": unit} for unit in units},
        )
        scope.notes.append(
            "Two raters per item: the model's latest suggestion and the validators' majority. "
            f"{ties} item{'s' if ties != 1 else ''} whose validators tied left out."
        )
        scopes.append(scope)
    return scopes


def binomial_two_sided(k: int, n: int) -> float:
    """Exact two-sided binomial p-value of k successes in n trials against p = 1/2 (scipy's `binomtest`)."""
    from scipy.stats import binomtest  # here, not at the top: scipy.stats costs every process 0.6 s to import

    if n == 0:
        return 1.0
    return float(binomtest(k, n, p=0.5, alternative="two-sided").pvalue)


def figure(name: str, label: str, value: Any, note: str = "") -> dict[str, Any]:
    return {"name": name, "label": label, "value": value, "note": note}


def position_bias(judgments: Iterable[Any]) -> list[dict[str, Any]]:
    """How often the left answer won among choices of one of the two (neither is no position)."""
    positions = [j.better_position for j in judgments if j.better_position in (1, 2)]
    neither = sum(1 for j in judgments if j.better_choice == ValidationJudgment.Choice.NEITHER)
    if not positions:
        return []
    left = positions.count(1)
    return [
        figure("choices", "Choices of one of the two answers", len(positions)),
        figure("left_chosen", "Left answer chosen", left),
        figure("left_share", "Share of choices for the left answer", round(left / len(positions), 4), "0.5: no bias"),
        figure(
            "position_p_value",
            "Position bias p-value",
            round(binomial_two_sided(left, len(positions)), 4),
            "exact two-sided binomial test against 1/2",
        ),
        figure("neither", "Neither chosen", neither),
    ]


def likert_figures(scores: Sequence[int]) -> list[dict[str, Any]]:
    if not scores:
        return []
    counts = {score: scores.count(score) for score in LIKERT_SCALE}
    return [
        figure("mean", "Mean score", round(stats.fmean(scores), 4), f"{len(scores)} scores"),
        figure(
            "sd",
            "Spread (standard deviation)",
            round(stats.stdev(scores), 4) if len(scores) > 1 else None,
            "sample standard deviation of every score given",
        ),
        figure("distribution", "Scores 1–5", ", ".join(f"{s}: {n}" for s, n in counts.items())),
    ]


def build_scopes(
    judgments: Sequence[Any],
    *,
    tasks: Iterable[str],
    criteria: Sequence[Mapping[str, str]],
    rater: Callable[[int], Hashable],
    topics: Mapping[int, str] | None = None,
) -> list[Scope]:
    """The scopes of a set of judgments (objects with ValidationJudgment's fields), without the database."""
    tasks = set(tasks)
    topics = topics or {}

    def scope(key: str, label: str, level: Any, categories: list[Any], rows: list[tuple[int, Hashable, Any]]) -> Scope:
        units = {unit for unit, _, _ in rows}
        strata: dict[str, dict[Hashable, str]] = (
            {"topic": {unit: topics.get(unit) or NO_STRATUM for unit in units}} if any(topics.values()) else {}
        )
        return Scope(
            key=f"validation:{key}",
            kind="validation",
            label=label,
            level=level,
            categories=categories,
            unit="item",
            judgments=list(rows),  # a scope's units are any hashable (here: item ids)
            strata=strata,
            links={unit: {"item_id": unit} for unit in units},
        )

    scopes = []
    for key, task, label, categories, value in CATEGORICAL:
        if task not in tasks:
            continue
        rows = [(j.item_id, rater(j.validator_id), v) for j in judgments if (v := value(j)) is not None]
        entry = scope(key, label, "nominal", categories, rows)
        if key == "better_answer":
            entry.figures = position_bias(judgments)
            entry.notes.append("Each validator saw the two answers in an order of their own, drawn at random.")
        scopes.append(entry)
    if Task.LIKERT in tasks:
        for criterion in criteria:
            name = criterion["key"]
            scored = [(j.item_id, rater(j.validator_id), j.likert[name]) for j in judgments if name in j.likert]
            entry = scope(f"likert:{name}", f"Likert: {criterion['label']}", "ordinal", LIKERT_SCALE, scored)
            entry.figures = likert_figures([score for _, _, score in scored])
            scopes.append(entry)
    return scopes


def live_judgments(project: Project) -> list[ValidationJudgment]:
    """The judgments of the project's live items, in id order: its own judgments read through its index, those of
    deleted items left out here (`annotation.models.deleted_items`; tests/test_coordinator_plans.py)."""
    deleted = deleted_items(project)
    judgments = ValidationJudgment.objects.filter(project=project).order_by("id")
    return [judgment for judgment in judgments if judgment.item_id not in deleted]


def validation_scopes(project: Project) -> list[Scope]:
    """Every validator's judgments of the project's live items, in a few queries (the report's gatherer).

    It only reads: the report gathers in a read-only snapshot, so a project without its settings row gets the
    defaults here rather than a row made for it."""
    if project.kind != Project.Kind.VALIDATION:
        return []
    judgments = [judgment for judgment in live_judgments(project) if judgment.validator_id is not None]
    names = dict(
        get_user_model().objects.filter(pk__in={j.validator_id for j in judgments}).values_list("pk", "username")
    )
    topics = dict(ValidationItem.objects.filter(project=project).values_list("item_id", "topic"))
    settings = ValidationSettings.objects.filter(project=project).first() or ValidationSettings(project=project)
    scopes = build_scopes(
        judgments, tasks=settings.tasks, criteria=settings.likert_criteria, rater=names.__getitem__, topics=topics
    )
    suggestions, taken = latest_suggestions(project)
    return scopes + model_scopes(judgments, suggestions, tasks=settings.tasks, taken=taken)


def latest_suggestions(project: Project) -> tuple[dict[int, Any], dict[str, set[int]]]:
    """Each live item's latest suggestion, and per field the items where a validator took it (three queries)."""
    suggestions: dict[int, Any] = {}
    deleted = deleted_items(project)
    for suggestion in Suggestion.objects.filter(project=project, ok=True).order_by("id"):
        if suggestion.item_id not in deleted:
            suggestions[suggestion.item_id] = suggestion  # the latest wins
    latest = {suggestion.pk: item_id for item_id, suggestion in suggestions.items()}
    taken: dict[str, set[int]] = {}
    uses = SuggestionUse.objects.filter(
        project=project, outcome__in=[SuggestionOutcome.ACCEPTED, SuggestionOutcome.CHANGED]
    ).values_list("field", "suggestion_id")
    for field_name, suggestion_id in uses:
        if suggestion_id in latest:
            taken.setdefault(field_name, set()).add(latest[suggestion_id])
    return suggestions, taken
