"""The metrics against the packages' own published values, and the language traps EVALUATION conventions name."""

from __future__ import annotations

import importlib.util

import pytest

from evaluation import extraction, metrics
from evaluation.statistics import bootstrap_mean, proportion, wilson

pytestmark = pytest.mark.one_engine  # pure functions: no database

SACREBLEU_HYPOTHESES = [
    "The relationship between cats and dogs is not exactly friendly.",
    "a good bookshop is just a genteel black hole that knows how to read.",
]
SACREBLEU_REFERENCES = [
    "The relationship between dogs and cats is not exactly friendly.",
    "A good bookshop is just a genteel Black Hole that knows how to read.",
]


def corpus_chrf(word_order: int) -> float:
    statistics = [
        metrics.chrf_statistics(hypothesis, reference, word_order=word_order)
        for hypothesis, reference in zip(SACREBLEU_HYPOTHESES, SACREBLEU_REFERENCES, strict=True)
    ]
    return 100 * metrics.chrf_from_statistics([sum(column) for column in zip(*statistics, strict=True)])


def test_chrf_and_chrf_plus_plus_give_sacrebleus_documented_values():
    # sacrebleu's chrF and chrF++ values as its metric card documents them (CHRF(), CHRF(word_order=2))
    sentence = metrics.chrf(
        "The relationship between Obama and Netanyahu is not exactly friendly.",
        "The ties between Obama and Netanyahu are not particularly friendly.",
        word_order=0,
    )
    assert 100 * sentence == pytest.approx(61.576379378113785, abs=1e-9)
    assert corpus_chrf(0) == pytest.approx(84.64214891738334, abs=1e-9)
    assert corpus_chrf(2) == pytest.approx(82.87263732906315, abs=1e-9)


@pytest.mark.skipif(importlib.util.find_spec("sacrebleu") is None, reason="sacrebleu is not installed here")
@pytest.mark.parametrize(
    ("prediction", "gold"), [("菠萝油和鸳鸯", "菠萝油和鸳鸯（标准）"), ("Bier und Brezn.", "Bier und Brezeln")]
)
def test_chrf_agrees_with_sacrebleu_itself(prediction, gold):
    from sacrebleu.metrics import CHRF

    for word_order in (0, 2):
        expected = CHRF(word_order=word_order).sentence_score(prediction, [gold]).score
        assert 100 * metrics.chrf(prediction, gold, word_order=word_order) == pytest.approx(expected, abs=1e-9)


@pytest.mark.skipif(importlib.util.find_spec("rouge") is None, reason="the rouge package (pltrdy) is not installed")
@pytest.mark.parametrize(
    ("prediction", "gold"),
    [("a a b", "a b"), ("Bier und Brezn. Und Bier", "Bier und Brezeln"), ("der Markt. is groß", "Der Markt ist groß")],
)
def test_parity_rouge_agrees_with_the_rouge_package_itself(prediction, gold):
    from rouge import Rouge

    expected = Rouge().get_scores(prediction, gold)[0]["rouge-l"]["f"]
    assert metrics.rouge_l_parity_raw(prediction, gold) == pytest.approx(expected, abs=1e-12)


def test_parity_rouge_counts_distinct_tokens_splits_on_dots_and_keeps_case():
    # the package's set-based union LCS: a repeated token counts once (multiset LCS would give 0.8)
    assert metrics.rouge_l_parity_raw("a a b", "a b") == pytest.approx(1.0, abs=1e-7)
    assert metrics.rouge_l(["a", "a", "b"], ["a", "b"]) == pytest.approx(0.8)
    # case-sensitive: "Bayern" and "bayern" differ
    assert metrics.rouge_l_parity_raw("von bayern", "von Bayern") == pytest.approx(0.5, abs=1e-7)
    # German parity: an empty answer becomes "[Null]" and scores 0, a lone "..." too
    assert metrics.rouge_l_parity("", "Bier und Brezeln", "deu") == 0.0
    assert metrics.rouge_l_parity("...", "Bier und Brezeln", "deu") == 0.0


@pytest.mark.parametrize(
    ("text", "language"),
    [("菠蘿油同埋鴛鴦", "yue"), ("菠萝油和鸳鸯", "cmn"), ("القاهرة عاصمة مصر", "arb"), ("Größe München Straße", "deu")],
)
def test_a_perfect_answer_scores_1_in_every_script(text, language):
    """rouge-score's default tokenizer keeps [a-z0-9] only: identical Chinese or Arabic answers get 0 there."""
    assert metrics.rouge_l(metrics.tokens(text, language), metrics.tokens(text, language)) == 1.0
    assert metrics.chrf(text, text) == pytest.approx(1.0)
    assert metrics.exact_match(text, text, language) == 1.0


def test_chinese_is_scored_on_characters_and_german_keeps_its_letters_and_case():
    assert metrics.tokens("菠萝油， 和鸳鸯", "cmn") == ["菠", "萝", "油", "和", "鸳", "鸯"]
    assert metrics.tokens("Größe, München", "deu") == ["Größe", "München"]
    partial = metrics.rouge_l(metrics.tokens("菠萝油", "cmn"), metrics.tokens("菠萝油和鸳鸯", "cmn"))
    assert partial == pytest.approx(2 * 1 * 0.5 / 1.5)


def test_arabic_normalisation_folds_alef_yeh_diacritics_tatweel_bidi_and_digits():
    written = "\u200fأَحْمَد إلى مـصـر ٢٠٢٤"
    assert metrics.normalise_arabic(written) == "احمد الي مصر 2024"
    assert metrics.exact_match(written, "احمد الى مصر 2024", "arb") == 1.0


def test_script_folding_meets_a_traditional_answer_and_a_simplified_gold():
    assert metrics.fold_script("菠蘿油同埋鴛鴦") == "菠萝油同埋鸳鸯"
    assert metrics.exact_match("菠蘿油", "菠萝油", "cmn") == 0.0
    assert metrics.exact_match(metrics.fold_script("菠蘿油"), "菠萝油", "cmn") == 1.0


def test_exact_match_trims_edge_punctuation_but_keeps_case():
    assert metrics.exact_match(" 1958年。", "1958年", "cmn") == 1.0
    assert metrics.exact_match("münchen", "München", "deu") == 0.0


def test_answer_tag_extraction_records_found_empty_and_not_found():
    assert extraction.answer_tag("x <ANSWER>\n 深水埗 \n</Answer> <answer>b</answer>") == extraction.Extracted(
        "found", "深水埗"
    )
    assert extraction.answer_tag("<answer> ... </answer>").outcome == "empty"
    assert extraction.answer_tag("<answer></answer>").outcome == "empty"
    assert extraction.answer_tag("深水埗").outcome == "not_found"
    assert extraction.answer_tag("<answer>深水埗").outcome == "not_found"


@pytest.mark.parametrize(
    ("reply", "strict", "tolerant"),
    [
        ("B", "B", "B"),
        (" B\n", "B", "B"),
        ("B.", "", "B"),
        ("(C)", "", "C"),
        ("Answer: A", "", "A"),
        ("ب", "", "B"),
        ("D", "", ""),  # three options: D is no answer
        ("Bilbao", "", ""),
        ("", "", ""),
    ],
)
def test_letter_extraction_strict_and_tolerant(reply, strict, tolerant):
    assert extraction.letter_strict(reply, 3).text == strict
    assert extraction.letter_tolerant(reply, 3).text == tolerant


def test_wilson_interval_matches_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    for successes, n in ((8, 10), (0, 7), (50, 50), (371, 1000)):
        low, high = proportion_confint(successes, n, alpha=0.05, method="wilson")
        assert wilson(successes, n) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    assert proportion([]).mean is None  # an empty cell is empty, not 0


def test_bootstrap_is_seeded_and_resamples_by_cluster():
    values = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    first = bootstrap_mean(values, draws=2000, seed=7)
    again = bootstrap_mean(values, draws=2000, seed=7)
    assert first == again
    assert first.low < first.mean < first.high
    # two clusters of identical items: each draw's mean is 1, 0 or 1/2, and the interval spans all of [0, 1]
    clustered = bootstrap_mean([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], ["p1", "p1", "p1", "p2", "p2", "p2"], draws=2000)
    assert (clustered.low, clustered.high) == (0.0, 1.0)
    assert bootstrap_mean([]).mean is None
    # one page pair (or one item) has nothing to resample: no interval rather than a zero-width one
    one_pair = bootstrap_mean([0.2, 0.1], ["p1", "p1"])
    assert (one_pair.mean, one_pair.low, one_pair.high) == (pytest.approx(0.15), None, None)
    assert bootstrap_mean([0.4]).low is None


@pytest.mark.skipif(importlib.util.find_spec("rouge_score") is None, reason="rouge-score is not installed")
def test_recommended_rouge_is_rouge_scores_own_value_with_a_tokenizer_that_keeps_the_script():
    from rouge_score import rouge_scorer

    class Tokens:
        def __init__(self, language: str) -> None:
            self.language = language

        def tokenize(self, text: str) -> list[str]:
            return metrics.tokens(text, self.language)

    cases = [
        ("菠蘿油同埋鴛鴦", "菠蘿油同埋鴛鴦", "yue"),
        ("菠萝油", "菠萝油和鸳鸯", "cmn"),
        ("القاهرة عاصمة", "القاهرة عاصمة مصر", "arb"),
        ("Bier und Brezn", "Bier und Brezeln", "deu"),
    ]
    default = rouge_scorer.RougeScorer(["rougeL"])
    # the trap: the default tokenizer keeps [a-z0-9] only, so a perfect Cantonese answer scores 0
    assert default.score("菠蘿油同埋鴛鴦", "菠蘿油同埋鴛鴦")["rougeL"].fmeasure == 0.0
    for prediction, gold, language in cases:
        scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=Tokens(language))
        expected = scorer.score(gold, prediction)["rougeL"].fmeasure
        ours = metrics.rouge_l(metrics.tokens(prediction, language), metrics.tokens(gold, language))
        assert ours == pytest.approx(expected, abs=1e-12), (prediction, language)


@pytest.mark.skipif(
    importlib.util.find_spec("rouge") is None or importlib.util.find_spec("jieba") is None,
    reason="rouge and jieba are needed for WiLoVa's Chinese ROUGE-L",
)
@pytest.mark.parametrize(
    ("prediction", "gold"), [("菠萝油和鸳鸯", "菠萝油和鸳鸯"), ("这家茶餐厅的菠萝油", "菠萝油和鸳鸯"), ("", "深水埗")]
)
def test_chinese_parity_rouge_is_the_packages_value_on_jieba_segments(prediction, gold):
    import jieba
    from rouge import Rouge

    candidate = " ".join(jieba.cut(prediction)) if prediction else "[无]"
    expected = Rouge().get_scores(candidate, " ".join(jieba.cut(gold)))[0]["rouge-l"]["f"]
    assert metrics.rouge_l_parity(prediction, gold, "cmn") == pytest.approx(expected, abs=1e-12)


def test_holm_mcnemar_and_the_sign_flip_test():
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.multitest import multipletests

    from evaluation.statistics import holm, mcnemar_exact, sign_flip_p

    p_values = [0.01, 0.04, 0.03, 0.2]
    assert holm(p_values) == pytest.approx(list(multipletests(p_values, method="holm")[1]))
    base = [1, 1, 0, 0, 0, 0, 0, 1, 0, 0]
    other = [1, 0, 1, 1, 1, 1, 1, 1, 1, 0]
    expected = mcnemar([[2, 1], [6, 1]], exact=True).pvalue  # [[both right, base only], [other only, neither]]
    assert mcnemar_exact(base, other) == pytest.approx(expected)
    assert mcnemar_exact([1, 0], [1, 0]) == 1.0
    # all twelve differences positive, in six pairs: the smallest two-sided p a sign flip by pair can give is 2/64
    p = sign_flip_p([0.5] * 12, [f"p{n // 2}" for n in range(12)], draws=20_000, seed=3)
    assert p == pytest.approx(2 / 64, abs=0.01)
    assert sign_flip_p([0.0, 0.0], ["a", "b"], draws=100, seed=1) == 1.0


def test_bertscore_says_plainly_it_is_unavailable_and_never_gives_a_number(yue_release, researcher, client):
    """No model weights can be downloaded on this server: a run names BERTScore as unavailable with the study's
    model for the language, stores no BERTScore for any item, and the run page says so in words."""
    from evaluation import metrics, services
    from tests.evaluation.conftest import predictions

    data = predictions(
        yue_release, lambda line: f"<answer>{line['answer_standard']}</answer>", scenarios=["both_leads"]
    )
    run = services.evaluation_run_create(
        project=yue_release.project, release=yue_release, user=researcher, data=data, enqueue=False
    )
    run = services.evaluation_run_score(run_id=run.pk)

    why = run.counts["unavailable"]["parity:bertscore"]
    assert why.startswith("BERTScore is not available on this server")
    assert "bert-base-chinese (layer 8)" in why and "no model weights can be downloaded here" in why
    assert not any("bertscore" in row["metric"] for row in run.results)
    assert not any("bertscore" in key for p in run.predictions.all() for key in p.scores)
    assert metrics.bertscore_model("deu") == ("bert-base-multilingual-cased", 9)
    client.force_login(researcher)
    html = client.get(run.get_absolute_url()).content.decode()
    assert "<strong>BERTScore F1 (rescaled) (paper parity)</strong>" in html
