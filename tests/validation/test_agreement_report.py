"""A validation project's agreement report (review.reports) holds its Likert and categorical judgments.

Two validators judge four hand-made items; every expected value is worked out below
(Krippendorff's alpha also with the `krippendorff` package, independently of ours).
"""

from __future__ import annotations

import math
from fractions import Fraction

import krippendorff
import numpy as np
import pytest
from django.urls import reverse

from review.reports import agreement_report_compute, agreement_report_request, latest_agreement_report
from tests.conftest import api_as
from tests.validation.conftest import TSV_HEADER, tsv_source
from validation import services

ROWS = "".join(
    f"{i}\tfood\tq\t{question}\t{answer}\tfactoid\thttps://s{i}.example.org/p\tx\t{other}\n"
    for i, (question, answer, other) in enumerate(
        [
            ("Which dish is eaten at Eid?", "Harees.", "Harees, wheat and meat."),
            ("What is the capital?", "Doha.", "The city of Doha."),
            ("Which sea borders it?", "The Persian Gulf.", "The Arabian Gulf."),
            ("Who founded the museum?", "Sheikh Saud.", "The emir."),
        ],
        start=1,
    )
)
# Per item (data_id 1-4): (question, location, better answer, clarity) of validator 1, then validator 2.
PLAN = {
    "1": [("good", "yes", "original", 5), ("good", "yes", "original", 5)],
    "2": [("good", "yes", "original", 4), ("good", "yes", "alternative", 5)],
    "3": [("good", "yes", "alternative", 2), ("bad", "yes", "alternative", 3)],
    "4": [("bad", "yes", "neither", 3), ("bad", "no", "neither", 3)],
}


@pytest.fixture
def judged(vproject, coordinator, reviewer, second_reviewer):
    services.validation_settings_update(
        project=vproject,
        validators_per_item=2,
        tasks=["question", "location", "better_answer", "likert"],
        likert_criteria=[{"key": "clarity", "label": "Clarity", "rubric": "1 unclear … 5 clear"}],
    )
    header = TSV_HEADER.rstrip("\n") + "\talternative_answer\n"
    services.validation_items_import(project=vproject, source=tsv_source(header + ROWS), user=coordinator)
    left_chosen = 0
    for number, user in enumerate((reviewer, second_reviewer)):
        while (slot := services.validation_claim_next(project=vproject, user=user)) is not None:
            question, location, better, clarity = PLAN[slot.item.validation.data_id][number]
            data = {"question": question, "location_relevant": location, "likert": {"clarity": clarity}}
            if question == "bad":
                data["question_reason"] = "ambiguous"
            order = [key for key, _ in services.better_answer_options(slot)]  # this validator's random order
            if better == "neither":
                data |= {"better": "neither", "better_comment": "both miss the point"}
            else:
                position = order.index(better) + 1
                left_chosen += position == 1
                data["better"] = str(position)
            services.validation_submit(slot=slot, user=user, version=slot.version, data=data)
    report, _ = agreement_report_request(project=vproject, user=coordinator, enqueue=False)
    agreement_report_compute(report_id=report.pk, bootstrap=0)
    report.refresh_from_db()
    assert report.status == "done", report.error
    return vproject, report, left_chosen


def statistic(report, scope: str, name: str) -> float | None:
    return report.result["scopes"][scope]["summary"]["statistics"][name]["value"]


def figures(report, scope: str) -> dict:
    return {figure["name"]: figure["value"] for figure in report.result["scopes"][scope]["figures"]}


def test_question_good_bad_observed_agreement_kappa_and_ac1(judged):
    _, report, _ = judged
    # Agree on 3 of 4. Validator 1: good 3, bad 1; validator 2: good 2, bad 2.
    # kappa: p_e = 3/4*2/4 + 1/4*2/4 = 1/2 -> (3/4 - 1/2)/(1/2) = 1/2.
    # AC1: pi_good = 5/8, p_e = 2 * 5/8 * 3/8 = 15/32 -> (3/4 - 15/32)/(17/32) = 9/17.
    assert statistic(report, "validation:question", "percent_agreement") == pytest.approx(0.75)
    assert statistic(report, "validation:question", "cohen_kappa_mean") == pytest.approx(0.5)
    assert statistic(report, "validation:question", "gwet_ac1") == pytest.approx(9 / 17)


def test_location_relevance_kappa_is_zero_where_ac1_is_high(judged):
    _, report, _ = judged
    # Agree on 3 of 4; validator 1 always yes. kappa: p_e = 1 * 3/4 = 3/4 -> 0.
    # AC1: pi_yes = 7/8, p_e = 2 * 7/8 * 1/8 = 7/32 -> (3/4 - 7/32)/(25/32) = 17/25.
    assert statistic(report, "validation:location", "percent_agreement") == pytest.approx(0.75)
    assert statistic(report, "validation:location", "cohen_kappa_mean") == pytest.approx(0.0)
    assert statistic(report, "validation:location", "gwet_ac1") == pytest.approx(17 / 25)


def test_better_answer_agreement_and_position_bias(judged):
    _, report, left_chosen = judged
    # Agree on items 1, 3 and 4. Validator 1: original 2, alternative 1, neither 1; validator 2: 1, 2, 1.
    # kappa: p_e = 2/4*1/4 + 1/4*2/4 + 1/4*1/4 = 5/16 -> (3/4 - 5/16)/(11/16) = 7/11.
    # AC1: pi = 3/8, 3/8, 1/4; p_e = 1/2 * (15/64 + 15/64 + 12/64) = 21/64 -> (27/64)/(43/64) = 27/43.
    assert statistic(report, "validation:better_answer", "percent_agreement") == pytest.approx(0.75)
    assert statistic(report, "validation:better_answer", "cohen_kappa_mean") == pytest.approx(7 / 11)
    assert statistic(report, "validation:better_answer", "gwet_ac1") == pytest.approx(27 / 43)
    # Position bias: 6 choices of one answer (the two "neither" have no position).
    # p-value: the total probability, under Binomial(6, 1/2), of outcomes no likelier than the one observed.
    probabilities = [Fraction(math.comb(6, k), 2**6) for k in range(7)]
    p_value = sum(p for p in probabilities if p <= probabilities[left_chosen])
    bias = figures(report, "validation:better_answer")
    assert (bias["choices"], bias["left_chosen"], bias["neither"]) == (6, left_chosen, 2)
    assert bias["left_share"] == pytest.approx(left_chosen / 6, abs=1e-4)
    assert bias["position_p_value"] == pytest.approx(float(p_value), abs=1e-4)


def test_likert_ordinal_alpha_rwg_mean_and_spread(judged):
    _, report, _ = judged
    scope = "validation:likert:clarity"
    scores = [5, 5, 4, 5, 2, 3, 3, 3]
    # Mean 30/8; sample variance: squared deviations 3*1.5625 + 0.0625 + 3.0625 + 3*0.5625 = 9.5, over 7.
    assert figures(report, scope)["mean"] == pytest.approx(3.75)
    assert figures(report, scope)["sd"] == pytest.approx(math.sqrt(9.5 / 7), abs=1e-4)
    assert figures(report, scope)["mean"] == pytest.approx(sum(scores) / len(scores))
    # r*wg(j): within-item variances 0, 1/2, 1/2, 0 -> mean 1/4, against (5^2 - 1)/12 = 2: 1 - 1/8 = 7/8.
    assert statistic(report, scope, "rwg_star_j") == pytest.approx(7 / 8)
    expected_alpha = krippendorff.alpha(
        reliability_data=np.array([[5, 4, 2, 3], [5, 5, 3, 3]], dtype=float),
        level_of_measurement="ordinal",
        value_domain=[1, 2, 3, 4, 5],
    )
    assert statistic(report, scope, "krippendorff_alpha") == pytest.approx(expected_alpha)
    assert report.result["scopes"][scope]["level"] == "ordinal"


def test_the_agreement_page_and_release_summary_show_the_validation_figures(judged, coordinator, client):
    project, report, _ = judged
    client.force_login(coordinator)

    page = client.get(reverse("agreement_report", args=[project.slug, report.pk])).content.decode()

    assert "Likert: Clarity" in page and "Better answer" in page and "Question good/bad" in page
    assert "Position bias p-value" in page and "Spread (standard deviation)" in page
    summary = latest_agreement_report(project)
    assert summary["scopes"]["validation:likert:clarity"]["figures"][0]["name"] == "mean"
    api = api_as(coordinator).get(f"/api/projects/{project.slug}/agreement/reports/{report.pk}/")
    assert "validation:better_answer" in api.data["result"]["scopes"]


def test_the_quick_validation_page_uses_the_same_scopes(judged, coordinator):
    project, report, left_chosen = judged

    quick = services.validation_agreement(project)

    better = next(entry for entry in quick["categorical"] if entry["task"] == "better_answer")
    assert better["cohen_kappa"]["value"] == pytest.approx(
        statistic(report, "validation:better_answer", "cohen_kappa_mean")
    )
    assert quick["position_bias"]["left"] == left_chosen
