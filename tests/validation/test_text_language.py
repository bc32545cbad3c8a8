"""The coordinator's pages tag each item's texts with the item's language (lang and dir), not the project's."""

from __future__ import annotations

import re

from django.urls import reverse

from tests.validation.conftest import tsv_source
from validation import services
from validation.models import ValidationItem

MIXED_TSV = (
    "data_id\tquestion\tanswer\tanswer_URLs\tlanguage\n"
    "1\tما هو الطبق الوطني في قطر؟\tالمجبوس.\thttps://kaleijy.com/ar/food\tarb\n"
    "2\tما هو الطبق الوطني في قطر ؟\tالمجبوس، أرز ولحم.\thttps://kaleijy.com/ar/food2\tarb\n"
    "3\tWhat is the national animal of Qatar?\tThe Arabian oryx.\thttps://www.qatarday.com/animals\teng\n"
)


def tags_of(page: str, text: str) -> tuple[str, str]:
    """The lang and dir of the element whose text starts with `text`."""
    match = re.search(r'lang="([^"]+)" dir="([^"]+)"[^>]*>(?:<a [^>]*>)?' + re.escape(text), page)
    assert match, f"{text!r} has no lang and dir"
    return match.group(1), match.group(2)


def test_arabic_items_of_an_english_project_are_tagged_arabic_right_to_left(client, vproject, coordinator):
    report = services.validation_items_import(project=vproject, source=tsv_source(MIXED_TSV), user=coordinator)
    assert report.ok, report.problems
    client.force_login(coordinator)
    arabic = ValidationItem.objects.get(data_id="1")

    items = client.get(reverse("validation_items", args=[vproject.slug])).content.decode()
    item = client.get(reverse("validation_item", args=[vproject.slug, arabic.item_id])).content.decode()
    duplicates = client.get(reverse("validation_duplicates", args=[vproject.slug])).content.decode()

    assert tags_of(items, "ما هو الطبق الوطني في قطر؟") == ("arb", "rtl")
    assert tags_of(items, "What is the national animal") == ("eng", "ltr")
    assert tags_of(item, "ما هو الطبق الوطني في قطر؟") == ("arb", "rtl")
    assert tags_of(item, "المجبوس.") == ("arb", "rtl")
    assert tags_of(duplicates, "ما هو الطبق الوطني في قطر ؟") == ("arb", "rtl")
    assert 'lang="eng" dir="ltr">ما' not in items + item + duplicates
