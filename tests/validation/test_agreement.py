"""Agreement figures of a validation project, on a small hand-made set whose values are worked out below."""

from __future__ import annotations

import pytest

from validation import services
from validation.models import ValidationJudgment


def judgment(item: int, validator: int, **fields) -> ValidationJudgment:
    return ValidationJudgment(item_id=item, validator_id=validator, **fields)


@pytest.fixture
def hand_made():
    good = [(1, True, True), (2, True, True), (3, True, False), (4, False, False)]
    clarity = {1: (5, 5), 2: (4, 5), 3: (2, 3)}
    rows = []
    for item, a, b in good:
        scores = clarity.get(item)
        rows.append(judgment(item, 1, question_good=a, likert={"clarity": scores[0]} if scores else {}))
        rows.append(judgment(item, 2, question_good=b, likert={"clarity": scores[1]} if scores else {}))
    return rows


def test_question_agreement_is_observed_agreement_ac1_and_kappa(vproject, hand_made):
    figures = services.validation_agreement(vproject, judgments=hand_made)

    question = next(entry for entry in figures["categorical"] if entry["task"] == "question")
    # Agreement on 3 of 4 items. Validator 1 says good 3 times, validator 2 twice:
    # kappa: p_e = 3/4*2/4 + 1/4*2/4 = 1/2, (3/4 - 1/2) / (1 - 1/2) = 1/2.
    # AC1: pi_good = 5/8, p_e = 2 * 5/8 * 3/8 = 15/32, (3/4 - 15/32) / (1 - 15/32) = 9/17.
    assert question["observed"]["value"] == pytest.approx(0.75)
    assert question["cohen_kappa"]["value"] == pytest.approx(0.5)
    assert question["gwet_ac1"]["value"] == pytest.approx(9 / 17)


def test_likert_agreement_is_ordinal_alpha_and_rwg_with_the_mean_and_spread(vproject, hand_made):
    figures = services.validation_agreement(vproject, judgments=hand_made)

    clarity = next(entry for entry in figures["likert"] if entry["criterion"] == "clarity")
    # Scores 5,5 | 4,5 | 2,3: mean 24/6 = 4, sample variance 8/5.
    assert clarity["mean"] == pytest.approx(4.0)
    assert clarity["sd"] == pytest.approx((8 / 5) ** 0.5, abs=1e-4)
    # Ordinal alpha: n_2 = n_3 = n_4 = 1, n_5 = 3; D_o = (2*4 + 2*1)/6, D_e = 186/30, alpha = 1 - 25/93 = 68/93.
    assert clarity["krippendorff_alpha"]["value"] == pytest.approx(68 / 93)
    # r*wg(j): mean within-item variance (0 + 1/2 + 1/2)/3 = 1/3 against (5^2 - 1)/12 = 2: 1 - 1/6 = 5/6.
    assert clarity["rwg_j"]["value"] == pytest.approx(5 / 6)


def test_criteria_nobody_scored_have_no_figures(vproject, hand_made):
    figures = services.validation_agreement(vproject, judgments=hand_made)

    faithfulness = next(entry for entry in figures["likert"] if entry["criterion"] == "faithfulness")
    assert (faithfulness["judgments"], faithfulness["mean"]) == (0, None)
    assert "krippendorff_alpha" not in faithfulness


def test_the_position_bias_p_value_is_the_exact_two_sided_binomial_test():
    from validation.agreement import binomial_two_sided

    assert binomial_two_sided(9, 10) == pytest.approx(0.021484375)  # 2 × 11/1024, as R's binom.test(9, 10) gives
    assert binomial_two_sided(3, 6) == 1.0
    assert binomial_two_sided(0, 0) == 1.0  # no choices: no evidence of bias
    assert binomial_two_sided(0, 20) == pytest.approx(2 / 2**20)
