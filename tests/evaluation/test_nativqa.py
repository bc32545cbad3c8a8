"""NativQA results of a validation project in the evaluation view: Likert means (n, a bootstrap interval by item)
beside the validation app's agreement figures, and the categorical tasks' agreement."""

from __future__ import annotations

import statistics

import pytest
from django.urls import reverse

from evaluation.nativqa import nativqa_results
from tests.conftest import api_as
from tests.validation.conftest import COLLECTED_TSV, second_reviewer, tsv_source, vproject  # noqa: F401
from validation import services

SCORES = {"1": (5, 4), "2": (4, 4), "3": (2, 3), "4": (5, 5)}  # clarity by data id, by the two validators
GIVEN: list[int] = []


@pytest.fixture
def judged(vproject, coordinator, reviewer, second_reviewer):  # noqa: F811
    services.validation_settings_update(
        project=vproject,
        validators_per_item=2,
        tasks=["question", "likert"],
        likert_criteria=[{"key": "clarity", "label": "Clarity", "rubric": "1 unclear … 5 clear"}],
    )
    services.validation_items_import(project=vproject, source=tsv_source(COLLECTED_TSV), user=coordinator)
    GIVEN.clear()
    for number, user in enumerate((reviewer, second_reviewer)):
        while (slot := services.validation_claim_next(project=vproject, user=user)) is not None:
            clarity = SCORES[slot.item.validation.data_id][number]
            GIVEN.append(clarity)
            data = {"question": "good", "likert": {"clarity": clarity}}
            services.validation_submit(slot=slot, user=user, version=slot.version, data=data)
    return vproject


def test_likert_means_have_n_an_interval_and_the_validation_apps_agreement(judged):
    results = nativqa_results(judged)

    clarity = next(row for row in results["likert"] if row["criterion"] == "clarity")
    scores = GIVEN
    assert clarity["n"] == len(scores) >= 6 and clarity["items"] >= 3
    assert clarity["mean"] == pytest.approx(statistics.fmean(scores))
    assert clarity["sd"] == pytest.approx(statistics.stdev(scores), abs=1e-4)
    assert clarity["ci_low"] <= clarity["mean"] <= clarity["ci_high"]
    assert clarity["ci_low"] >= min(scores) and clarity["ci_high"] <= max(scores)
    agreement = services.validation_agreement(judged)
    own = next(entry for entry in agreement["likert"] if entry["criterion"] == "clarity")
    assert clarity["rwg_j"] == own["rwg_j"]["value"]
    assert clarity["krippendorff_alpha"] == own["krippendorff_alpha"]["value"]
    assert "resampled by item" in results["convention"]


def test_the_page_and_the_api_show_the_results_and_other_kinds_say_they_have_none(judged, coordinator, client):
    client.force_login(coordinator)

    html = client.get(reverse("evaluation_nativqa", args=[judged.slug])).content.decode()
    data = api_as(coordinator).get(f"/api/projects/{judged.slug}/evaluation/nativqa/").json()

    clarity = next(row for row in data["likert"] if row["criterion"] == "clarity")
    assert f"{clarity['mean']:.2f}" in html and f"n={clarity['n']} of {clarity['items']} item(s)" in html
    assert "Gwet's AC1" in html and data["validation"] is True
    assert data["categorical"] and all("gwet_ac1" in row for row in data["categorical"])
