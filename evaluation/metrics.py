"""Scoring one answer against its gold: the metric conventions of the studies (../docs/evaluation.md).

Two named modes, printed in every caption:

* `parity`: the study's own conventions. WiLoVa's ROUGE-L is the `rouge` package 1.0.1 (pltrdy): sentences split
  on ASCII ".", tokens on spaces, case-sensitive, no stemming, *distinct* tokens (set-based union LCS); an empty
  answer is replaced by `[Null]` (German) / `[无]` (Chinese) first. Chinese needs jieba segmentation, which this
  machine does not have: parity ROUGE-L for Chinese reports itself unavailable rather than a wrong number.
* `recommended`: language-aware. ROUGE-L F1 on characters for Chinese scripts (as HELM does) and on Unicode word
  tokens elsewhere (case kept: never lowercasing German), Arabic normalised first; an OpenCC-folded variant
  (traditional → simplified on both sides) beside the raw one for Chinese.

chrF and chrF++ follow sacrebleu 2's CHRF (char order 6, word order 0 / 2, beta 2, whitespace removed from the
character n-grams, effective-order averaging, sentence level, averaged over items); `CHRF_SIGNATURE` names them.

Every score is in [0, 1] here; tables show it × 100.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from functools import lru_cache

CJK_LANGUAGES = frozenset({"cmn", "yue", "zho", "wuu", "nan", "hak", "gan", "hsn", "lzh", "cdo", "zh"})
ARABIC_LANGUAGES = frozenset({"ara", "arb", "ary", "arz", "apc", "ajp", "acm", "afb", "aeb", "ayl", "arq", "ar"})
# What parity replaces an empty answer with before scoring (the package raises on empty input).
EMPTY_PARITY = {"zh": "[无]", "de": "[Null]"}
PARITY_CANDIDATE_CHARS = 5000  # WiLoVa cut German candidates to 5,000 characters
RECOMMENDED_MAX_TOKENS = 2000  # LCS is quadratic: a runaway answer is cut (stated in docs/evaluation.md)
CHRF_SIGNATURE = "chrF2++ as sacrebleu 2 CHRF(word_order=2): nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no"
CHRF_PLAIN_SIGNATURE = "chrF2 as sacrebleu 2 CHRF(): nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no"


class MetricUnavailable(Exception):
    """The metric cannot be computed on this machine (a package or a model is missing): shown, never faked."""


def is_cjk(language: str) -> bool:
    return language in CJK_LANGUAGES


def is_arabic(language: str) -> bool:
    return language in ARABIC_LANGUAGES


# Normalisation

_TASHKEEL = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e8\u06ea-\u06ed]")
_INVISIBLE = re.compile("[\u0640\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")  # tatweel, zero-width, bidi
_ALEF = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي"})
_DIGITS = str.maketrans("٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹", "01234567890123456789")


def normalise_arabic(text: str) -> str:
    """NFC; alef forms → ا; ى → ي; tashkeel, tatweel, bidi and zero-width marks removed; Arabic-Indic digits → ASCII."""
    text = unicodedata.normalize("NFC", text)
    text = _INVISIBLE.sub("", _TASHKEEL.sub("", text))
    return text.translate(_ALEF).translate(_DIGITS)


def normalise(text: str, language: str) -> str:
    """The recommended mode's text: NFC, zero-width and bidi marks removed, whitespace collapsed; Arabic folded."""
    text = normalise_arabic(text) if is_arabic(language) else _INVISIBLE.sub("", unicodedata.normalize("NFC", text))
    return " ".join(text.split())


@lru_cache(maxsize=1)
def _t2s() -> Callable[[str], str]:
    import opencc

    return opencc.OpenCC("t2s").convert


def fold_script(text: str) -> str:
    """Traditional → simplified Chinese (OpenCC t2s): answers copied from a Cantonese lead meet a simplified gold."""
    return _t2s()(text)


# ROUGE-L, recommended mode

_WORD = re.compile(r"\w+", re.UNICODE)


def _is_punctuation_or_space(char: str) -> bool:
    return char.isspace() or unicodedata.category(char)[0] in "PSZ"


def tokens(text: str, language: str) -> list[str]:
    """Characters (no spaces or punctuation) for Chinese scripts, Unicode word tokens elsewhere; case kept."""
    text = normalise(text, language)
    found = [char for char in text if not _is_punctuation_or_space(char)] if is_cjk(language) else _WORD.findall(text)
    return found[:RECOMMENDED_MAX_TOKENS]


def lcs_length(first: list[str], second: list[str]) -> int:
    """Length of the longest common subsequence (one row of the table at a time)."""
    if len(first) < len(second):
        first, second = second, first
    previous = [0] * (len(second) + 1)
    for token in first:
        current = [0]
        for column, other in enumerate(second, start=1):
            current.append(previous[column - 1] + 1 if token == other else max(previous[column], current[-1]))
        previous = current
    return previous[-1]


def rouge_l(prediction: list[str], gold: list[str]) -> float:
    """ROUGE-L F1 (beta 1) on token lists; 0 when either side is empty."""
    if not prediction or not gold:
        return 0.0
    common = lcs_length(prediction, gold)
    if not common:
        return 0.0
    precision, recall = common / len(prediction), common / len(gold)
    return 2 * precision * recall / (precision + recall)


# ROUGE-L, parity mode (the `rouge` package 1.0.1's summary-level, set-based union LCS)


def _parity_sentences(text: str) -> list[str]:
    return [" ".join(part.split()) for part in text.split(".") if len(part) > 0]


def _lcs_tokens(reference: list[str], candidate: list[str]) -> list[str]:
    """One LCS of the two token lists, reconstructed with the package's tie-break (up when strictly longer)."""
    rows, columns = len(reference), len(candidate)
    table = [[0] * (columns + 1) for _ in range(rows + 1)]
    for i in range(1, rows + 1):
        for j in range(1, columns + 1):
            if reference[i - 1] == candidate[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    found: list[str] = []
    i, j = rows, columns
    while i and j:
        if reference[i - 1] == candidate[j - 1]:
            found.append(reference[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return found[::-1]


def rouge_l_parity_raw(prediction: str, gold: str) -> float:
    """ROUGE-L F as `rouge.Rouge().get_scores(prediction, gold)[0]["rouge-l"]["f"]` computes it."""
    candidate, reference = _parity_sentences(prediction), _parity_sentences(gold)
    if not candidate or not reference:
        raise ValueError("Collections must contain at least 1 sentence.")  # as the package does
    reference_size = len({word for sentence in reference for word in sentence.split(" ")})
    candidate_size = len({word for sentence in candidate for word in sentence.split(" ")})
    union: set[str] = set()
    common = 0
    for sentence in reference:
        before = len(union)
        words = sentence.split(" ")
        for other in candidate:
            union |= set(_lcs_tokens(words, other.split(" ")))
        common += len(union) - before
    recall, precision = common / reference_size, common / candidate_size
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))


def rouge_l_parity(prediction: str, gold: str, language: str) -> float:
    """WiLoVa's ROUGE-L: German as raw text (cut to 5,000 characters), Chinese jieba-segmented (needs jieba)."""
    if is_cjk(language):
        try:
            import jieba  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            raise MetricUnavailable("jieba is not installed: parity ROUGE-L for Chinese cannot be computed") from None
        empty = EMPTY_PARITY["zh"]
        prediction = " ".join(jieba.cut(prediction.strip() or empty))
        prediction = " ".join(prediction.split()[:500])
        gold = " ".join(jieba.cut(gold))
    else:
        empty = EMPTY_PARITY["de"]
        prediction = (prediction.strip() or empty)[:PARITY_CANDIDATE_CHARS]
    if prediction.strip() in ("", "..."):
        prediction = empty
    try:
        return rouge_l_parity_raw(prediction, gold)
    except ValueError:  # only dots (".", "…"): the package would raise; the study scored such answers 0
        return 0.0


# chrF / chrF++ (sacrebleu 2 conventions)

_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _chrf_words(text: str) -> list[str]:
    """Whitespace words with one leading or trailing ASCII punctuation mark split off (sacrebleu's chrF++)."""
    words: list[str] = []
    for word in text.split():
        if len(word) > 1 and word[-1] in _PUNCTUATION:
            words += [word[:-1], word[-1]]
        elif len(word) > 1 and word[0] in _PUNCTUATION:
            words += [word[0], word[1:]]
        else:
            words.append(word)
    return words


def _ngram_counts(text: str, char_order: int, word_order: int) -> list[Counter[str]]:
    chars = "".join(text.split())
    counts = [Counter(chars[i : i + n] for i in range(len(chars) - n + 1)) for n in range(1, char_order + 1)]
    if word_order:
        words = _chrf_words(text)
        counts += [
            Counter(" ".join(words[i : i + n]) for i in range(len(words) - n + 1)) for n in range(1, word_order + 1)
        ]
    return counts


def chrf_statistics(prediction: str, gold: str, *, word_order: int = 2, char_order: int = 6) -> list[int]:
    """[hypothesis n-grams, reference n-grams, matched] per order: char orders first, then word orders."""
    statistics: list[int] = []
    for hypothesis, reference in zip(
        _ngram_counts(prediction, char_order, word_order), _ngram_counts(gold, char_order, word_order), strict=True
    ):
        matched = sum(min(count, reference[gram]) for gram, count in hypothesis.items() if gram in reference)
        # as sacrebleu: a hypothesis n-gram counts only when the reference has n-grams of that order
        statistics += [sum(hypothesis.values()) if reference else 0, sum(reference.values()), matched]
    return statistics


def chrf_from_statistics(statistics: list[int], beta: float = 2.0) -> float:
    """F-beta of the precision and recall averaged over the orders both sides have (effective order), in [0, 1]."""
    precision_sum = recall_sum = 0.0
    effective = 0
    for start in range(0, len(statistics), 3):
        hypothesis_total, reference_total, matched = statistics[start : start + 3]
        if hypothesis_total > 0 and reference_total > 0:
            precision_sum += matched / hypothesis_total
            recall_sum += matched / reference_total
            effective += 1
    if not effective:
        return 0.0
    precision, recall = precision_sum / effective, recall_sum / effective
    if not precision + recall:
        return 0.0
    factor = beta**2
    return (1 + factor) * precision * recall / (factor * precision + recall)


def chrf(prediction: str, gold: str, *, word_order: int = 2, char_order: int = 6, beta: float = 2.0) -> float:
    """Sentence-level chrF (word_order 0) or chrF++ (word_order 2), in [0, 1]."""
    return chrf_from_statistics(chrf_statistics(prediction, gold, word_order=word_order, char_order=char_order), beta)


# Exact match

_EDGE_PUNCTUATION = "。．.，,！!？?；;：:、\"'“”‘’「」『』《》()（）[]【】 "


def exact_match(prediction: str, gold: str, language: str) -> float:
    """1.0 when the answers agree after normalisation and trimming punctuation at the edges; case kept."""
    first = normalise(prediction, language).strip(_EDGE_PUNCTUATION)
    second = normalise(gold, language).strip(_EDGE_PUNCTUATION)
    return float(bool(second) and first == second)


# BERTScore: WiLoVa's third metric. Its model is never downloaded at run time (this server cannot fetch model
# weights), so it is computed only where the package and the study's model are already on disk; everywhere else
# the run reports it unavailable, in words, and shows no number for it.

BERTSCORE_MODELS = {"zh": ("bert-base-chinese", 8), "other": ("bert-base-multilingual-cased", 9)}


def bertscore_model(language: str) -> tuple[str, int]:
    """The study's model and layer for the gold answers' language (Chinese scripts: bert-base-chinese)."""
    return BERTSCORE_MODELS["zh" if language in CJK_LANGUAGES else "other"]


def bertscore_unavailable(language: str) -> str:
    """Why no BERTScore is reported for answers in `language`, in words (checked on disk only, never online)."""
    model, layer = bertscore_model(language)
    try:
        import bert_score  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return (
            f"BERTScore is not available on this server: it needs the bert-score package and the model {model} "
            f"(layer {layer}) on disk, and no model weights can be downloaded here. No BERTScore is reported"
        )
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        found = None
    else:
        found = try_to_load_from_cache(model, "config.json")  # the local cache only: never the network
    if not isinstance(found, str):
        return (
            f"BERTScore is not available on this server: its model {model} (layer {layer}) is not on disk, and no "
            "model weights can be downloaded here. No BERTScore is reported"
        )
    return f"BERTScore with {model} found on disk, but scoring with a local model is not built yet"
