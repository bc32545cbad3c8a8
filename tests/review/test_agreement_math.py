"""Agreement statistics against published worked examples and hand computations.

Every expected number here comes from a publication or from the arithmetic in
the test's docstring, never from running the function under test.
No database: these are pure functions.
"""

from __future__ import annotations

import json
import math

import krippendorff
import numpy as np
import pytest

from review.agreement import (
    AgreementInputError,
    _resamples,
    agreement_summary,
    alpha_bootstrap,
    alpha_bootstrap_samples,
    cohen_kappa,
    contested_units,
    fleiss_kappa,
    gwet_ac1,
    judgments_fingerprint,
    krippendorff_alpha,
    percent_agreement,
    rating_table,
    rating_table_from_indices,
    rating_table_from_matrix,
    rwg_j,
)

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

nan = np.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
# 4 observers (A–D) × 12 units, values 1–5, empty cells missing. Unit 12 has one value only.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters each, 5 categories;
# cell = how many raters put the subject in the category. (Not Fleiss' 1971 table, whose kappa is 0.430.)
FLEISS_WIKIPEDIA = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def from_count_table(table: list[list[int]]) -> list[tuple[int, str, int]]:
    """Long-format judgments from a subjects × categories count table (who rated what does not matter to Fleiss)."""
    judgments = []
    for subject, row in enumerate(table):
        rater = 0
        for category, count in enumerate(row, start=1):
            for _ in range(count):
                judgments.append((subject, f"r{rater}", category))
                rater += 1
    return judgments


def from_two_by_two(both_yes: int, a_yes_b_no: int, a_no_b_yes: int, both_no: int) -> list[tuple[int, str, str]]:
    cells = [("yes", "yes")] * both_yes + [("yes", "no")] * a_yes_b_no
    cells += [("no", "yes")] * a_no_b_yes + [("no", "no")] * both_no
    judgments = []
    for unit, (a, b) in enumerate(cells):
        judgments += [(unit, "A", a), (unit, "B", b)]
    return judgments


# Krippendorff's alpha


def test_alpha_of_krippendorffs_own_example_at_every_level_matches_the_published_values():
    """Krippendorff (2011), section C: α_nominal = 0.743, α_ordinal = 0.815, α_interval = 0.849, α_ratio = 0.797.

    Nominal by hand: the 11 units with two or more values hold n = 40 pairable
    values, n_c = 9, 13, 10, 5, 3 for the values 1..5. Off-diagonal coincidences
    come from unit 2 (2,2,2,3): 2·3·1/3 = 2, unit 6 (1,2,3,4): (16 − 4)/3 = 4 and
    unit 8 (1,1,1,2): 2, so Σ o_ck (c ≠ k) = 8. Σ n_c·n_k (c ≠ k) = 40² − (81 + 169 +
    100 + 25 + 9) = 1216. α = 1 − (n − 1)·8/1216 = 1 − 312/1216 = 0.743421.
    """
    expected = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
    for level, published in expected.items():
        result = krippendorff_alpha(rating_table_from_matrix(KRIPPENDORFF_2011, level))
        assert round(result.value, 3) == published, level
        assert (result.n_units, result.n_raters, result.n_judgments, result.excluded_units) == (11, 4, 40, 1)

    nominal = krippendorff_alpha(rating_table_from_matrix(KRIPPENDORFF_2011, "nominal"))
    assert nominal.value == pytest.approx(1 - 312 / 1216)


def test_alpha_from_long_format_judgments_equals_alpha_from_the_matrix():
    judgments = [
        (f"unit{u}", "ABCD"[r], value)
        for r, row in enumerate(KRIPPENDORFF_2011)
        for u, value in enumerate(row)
        if not math.isnan(value)
    ]
    long = krippendorff_alpha(rating_table(judgments, "interval")).value
    assert round(long, 3) == 0.849


def test_alpha_of_labelled_ordinal_values_uses_the_declared_order():
    """Krippendorff's example with the values 1..5 written as labels in that order gives the same α_ordinal."""
    labels = ["very low", "low", "mid", "high", "very high"]
    as_labels = [[None if math.isnan(v) else labels[int(v) - 1] for v in row] for row in KRIPPENDORFF_2011]
    table = rating_table_from_matrix(as_labels, "ordinal", categories=labels)
    assert round(krippendorff_alpha(table).value, 3) == 0.815


# Percent agreement, Fleiss' kappa, Gwet's AC1 with missing ratings


def test_gwets_ac1_fleiss_kappa_and_percent_agreement_with_missing_ratings_follow_gwets_formulas():
    """Krippendorff's data again: Gwet's handbook (2014) uses it too, and the README of his R package
    irrCAC (github.com/kgwet/irrCAC, dataset cac.raw4raters) publishes: percent agreement 0.8181818,
    AC1 0.77544 (p_e 0.1903212), Fleiss' kappa 0.76117 (p_e 0.2387153), Krippendorff's alpha 0.74342.

    p_a over the 11 units with r_i ≥ 2, Σ_k r_ik(r_ik − 1)/(r_i(r_i − 1)) per unit:
    units 1, 3, 4, 5, 7, 9, 10, 11 agree fully (1 each), units 2 and 8 give 3·2/12 = 0.5,
    unit 6 gives 0: p_a = 9/11 = 0.818182.
    π_k = mean over all 12 units of r_ik/r_i: sums 3, 3.25, 3.5, 1.25, 1 for k = 1..5,
    so π = (0.25, 0.270833, 0.291667, 0.104167, 0.083333).
    AC1: p_e = Σ π_k(1 − π_k)/(q − 1) = 0.761285/4 = 0.190321; (p_a − p_e)/(1 − p_e) = 0.775444.
    Fleiss: p_e = Σ π_k² = 0.238715; κ = (0.818182 − 0.238715)/(1 − 0.238715) = 0.761169.
    """
    table = rating_table_from_matrix(KRIPPENDORFF_2011, "nominal")
    pi = np.array([3, 3.25, 3.5, 1.25, 1]) / 12
    p_a = 9 / 11

    assert percent_agreement(table).value == pytest.approx(p_a)
    ac1_chance = (pi * (1 - pi)).sum() / 4
    assert ac1_chance == pytest.approx(0.190321, abs=1e-6)
    assert gwet_ac1(table).value == pytest.approx((p_a - ac1_chance) / (1 - ac1_chance))
    assert gwet_ac1(table).value == pytest.approx(0.775444, abs=1e-6)
    assert fleiss_kappa(table).value == pytest.approx(0.761169, abs=1e-6)
    assert gwet_ac1(table).excluded_units == 1
    assert round(gwet_ac1(table).value, 5) == 0.77544
    assert round(fleiss_kappa(table).value, 5) == 0.76117
    assert round(krippendorff_alpha(table).value, 5) == 0.74342


# irrCAC README (Gwet): distrib.6raters, 15 psychiatric patients × 6 psychiatrists, counts per diagnosis
# (depression, personality disorder, schizophrenia, neurosis, other) — part of Fleiss' (1971) data.
DISTRIB_6RATERS = [
    [0, 0, 0, 6, 0],
    [0, 3, 0, 0, 3],
    [0, 1, 4, 0, 1],
    [0, 0, 0, 0, 6],
    [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0],
    [0, 0, 4, 0, 2],
    [2, 0, 3, 1, 0],
    [2, 0, 0, 4, 0],
    [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0],
    [1, 1, 0, 4, 0],
    [0, 3, 3, 0, 0],
    [1, 0, 0, 5, 0],
    [0, 2, 0, 3, 1],
]


def test_ac1_fleiss_kappa_and_alpha_of_gwets_six_psychiatrists_match_his_published_values():
    """irrCAC README: AC1 0.4448007 (p_a 0.5511111, p_e 0.1914815), Fleiss' kappa 0.4139265
    (p_e 0.2340741), Krippendorff's alpha 0.4204384.

    Check of p_a by hand: per patient Σ n(n − 1) over the rows gives 30, 12, 12, 30, 12, 14, 14, 8,
    14, 30, 20, 12, 12, 20, 8 (sum 248), each out of 6·5 = 30 pairs, so p_a = 248/(15·30) = 0.551111.
    """
    table = rating_table(from_count_table(DISTRIB_6RATERS), "nominal")

    assert percent_agreement(table).value == pytest.approx(248 / 450)
    assert gwet_ac1(table).value == pytest.approx(0.4448007, abs=5e-8)
    assert fleiss_kappa(table).value == pytest.approx(0.4139265, abs=5e-8)
    assert krippendorff_alpha(table).value == pytest.approx(0.4204384, abs=5e-8)


def test_kappa_ac1_alpha_and_agreement_of_gwets_three_by_three_table_match_his_published_values():
    """irrCAC README, cont3x3abstractors (2 abstractors, ectopic / AIU / NIU pregnancies, 100 cases):
    Cohen's kappa 0.7964094, AC1 0.8493305, Krippendorff's alpha 0.7972585, percent agreement 0.89.

    Kappa by hand: p_o = (13 + 20 + 56)/100 = 0.89; row totals 13, 27, 60 and column totals 13, 24, 63
    give p_e = (13·13 + 27·24 + 60·63)/100² = 0.4597; κ = (0.89 − 0.4597)/(1 − 0.4597) = 0.796409.
    """
    table_3x3 = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
    labels = ["ectopic", "AIU", "NIU"]
    judgments = []
    unit = 0
    for row, first in zip(table_3x3, labels, strict=True):
        for count, second in zip(row, labels, strict=True):
            for _ in range(count):
                judgments += [(unit, "abstractor 1", first), (unit, "abstractor 2", second)]
                unit += 1
    table = rating_table(judgments, "nominal")

    kappa = cohen_kappa(table, "abstractor 1", "abstractor 2").value
    assert kappa == pytest.approx((0.89 - 0.4597) / (1 - 0.4597))
    assert kappa == pytest.approx(0.7964094, abs=5e-8)
    assert gwet_ac1(table).value == pytest.approx(0.8493305, abs=5e-8)
    assert krippendorff_alpha(table).value == pytest.approx(0.7972585, abs=5e-8)
    assert percent_agreement(table).value == pytest.approx(0.89)


def test_fleiss_kappa_of_the_wikipedia_worked_example_is_0_210():
    """Wikipedia "Fleiss' kappa" example: P̄ = 0.378, P_e = 0.213, κ = 0.210.

    Column totals 20, 28, 39, 21, 32 of 140: P_e = (20² + 28² + 39² + 21² + 32²)/140² = 4170/19600 = 0.212755.
    Per subject P_i = (Σ_j n_ij² − 14)/(14·13); the numerators are 182, 46, 56, 80, 60, 84, 44, 32, 52, 52
    (sum 688), so P̄ = 688/1820 = 0.378022 and κ = (0.378022 − 0.212755)/(1 − 0.212755) = 0.209932.
    """
    table = rating_table(from_count_table(FLEISS_WIKIPEDIA), "nominal")

    result = fleiss_kappa(table)

    assert round(result.value, 3) == 0.210
    assert result.value == pytest.approx((688 / 1820 - 4170 / 19600) / (1 - 4170 / 19600))
    assert percent_agreement(table).value == pytest.approx(688 / 1820)
    assert (result.n_units, result.n_raters, result.n_judgments) == (10, 14, 140)


def test_cohens_kappa_of_the_wikipedia_two_by_two_example_is_0_4():
    """Wikipedia "Cohen's kappa" example: 50 applications; both yes 20, A yes B no 5, A no B yes 10, both no 15.

    p_o = 35/50 = 0.7; A says yes 25/50 = 0.5, B says yes 30/50 = 0.6;
    p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5)/(1 − 0.5) = 0.4.
    """
    table = rating_table(from_two_by_two(20, 5, 10, 15), "nominal")

    result = cohen_kappa(table, "A", "B")

    assert result.value == pytest.approx(0.4)
    assert (result.n_units, result.n_raters, result.n_judgments) == (50, 2, 100)
    assert cohen_kappa(table, "B", "A").value == pytest.approx(0.4)


def test_gwets_ac1_stays_high_when_one_category_dominates_while_kappa_collapses():
    """Two raters, two categories (Gwet 2008, two-rater AC1: p_e = 2π(1 − π), π the mean share of 'pass').

    125 items: both pass 118, A pass B flag 5, A flag B pass 2, both flag 0. p_o = 118/125 = 0.944.
    Cohen: A passes 123/125 = 0.984, B 120/125 = 0.96; p_e = 0.984·0.96 + 0.016·0.04 = 0.94528;
    κ = (0.944 − 0.94528)/(1 − 0.94528) = −0.023392.
    AC1: π = (0.984 + 0.96)/2 = 0.972; p_e = 2·0.972·0.028 = 0.054432;
    AC1 = (0.944 − 0.054432)/(1 − 0.054432) = 0.940777.
    """
    judgments = from_two_by_two(118, 5, 2, 0)
    judgments = [(unit, rater, "pass" if value == "yes" else "flag") for unit, rater, value in judgments]
    table = rating_table(judgments, "nominal")

    assert cohen_kappa(table, "A", "B").value == pytest.approx(-0.023392, abs=1e-6)
    assert gwet_ac1(table).value == pytest.approx(0.889568 / 0.945568)
    assert round(gwet_ac1(table).value, 4) == 0.9408


def test_gwets_ac1_of_the_cohen_example_by_hand():
    """Same 2×2 table as the kappa example: π_yes = (0.5 + 0.6)/2 = 0.55; p_e = 2·0.55·0.45 = 0.495;
    AC1 = (0.7 − 0.495)/(1 − 0.495) = 0.405941."""
    table = rating_table(from_two_by_two(20, 5, 10, 15), "nominal")
    assert gwet_ac1(table).value == pytest.approx(0.205 / 0.505)


# r*wg(j)


RWG_EXAMPLE = [
    # three raters × four items on a 5-point scale
    [4, 3, 2, 1],
    [4, 4, 2, 3],
    [5, 5, 2, 5],
]


def test_rwg_star_j_by_hand():
    """Item variances (n − 1 denominator): (4,4,5) → 1/3, (3,4,5) → 1, (2,2,2) → 0, (1,3,5) → 4;
    mean s̄² = (1/3 + 1 + 0 + 4)/4 = 4/3. A = 5 options: σ²_EU = (25 − 1)/12 = 2.
    r*wg(j) = 1 − (4/3)/2 = 1/3 (Lindell, Brandt & Whitney 1999).
    rwg(j) with J = 4 (James, Demaree & Wolf 1984): 4·(1 − 2/3)/(4·(1 − 2/3) + 2/3) = (4/3)/2 = 2/3.
    """
    table = rating_table_from_matrix(RWG_EXAMPLE, "interval", categories=[1, 2, 3, 4, 5])

    star = rwg_j(table)
    assert star.value == pytest.approx(1 / 3)
    assert "A = 5" in star.note
    assert rwg_j(table, star=False).value == pytest.approx(2 / 3)


def test_rwg_star_j_infers_the_scale_from_integer_ratings_and_says_so():
    """Observed range 1–5 gives A = 5, the same as declaring the scale."""
    table = rating_table_from_matrix(RWG_EXAMPLE, "ordinal")
    result = rwg_j(table)
    assert result.value == pytest.approx(1 / 3)
    assert "inferred" in result.note


def test_rwg_star_j_with_a_given_number_of_options():
    """A = 7: σ²_EU = 48/12 = 4; r*wg(j) = 1 − (4/3)/4 = 2/3."""
    table = rating_table_from_matrix(RWG_EXAMPLE, "interval")
    assert rwg_j(table, options=7).value == pytest.approx(2 / 3)


def test_more_spread_than_random_makes_rwg_star_j_negative_and_rwg_j_zero():
    """Two raters at the ends of a 5-point scale on both items: variances (1, 5) → 8 each, s̄² = 8;
    r*wg(j) = 1 − 8/2 = −3 (Lindell et al. allow it); rwg(j) is truncated to 0 (James et al. 1984)."""
    table = rating_table_from_matrix([[1, 1], [5, 5]], "interval", categories=[1, 2, 3, 4, 5])
    assert rwg_j(table).value == pytest.approx(-3)
    assert rwg_j(table, star=False).value == 0.0


def test_rwg_star_j_on_a_declared_scale_with_half_steps():
    """The example halved on the scale 0.5, 1, …, 2.5: variances shrink by 4 and so does σ²_EU
    (uniform over 5 points 0.5 apart: 2/4 = 0.5), so r*wg(j) is again 1 − (1/3)/0.5 = 1/3."""
    halved = [[value / 2 for value in row] for row in RWG_EXAMPLE]
    table = rating_table_from_matrix(halved, "interval", categories=[0.5, 1, 1.5, 2, 2.5])
    assert rwg_j(table).value == pytest.approx(1 / 3)


def test_rwg_j_is_undefined_for_nominal_data():
    result = rwg_j(rating_table_from_matrix(KRIPPENDORFF_2011, "nominal"))
    assert result.value is None
    assert "numeric" in result.note


# Degenerate data is reported, not crashed on


def test_one_rater_only_gives_no_values_and_says_why():
    table = rating_table([(unit, "solo", "pass") for unit in range(5)], "nominal")

    summary = agreement_summary(table, "nominal", bootstrap=10)

    for statistic in summary.statistics.values():
        assert statistic.value is None
        assert statistic.note
    assert "one rater" in summary.statistics["krippendorff_alpha"].note
    assert summary.excluded_units == 5
    assert summary.pairs == ()


def test_no_variation_makes_alpha_and_kappa_undefined_but_agreement_perfect():
    judgments = [(unit, rater, "pass") for unit in range(4) for rater in ("a", "b", "c")]
    table = rating_table(judgments, "nominal")

    alpha = krippendorff_alpha(table)
    assert alpha.value is None
    assert "No variation" in alpha.note and "undefined" in alpha.note
    assert fleiss_kappa(table).value is None
    assert cohen_kappa(table, "a", "b").value is None
    assert percent_agreement(table).value == 1.0
    assert gwet_ac1(table).value is None  # only one category known…
    declared = rating_table(judgments, "nominal", categories=["pass", "flag"])
    assert gwet_ac1(declared).value == 1.0  # …but with the scale declared AC1 is defined: p_a = 1, p_e = 0.


def test_units_with_a_single_judgment_are_left_out_and_counted():
    judgments = [(1, "a", 1), (1, "b", 1), (2, "a", 2), (2, "b", 2), (3, "a", 1), (4, "b", 2)]

    summary = agreement_summary(judgments, "nominal", bootstrap=0)

    assert (summary.n_units, summary.n_judgments, summary.excluded_units) == (2, 4, 2)
    assert summary.statistics["percent_agreement"].value == 1.0
    assert summary.statistics["krippendorff_alpha"].excluded_units == 2
    assert "judged only once" in summary.notes[0]


def test_no_judgments_at_all_give_no_values_and_say_so():
    summary = agreement_summary([(1, "a", None), (2, "b", None)], "interval", bootstrap=10)
    assert all(statistic.value is None for statistic in summary.statistics.values())
    assert summary.statistics["krippendorff_alpha"].note == "No judgments."


def test_raters_who_share_no_unit_have_no_kappa():
    judgments = [(1, "a", 1), (1, "b", 2), (2, "b", 1), (2, "a", 1), (3, "c", 1), (4, "c", 2)]
    table = rating_table(judgments, "nominal")
    result = cohen_kappa(table, "a", "c")
    assert result.value is None
    assert "No unit" in result.note


# Bootstrap


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_the_vectorised_bootstrap_equals_recomputing_alpha_on_each_unit_resample(level):
    """Each resample is a weight per count profile; alpha of the units it stands for, by the package, is the same."""
    table = rating_table_from_matrix(KRIPPENDORFF_2011, level)
    samples = alpha_bootstrap_samples(table, replicates=40, seed=7)
    [(weights, profiles)] = list(_resamples(table, 40, 7))

    domain = np.array(table.categories, dtype=float) if level in ("interval", "ratio") else np.arange(5)
    assert weights.sum(axis=1).tolist() == [11] * 40  # each resample draws the 11 units judged at least twice
    for sample, row in zip(samples, weights, strict=True):
        resample = np.repeat(profiles, row.astype(int), axis=0)
        if (resample.sum(axis=0) > 0).sum() < 2:
            assert math.isnan(sample)
        else:
            expected = krippendorff.alpha(value_counts=resample, value_domain=domain, level_of_measurement=level)
            assert sample == pytest.approx(expected)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_over_count_profiles_is_the_packages_value_with_many_distinct_values(level):
    """Alpha is the package's formula summed over count profiles (each weighted by its units) rather than over
    units: the same number to 12 significant digits, here with about 60 distinct values and missing ratings."""
    rng = np.random.default_rng(11)
    truth = rng.normal(50, 10, 300)
    matrix = np.round(truth + rng.normal(0, 4, (3, 300)))
    matrix[rng.random((3, 300)) < 0.2] = np.nan
    table = rating_table_from_matrix(matrix, level)
    used = table.counts[table.judgments_per_unit >= 2]
    domain = (
        np.asarray(table.categories, dtype=float)
        if level in ("interval", "ratio")
        else np.arange(len(table.categories), dtype=float)
    )

    package = krippendorff.alpha(value_counts=used, value_domain=domain, level_of_measurement=level)

    assert len(table.categories) > 40
    assert krippendorff_alpha(table).value == pytest.approx(package, rel=1e-12)


def test_the_bootstrap_interval_is_reproducible_with_its_seed_and_brackets_alpha():
    table = rating_table_from_matrix(KRIPPENDORFF_2011, "interval")

    first = alpha_bootstrap(table, replicates=500, seed=3)
    again = alpha_bootstrap(table, replicates=500, seed=3)
    other = alpha_bootstrap(table, replicates=500, seed=4)

    assert first == again
    assert first != other
    low, high, used = first
    assert low < 0.849 < high
    assert used == 500


# The summary


def test_summary_has_every_statistic_pairs_and_strata_and_is_strict_json():
    judgments = [
        (f"u{u}", "ABCD"[r], int(value))
        for r, row in enumerate(KRIPPENDORFF_2011)
        for u, value in enumerate(row)
        if not math.isnan(value)
    ]
    strata = {f"u{u}": ("early" if u < 6 else "late") for u in range(12)}

    summary = agreement_summary(judgments, "ordinal", strata=strata, bootstrap=200, seed=1)
    data = json.loads(json.dumps(summary.to_dict(), allow_nan=False))

    assert set(data["statistics"]) == {
        "krippendorff_alpha",
        "percent_agreement",
        "fleiss_kappa",
        "gwet_ac1",
        "rwg_star_j",
        "cohen_kappa_mean",
    }
    alpha = data["statistics"]["krippendorff_alpha"]
    assert round(alpha["value"], 3) == 0.815
    assert alpha["ci_low"] < alpha["value"] < alpha["ci_high"]
    assert set(alpha) >= {"value", "ci_low", "ci_high", "n_units", "n_raters", "n_judgments", "excluded_units", "note"}
    assert data["raters"] == ["A", "B", "C", "D"]  # order of first appearance
    assert len(data["pairs"]) == 6
    kappa = data["matrices"]["cohen_kappa"]
    assert kappa[0][1] == kappa[1][0] == pytest.approx(cohen_kappa(rating_table(judgments, "ordinal"), "A", "B").value)
    assert [stratum["label"] for stratum in data["strata"]] == ["early", "late"]

    early_units = {f"u{u}" for u in range(6)}
    early = rating_table([j for j in judgments if j[0] in early_units], "ordinal")
    early_alpha = data["strata"][0]["statistics"]["krippendorff_alpha"]["value"]
    assert early_alpha == pytest.approx(krippendorff_alpha(early).value)


def test_the_fingerprint_depends_on_the_judgments_not_on_their_order():
    judgments = from_two_by_two(20, 5, 10, 15)
    first = agreement_summary(judgments, "nominal", bootstrap=0).fingerprint
    shuffled = agreement_summary(list(reversed(judgments)), "nominal", bootstrap=0).fingerprint
    changed = agreement_summary([*judgments[:-1], (49, "B", "yes")], "nominal", bootstrap=0).fingerprint
    other_level = agreement_summary(judgments, "ordinal", categories=["no", "yes"], bootstrap=0).fingerprint

    assert first.startswith("sha256:")
    assert first == shuffled
    assert len({first, changed, other_level}) == 3


def test_contested_units_come_most_contested_first_with_who_said_what():
    """Krippendorff's data: unit 6 (values 1, 2, 3, 4) has no agreeing pair; units 2 (2, 2, 2, 3) and
    8 (1, 1, 2, 1) have 3 of 6 pairs agreeing; every other unit is unanimous."""
    table = rating_table_from_matrix(KRIPPENDORFF_2011, "interval", units=[f"unit {n}" for n in range(1, 13)])

    contested = contested_units(table)

    assert [(unit.unit, unit.agreement) for unit in contested] == [("unit 6", 0), ("unit 2", 0.5), ("unit 8", 0.5)]
    assert contested[0].values == {"1": 1, "2": 1, "3": 1, "4": 1}
    assert contested[0].spread == pytest.approx(5 / 3)  # variance of 1, 2, 3, 4
    summary = agreement_summary(table, "interval", bootstrap=0).to_dict()
    assert [unit["unit"] for unit in summary["contested_units"]] == ["unit 6", "unit 2", "unit 8"]


def test_a_summary_without_pairwise_figures_names_no_rater_pair_but_keeps_the_mean_kappa():
    table = rating_table_from_matrix(KRIPPENDORFF_2011, "nominal")
    full = agreement_summary(table, "nominal", bootstrap=0)
    overall_only = agreement_summary(table, "nominal", bootstrap=0, pairwise=False)

    assert overall_only.pairs == ()
    assert overall_only.to_dict()["matrices"] == {}
    assert overall_only.statistics["cohen_kappa_mean"] == full.statistics["cohen_kappa_mean"]
    assert overall_only.statistics["krippendorff_alpha"] == full.statistics["krippendorff_alpha"]


def test_summary_csv_rows_have_a_header_and_one_row_per_figure():
    summary = agreement_summary(from_two_by_two(20, 5, 10, 15), "nominal", bootstrap=50)
    rows = summary.csv_rows()
    assert rows[0][:5] == ["scope", "rater_a", "rater_b", "stratum", "statistic"]
    assert rows[len(summary.statistics) + 1][:5] == ["pair", "A", "B", "", "cohen_kappa"]
    assert len(rows) == 1 + len(summary.statistics) + 3


# Bad input names the judgment


def test_a_repeated_judgment_is_refused_naming_its_position():
    with pytest.raises(AgreementInputError) as error:
        rating_table([(1, "a", 1), (1, "b", 2), (1, "a", 2)], "nominal")
    assert error.value.record == 2
    assert "already judged unit 1" in str(error.value)


def test_the_earliest_repeated_judgment_is_the_one_named():
    with pytest.raises(AgreementInputError) as error:
        rating_table([(2, "a", 1), (1, "a", 1), (1, "a", 2), (2, "a", 3)], "nominal")
    assert error.value.record == 2


def test_a_non_number_at_interval_level_is_refused_naming_its_position():
    with pytest.raises(AgreementInputError) as error:
        rating_table([(1, "a", 1), (1, "b", "three")], "interval")
    assert (error.value.record, error.value.field) == (1, "value")


def test_a_value_off_the_declared_scale_is_refused():
    with pytest.raises(AgreementInputError) as error:
        rating_table([(1, "a", 1), (1, "b", 9)], "ordinal", categories=[1, 2, 3])
    assert error.value.record == 1
    assert "declared categories" in str(error.value)


def test_missing_values_are_skipped_and_positions_still_count_them():
    with pytest.raises(AgreementInputError) as error:
        rating_table([(1, "a", None), (1, "b", 1), (2, "a", "x")], "interval")
    assert error.value.record == 2


def test_an_unknown_level_is_refused():
    with pytest.raises(AgreementInputError) as error:
        rating_table([(1, "a", 1)], "cardinal")
    assert error.value.field == "level"


# Against a maintained package: statsmodels computes Fleiss' kappa (complete tables only: it asserts every subject
# has every rating) and Cohen's kappa from the confusion table. Ours must give its values on random tables.


@pytest.mark.parametrize("seed", range(6))
def test_fleiss_and_cohens_kappa_equal_statsmodels_on_random_tables(seed):
    from statsmodels.stats import inter_rater

    rng = np.random.default_rng(seed)
    raters, units, n_categories = int(rng.integers(2, 7)), int(rng.integers(15, 90)), int(rng.integers(2, 6))
    matrix = rng.integers(0, n_categories, size=(raters, units))
    categories = list(range(n_categories))
    table = rating_table_from_matrix(matrix.tolist(), "nominal", categories=categories)
    counts, _ = inter_rater.aggregate_raters(matrix.T, n_cat=n_categories)
    assert fleiss_kappa(table).value == pytest.approx(inter_rater.fleiss_kappa(counts, method="fleiss"), abs=1e-12)

    with_gaps = matrix.astype(object)
    with_gaps[rng.random(with_gaps.shape) < 0.2] = None  # Cohen's kappa uses the units both raters judged
    table = rating_table_from_matrix(with_gaps.tolist(), "nominal", categories=categories)
    both = [(a, b) for a, b in zip(with_gaps[0], with_gaps[-1], strict=True) if a is not None and b is not None]
    confusion = np.zeros((n_categories, n_categories))
    for a, b in both:
        confusion[a, b] += 1
    expected = inter_rater.cohens_kappa(confusion, return_results=False)
    assert cohen_kappa(table, 0, raters - 1).value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_of_2000_units_with_missing_ratings_is_the_packages_value(level):
    rng = np.random.default_rng(5)
    truth = rng.integers(1, 8, 2000)
    matrix = (truth + rng.integers(-1, 2, (4, 2000))).astype(float)
    matrix[rng.random((4, 2000)) < 0.3] = np.nan
    table = rating_table_from_matrix(matrix, level)
    used = table.counts[table.judgments_per_unit >= 2]
    domain = np.asarray(table.categories, dtype=float) if level in ("interval", "ratio") else None
    package = krippendorff.alpha(
        value_counts=used,
        value_domain=domain if domain is not None else np.arange(len(table.categories), dtype=float),
        level_of_measurement=level,
    )

    assert krippendorff_alpha(table).value == pytest.approx(float(package), rel=1e-12)


def test_numbered_judgments_make_the_same_table_as_the_judgments_themselves():
    units, raters, categories = [30, 10, 20, 40], ["ann", "bo", "cy"], ["pass", "flag"]
    unit_index, rater_index, code = [2, 2, 0, 0, 1, 2, 1], [1, 0, 0, 2, 0, 2, 2], [0, 1, 0, 0, 1, 0, 1]
    triples = [(units[u], raters[r], categories[c]) for u, r, c in zip(unit_index, rater_index, code, strict=True)]

    numbered = rating_table_from_indices(
        "nominal", units=units, raters=raters, categories=categories,
        unit_index=unit_index, rater_index=rater_index, code=code,
    )  # fmt: skip
    coded = rating_table(triples, "nominal", categories=categories)

    assert (numbered.units, numbered.raters, numbered.categories) == (coded.units, coded.raters, coded.categories)
    assert numbered.units == (20, 30, 10)  # in order of appearance; unit 40 never judged
    for name in ("unit_index", "rater_index", "code"):
        assert getattr(numbered, name).tolist() == getattr(coded, name).tolist()
    assert judgments_fingerprint(numbered) == judgments_fingerprint(coded)
    with pytest.raises(AgreementInputError, match="already judged unit 20"):
        rating_table_from_indices(
            "nominal", units=units, raters=raters, categories=categories,
            unit_index=[2, 2], rater_index=[1, 1], code=[0, 1],
        )  # fmt: skip
