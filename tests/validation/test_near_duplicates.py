"""The near-duplicate rule: distinct short questions stay apart, true rewordings are merged (English and Arabic)."""

from __future__ import annotations

import pytest

from tests.validation.conftest import TSV_HEADER, tsv_source
from validation import services
from validation.models import ValidationItem
from validation.text import find_duplicates

# One word is the whole question: a character ratio over the sentence is above 90 for each pair.
DISTINCT = [
    (
        "Where is the nearest Hindu temple to visit in Doha, Qatar?",
        "Where is the nearest Buddhist temple to visit in Doha, Qatar?",
    ),
    (
        "Which rugby team is the most popular national team in Qatar?",
        "Which cricket team is the most popular national team in Qatar?",
    ),
    (
        "Where can I buy a traditional men's dress in the souq in Doha?",
        "Where can I buy a traditional women's dress in the souq in Doha?",
    ),
    (
        "Which is the cheapest restaurant with a sea view and live music in the West Bay area of Doha, Qatar?",
        "Which is the most luxurious restaurant with a sea view and live music in the West Bay area of Doha, Qatar?",
    ),
    (
        "What is the best Italian restaurant in the Pearl area of Doha?",
        "What is the best Iranian restaurant in the Pearl area of Doha?",
    ),
    ("أين يقع أقرب معبد هندوسي يمكن زيارته في مدينة الدوحة؟", "أين يقع أقرب معبد بوذي يمكن زيارته في مدينة الدوحة؟"),
    (
        "ما هو فريق الرجبي الأكثر شعبية بين المنتخبات في دولة قطر؟",
        "ما هو فريق الكريكيت الأكثر شعبية بين المنتخبات في دولة قطر؟",
    ),
    (
        "أين يمكنني شراء ثوب رجالي تقليدي من سوق واقف في الدوحة؟",
        "أين يمكنني شراء ثوب نسائي تقليدي من سوق واقف في الدوحة؟",
    ),
    (
        "ما هو أرخص مطعم في منطقة الخليج الغربي في مدينة الدوحة؟",
        "ما هو أفخم مطعم في منطقة الخليج الغربي في مدينة الدوحة؟",
    ),
    (
        "ما هو أفضل مطعم إيطالي في منطقة اللؤلؤة في مدينة الدوحة؟",
        "ما هو أفضل مطعم إيراني في منطقة اللؤلؤة في مدينة الدوحة؟",
    ),
]
# The same question typed twice: a contraction, a moved phrase, an added article, a plural, a clitic, hamza.
REWORDINGS = [
    ("What is the national dish of Qatar?", "What's the national dish of Qatar?"),
    ("Which stadium hosted the 2022 World Cup final?", "Which stadium hosted the World Cup final in 2022?"),
    ("What time does the Souq Waqif open?", "What time does Souq Waqif open?"),
    ("Where is the Museum of Islamic Art located?", "Where is the Museum of Islamic Arts located?"),
    ("ما هو الطبق الوطني في قطر؟", "ما هو الطبق الوطني لقطر؟"),
    ("أين يقع متحف الفن الإسلامي؟", "أين يقع متحف الفن الاسلامي؟"),
    ("ما هي أفضل الأماكن السياحية في الدوحة؟", "ما هي افضل الاماكن السياحية في الدوحة"),
    ("كم عدد سكان مدينة الدوحة؟", "كَمْ عددُ سكانِ مدينةِ الدوحة"),
]


@pytest.mark.parametrize(("first", "second"), DISTINCT)
def test_distinct_short_questions_are_not_near_duplicates_at_threshold_90(first, second):
    assert find_duplicates([first, second], threshold=90) == []


@pytest.mark.parametrize(("first", "second"), REWORDINGS)
def test_true_rewordings_are_still_near_duplicates_at_threshold_90(first, second):
    [duplicate] = find_duplicates([first, second], threshold=90)
    assert (duplicate.index, duplicate.of) == (1, 0)


def test_an_import_of_the_corpus_marks_only_the_rewordings(vproject, coordinator):
    rows = [pair for pairs in (DISTINCT, REWORDINGS) for pair in pairs]
    lines = "".join(
        f"{n}{side}\tfood\tq\t{text}\tAn answer.\tfactoid\thttps://example.org/{n}\tgoogle\n"
        for n, pair in enumerate(rows)
        for side, text in zip("ab", pair, strict=True)
    )
    report = services.validation_items_import(project=vproject, source=tsv_source(TSV_HEADER + lines), user=coordinator)

    assert report.ok, report.problems
    assert report.counts["duplicates"] == {"near": 7, "exact": 1}
    marked = ValidationItem.objects.filter(project=vproject, duplicate_of__isnull=False)
    assert sorted(v.data_id for v in marked) == sorted(f"{n}b" for n in range(len(DISTINCT), len(rows)))
    assert all(v.duplicate_of.data_id == v.data_id[:-1] + "a" for v in marked)
