"""Templates fill per-location forms: no "الالدوحةيين" in the Arabic expansion, no "New Yorki" in English."""

from __future__ import annotations

import csv
import io

import pytest

from annotation.importers.sources import ImportSource
from tests.conftest import api_as
from tests.validation.conftest import NATIVQA
from validation import services
from validation.locations import LocationForms, MissingForm, fill
from validation.models import SeedQuery


def test_an_arabic_name_with_the_article_takes_the_adjective_endings_on_its_stem():
    doha = LocationForms("الدوحة")

    assert fill("شنوما أهم الأسماء الي يسموها ال[LOCATION]يين للبنات ؟", doha) == (
        "شنوما أهم الأسماء الي يسموها الدوحيين للبنات ؟"
    )
    assert fill("من هو وزير الخارجية ال[LOCATION]ي؟", doha) == "من هو وزير الخارجية الدوحي؟"
    assert fill("اسم حديقة في [LOCATION]", doha) == "اسم حديقة في الدوحة"
    assert fill("ما أكثر الأسماء ال[LOCATION]ية شيوعًا", LocationForms("قطر")) == "ما أكثر الأسماء القطرية شيوعًا"


def test_given_forms_win_over_derived_ones_and_english_needs_them():
    assert fill("Famous [LOCATION]ers?", LocationForms("New York", {"demonym": "New Yorkers"})) == "Famous New Yorkers?"
    assert fill("A [LOCATION]i dish?", LocationForms("Qatar", {"adjective": "Qatari"})) == "A Qatari dish?"
    assert fill("Where in [LOCATION]?", LocationForms("Qatar")) == "Where in Qatar?"
    with pytest.raises(MissingForm) as missing:
        fill("A [LOCATION]i dish?", LocationForms("New York"))
    assert missing.value.form == "adjective"


def test_the_arabic_template_file_expands_without_a_doubled_article(vproject, coordinator):
    report, seeds = services.seed_queries_import(
        project=vproject,
        source=ImportSource.of(NATIVQA / "arabic_template.csv"),
        locations=["الدوحة"],
        user=coordinator,
    )

    assert report.ok, report.problems
    queries = list(SeedQuery.objects.filter(project=vproject).values_list("query", flat=True))
    # Before: 64 stored queries held "الالدوحة…" and 90 glued an ending onto the name ("الدوحةي").
    assert sum("الال" in query for query in queries) == 0
    assert sum("الدوحةي" in query for query in queries) == 0
    assert sum("الدوحي" in query for query in queries) > 50
    assert seeds.missing_forms == {}


def test_english_templates_needing_a_form_the_location_lacks_are_left_out_and_counted(vproject, coordinator):
    _, without = services.seed_queries_import(
        project=vproject,
        source=ImportSource.of(NATIVQA / "english_template.csv"),
        locations=["Qatar"],
        user=coordinator,
    )
    assert without.missing_forms == {"Qatar: adjective": 9, "Qatar: demonym": 4}
    assert not SeedQuery.objects.filter(query__contains="Qatari").exists()

    services.location_save(
        project=vproject, name="Qatar", forms={"adjective": "Qatari", "demonym": "Qataris"}, user=coordinator
    )
    _, given = services.seed_queries_import(
        project=vproject,
        source=ImportSource.of(NATIVQA / "english_template.csv"),
        locations=["Qatar"],
        user=coordinator,
    )
    assert given.missing_forms == {}
    assert SeedQuery.objects.filter(query__contains="Qatari").exists()


def test_the_seed_csv_keeps_the_location_column(vproject, coordinator):
    services.seed_query_create(
        project=vproject, topic="food", query="Food in [LOCATION]?", location="Doha", user=coordinator
    )

    rows = list(csv.reader(io.StringIO(services.seed_queries_csv(vproject).decode("utf-8"))))

    assert rows == [["topic", "query", "location"], ["food", "Food in Doha?", "Doha"]]


def test_locations_are_saved_from_the_api_and_the_seed_page(client, vproject, coordinator):
    response = api_as(coordinator).post(
        f"/api/projects/{vproject.slug}/validation/locations/",
        {"name": "الدوحة", "forms": {"nisba": "دوح"}},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json() == {"name": "الدوحة", "forms": {"nisba": "دوح"}, "language": ""}
    bad = api_as(coordinator).post(
        f"/api/projects/{vproject.slug}/validation/locations/",
        {"name": "Doha", "forms": {"plural": "x"}},
        format="json",
    )
    assert bad.status_code == 400 and "unknown form 'plural'" in bad.content.decode()

    client.force_login(coordinator)
    client.post(
        f"/projects/{vproject.slug}/validation/seeds/",
        {"action": "location", "name": "New York", "form_adjective": "New York", "form_demonym": "New Yorkers"},
    )
    page = client.get(f"/projects/{vproject.slug}/validation/seeds/").content.decode()
    assert 'value="New Yorkers"' in page and 'placeholder="دوحة"' in page  # the derived bare form of الدوحة


def test_a_locations_language_is_set_on_its_row_and_through_the_api_and_drafts_use_it(client, vproject, coordinator):
    from validation.suggestions import location_language

    url = f"/api/projects/{vproject.slug}/validation/locations/"
    saved = api_as(coordinator).post(url, {"name": "الدوحة", "language": "arb"}, format="json")
    assert saved.status_code == 200 and saved.json()["language"] == "arb"
    unknown = api_as(coordinator).post(url, {"name": "الدوحة", "language": "xx-evil"}, format="json")
    assert unknown.status_code == 400 and unknown.json()["field"] == "language"
    kept = api_as(coordinator).post(url, {"name": "الدوحة", "forms": {"nisba": "دوح"}}, format="json")
    assert kept.json()["language"] == "arb"  # left out: unchanged
    assert location_language(vproject, "الدوحة") == "arb"

    client.force_login(coordinator)
    client.post(
        f"/projects/{vproject.slug}/validation/seeds/", {"action": "location", "name": "الدوحة", "language": ""}
    )
    assert location_language(vproject, "الدوحة") == vproject.standard_language  # back to the project's
    page = client.get(f"/projects/{vproject.slug}/validation/seeds/").content.decode()
    assert "Language of its queries" in page and '<option value="arb">' in page
