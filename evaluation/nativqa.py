"""NativQA's results for a validation project: the pipeline is scored, not a model. Four 5-point Likert criteria
with their means (n, and a 95% percentile bootstrap interval resampled by item: an item's scores from several
validators are not independent), r*wg(j) and Krippendorff's alpha; the categorical tasks (question good or bad,
location relevant, the better answer) with observed agreement, Gwet's AC1 and Cohen's kappa. The agreement
figures are the validation app's own (`validation_agreement`, the project's agreement report's scopes)."""

from __future__ import annotations

from typing import Any

from annotation.models import Project
from evaluation.statistics import bootstrap_mean
from validation.agreement import live_judgments
from validation.services import validation_agreement

DRAWS, SEED = 1000, 20261203
CONVENTION = (
    "Likert means on the 1–5 scale over every validator's score, with a 95% percentile bootstrap interval "
    f"resampled by item ({DRAWS:,} draws, seed {SEED}); r*wg(j) and Krippendorff's alpha (ordinal) over items "
    "scored by two or more validators; categorical tasks: observed agreement, Gwet's AC1 and Cohen's kappa (mean "
    "over validator pairs). κ misleads when nearly every answer is the same: read it beside AC1"
)


def nativqa_results(project: Project) -> dict[str, Any]:
    """The results of a validation project (`validation: false` and nothing else for other kinds)."""
    if project.kind != Project.Kind.VALIDATION:
        return {"validation": False, "judgments": 0, "likert": [], "categorical": [], "convention": CONVENTION}
    judgments = live_judgments(project)
    agreement = validation_agreement(project, judgments=judgments)
    likert = []
    for entry in agreement["likert"]:
        scored = [
            (str(j.item_id), float(j.likert[entry["criterion"]])) for j in judgments if entry["criterion"] in j.likert
        ]
        found = bootstrap_mean([s for _, s in scored], [i for i, _ in scored], draws=DRAWS, seed=SEED)
        likert.append(
            {
                "criterion": entry["criterion"],
                "label": entry["label"],
                "n": found.n,
                "items": len({i for i, _ in scored}),
                "mean": found.mean,
                "ci_low": found.low,
                "ci_high": found.high,
                "sd": entry["sd"],
                "rwg_j": (entry.get("rwg_j") or {}).get("value"),
                "krippendorff_alpha": (entry.get("krippendorff_alpha") or {}).get("value"),
            }
        )
    categorical = [
        {
            "task": entry["task"],
            "label": entry["label"],
            "judgments": entry["judgments"],
            "units": entry.get("units", 0),
            "observed": (entry.get("observed") or {}).get("value"),
            "gwet_ac1": (entry.get("gwet_ac1") or {}).get("value"),
            "cohen_kappa": (entry.get("cohen_kappa") or {}).get("value"),
        }
        for entry in agreement["categorical"]
    ]
    return {
        "validation": True,
        "judgments": len(judgments),
        "likert": likert,
        "categorical": categorical,
        "convention": CONVENTION,
    }
