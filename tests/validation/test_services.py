"""Validation services: import, duplicates, seed queries, domains, the queue, judgments and aggregates."""

from __future__ import annotations

import pytest

from annotation.importers.sources import ImportSource
from annotation.models import PagePair, QAItem, QAItemRevision
from common.errors import InvalidInput, InvalidState
from review.models import ReviewSlot
from tests.validation.conftest import ARABIC_TSV, NATIVQA, TSV_HEADER, tsv_source
from validation import services
from validation.models import SeedQuery, SourceDomain, ValidationItem, ValidationJudgment

ALL_TASKS = {
    "question": "good",
    "location_relevant": "yes",
    "domain_label": "very_reliable",
    "better": "1",
    "likert": {"clarity": 5, "faithfulness": 4, "informativeness": 4, "plausibility": 5},
}


def test_the_collection_frameworks_tsv_imports_as_it_is_with_extra_columns_kept(imported):
    items = ValidationItem.objects.filter(project=imported).select_related("item").order_by("id")

    assert [v.data_id for v in items] == ["1", "2", "3", "4"]
    first = items[0]
    assert first.item.question == "What is the national animal of Qatar?"
    assert first.original_answer == first.item.answer_standard == "The Arabian oryx."
    assert first.source_urls == ["https://www.qatarday.com/animals"]
    assert first.domain == "qatarday.com"
    assert (first.topic, first.input_query, first.question_type) == ("animal", "What is Doha State animal?", "factoid")
    assert first.metadata == {"engine": "google"}
    assert first.item.status == QAItem.Status.SUBMITTED
    assert list(first.item.revisions.values_list("number", "reason")) == [(1, QAItemRevision.Reason.IMPORTED)]


def test_each_imported_pair_opens_one_slot_per_validator_and_never_enters_the_annotator_queue(imported):
    assert ReviewSlot.objects.filter(item__project=imported).count() == 4
    assert not PagePair.objects.filter(project=imported).available().exists()


def test_duplicates_among_imported_pairs_are_imported_and_marked_for_merging(imported):
    groups = services.duplicate_groups(imported)

    assert len(groups) == 1
    assert groups[0]["keep"].data_id == "2"
    assert [d.data_id for d in groups[0]["duplicates"]] == ["3"]
    assert ValidationItem.objects.filter(project=imported).count() == 4  # nothing dropped


def test_merging_a_duplicate_takes_it_out_of_the_queue_and_keeps_its_source(imported, coordinator):
    group = services.duplicate_groups(imported)[0]
    keep, duplicate = group["keep"], group["duplicates"][0]

    services.validation_item_merge(project=imported, keep=keep, duplicate=duplicate, user=coordinator)

    keep.refresh_from_db()
    assert keep.source_urls == ["https://kaleijy.com/food/machboos", "https://blog.example.org/qatar"]
    assert QAItem.objects.get(pk=duplicate.item_id).deleted_at is not None
    assert not ReviewSlot.objects.filter(item_id=duplicate.item_id, status="open").exists()
    assert services.duplicate_groups(imported) == []
    with pytest.raises(InvalidState):
        services.validation_item_merge(project=imported, keep=keep, duplicate=duplicate, user=coordinator)


def test_a_bad_file_imports_nothing_and_names_line_and_field(vproject, coordinator):
    bad = TSV_HEADER + "1\tfood\tq\t\tAn answer\tfactoid\t['https://a.org']\tx\n2\tfood\tq\tQ?\tA\tf\tnot-a-url\tx\n"

    report = services.validation_items_import(project=vproject, source=tsv_source(bad), user=coordinator)

    assert not report.ok
    assert [(p.line, p.field) for p in report.problems] == [(2, "question"), (3, "answer_URLs[0]")]
    assert not ValidationItem.objects.exists() and not QAItem.objects.exists()


def test_csv_and_jsonl_import_with_a_list_of_source_urls(vproject, coordinator):
    csv_text = "question,answer,source_url,location,topic\nWhere is Souq Waqif?,In Doha.,https://a.org/x,Doha,places\n"
    jsonl = '{"question": "Q2?", "answer": "A2", "source_urls": ["https://b.org/1", "https://c.org/2"], "rank": 3}\n'

    assert services.validation_items_import(
        project=vproject, source=ImportSource("x.csv", data=csv_text.encode()), user=coordinator
    ).ok
    assert services.validation_items_import(
        project=vproject, source=ImportSource("x.jsonl", data=jsonl.encode()), user=coordinator
    ).ok

    csv_item, json_item = ValidationItem.objects.order_by("id")
    assert (csv_item.location, csv_item.topic, csv_item.domain) == ("Doha", "places", "a.org")
    assert json_item.source_urls == ["https://b.org/1", "https://c.org/2"]
    assert json_item.metadata == {"rank": 3}


def test_english_templates_expanded_for_two_locations_lose_exact_and_near_duplicates(vproject, coordinator):
    # 1001 templates x 2 locations = 2002 queries. 13 templates need a form neither location has (9 the adjective,
    # "[LOCATION]i", 4 the people, "[LOCATION]ers"): left out, 26 queries. Within a location 18 repeat another
    # exactly and 18 reword one (validation.text.rewords; a plain ratio >= 90 counted 27, swapped content words
    # among them); the 87 templates without [LOCATION] give the same query for both locations and are stored once.
    report, seeds = services.seed_queries_import(
        project=vproject,
        source=ImportSource.of(NATIVQA / "english_template.csv"),
        locations=["Doha", "Abu Dhabi"],
        user=coordinator,
    )

    assert report.ok and report.lines == 1001
    assert (seeds.exact_duplicates, seeds.near_duplicates, seeds.added) == (105, 18, 1853)
    assert seeds.missing_forms == {
        "Doha: adjective": 9,
        "Doha: demonym": 4,
        "Abu Dhabi: adjective": 9,
        "Abu Dhabi: demonym": 4,
    }
    assert SeedQuery.objects.filter(project=vproject).count() == 1853
    assert SeedQuery.objects.filter(query="What is Doha State animal?", location="Doha").exists()


def test_arabic_templates_expanded_for_two_locations_keep_their_script(vproject, coordinator):
    # 799 templates, all with [LOCATION]: 1598 queries; 2 exact and 46 near repeats within a location (a plain
    # ratio >= 90 counted 112, most of them one swapped word: a different question).
    report, seeds = services.seed_queries_import(
        project=vproject,
        source=ImportSource.of(NATIVQA / "arabic_template.csv"),
        locations=["الدوحة", "أبوظبي"],
        user=coordinator,
    )

    assert report.lines == 799
    assert (seeds.exact_duplicates, seeds.near_duplicates, seeds.added) == (2, 46, 1550)
    assert SeedQuery.objects.filter(query="اسم موانئ الدوحة", topic="names").exists()


def test_seed_queries_download_as_the_collection_tools_csv(vproject, coordinator):
    services.seed_queries_import(
        project=vproject, source=ImportSource.of(NATIVQA / "test_query.csv"), locations=["New York"], user=coordinator
    )

    data = services.seed_queries_csv(vproject).decode("utf-8")

    original = (NATIVQA / "test_query.csv").read_text(encoding="utf-8").replace("\r\n", "\n").splitlines()
    assert data.splitlines() == [original[0] + ",location"] + [line + ",New York" for line in original[1:]]


def test_a_hand_written_seed_query_that_repeats_one_is_not_stored_twice(vproject, coordinator):
    first = services.seed_query_create(project=vproject, topic="food", query="Best [LOCATION] food?", user=coordinator)
    again = services.seed_query_create(project=vproject, topic="food", query="best qatar  food", user=coordinator)

    assert (first.added, again.added, again.exact_duplicates) == (1, 0, 1)
    assert SeedQuery.objects.get().query == "Best Qatar food?"


def test_the_domain_list_labels_matching_sources(imported, coordinator):
    report = services.source_domains_import(
        project=imported, source=ImportSource.of(NATIVQA / "annotated_domains.csv"), user=coordinator
    )

    # 2080 rows name 2031 hosts once "www." and the scheme are set aside (counted with a regex over the file).
    assert report.ok and (report.lines, report.created, report.already_present) == (2080, 2031, 49)
    labels = services.domain_labels(imported)
    # kaleijy.com, www.for9a.com and www.qatarday.com (line 1393) are in the list; blog.example.org is not.
    by_item = {v.data_id: getattr(labels.get(v.domain), "label", None) for v in ValidationItem.objects.all()}
    assert by_item == {"1": "very_reliable", "2": "very_reliable", "3": None, "4": "very_reliable"}
    assert report.counts["items_labelled"] == {"very_reliable": 3}


def test_a_domain_is_labelled_once_per_project(imported, coordinator):
    services.source_domain_label(
        project=imported, domain="https://qatarday.com/x", label="not_sure", user=coordinator, origin="coordinator"
    )
    with pytest.raises(InvalidState):
        services.source_domain_label(
            project=imported, domain="qatarday.com", label="very_reliable", user=coordinator, origin="coordinator"
        )
    assert SourceDomain.objects.get(domain="qatarday.com").label == "not_sure"


def test_a_bad_domain_list_labels_nothing(imported, coordinator):
    bad = "id,base_url,label\n1,https://a.org,very_reliable\n2,https://b.org,trustworthy\n"

    report = services.source_domains_import(
        project=imported, source=ImportSource("d.csv", data=bad.encode()), user=coordinator
    )

    assert [(p.line, p.field) for p in report.problems] == [(3, "label")]
    assert not SourceDomain.objects.exists()


def test_two_validators_judge_blind_and_the_second_accepts_the_item(imported, reviewer, second_reviewer):
    services.validation_settings_update(project=imported, validators_per_item=2)
    services.validation_items_import(project=imported, source=tsv_source(ARABIC_TSV), user=None)
    item = QAItem.objects.get(validation__data_id="a1")
    ReviewSlot.objects.filter(item__project=imported).exclude(item=item).update(status="cancelled")

    first = services.validation_claim_next(project=imported, user=reviewer)
    second = services.validation_claim_next(project=imported, user=second_reviewer)
    assert first.item_id == second.item_id == item.pk and first.pk != second.pk

    edited = "المجبوس: أرز متبل مع اللحم أو الدجاج."
    services.validation_submit(slot=first, user=reviewer, version=first.version, data={**ALL_TASKS, "answer": edited})
    item.refresh_from_db()
    assert item.status == QAItem.Status.SUBMITTED and item.answer_standard == edited
    assert item.revisions.count() == 2

    data = {**ALL_TASKS, "question": "bad", "question_reason": "ambiguous", "better": "neither", "better_comment": "x"}
    judgment = services.validation_submit(slot=second, user=second_reviewer, version=second.version, data=data)
    item.refresh_from_db()
    assert item.status == QAItem.Status.ACCEPTED
    assert sorted(judgment.better_order) == ["alternative", "original"]
    assert judgment.better_choice == "neither"


def test_neither_needs_a_comment_and_bad_needs_a_reason(vproject, reviewer):
    jsonl = (
        '{"question": "Q?", "answer": "Original.", "alternative_answer": "Other.", "source_url": "https://a.org/"}\n'
    )
    services.validation_items_import(project=vproject, source=ImportSource("x.jsonl", data=jsonl.encode()), user=None)
    slot = services.validation_claim_next(project=vproject, user=reviewer)
    data = {**ALL_TASKS, "question": "bad", "better": "neither"}

    with pytest.raises(InvalidInput) as error:
        services.validation_submit(slot=slot, user=reviewer, version=slot.version, data=data)

    assert set(error.value.details) == {"question_reason", "better_comment"}
    assert not ValidationJudgment.objects.exists()


def test_the_two_answers_are_shown_in_an_order_recorded_per_validator(vproject, reviewer):
    jsonl = (
        '{"question": "Q?", "answer": "Original.", "alternative_answer": "Other.", "source_url": "https://a.org/"}\n'
    )
    services.validation_items_import(project=vproject, source=ImportSource("x.jsonl", data=jsonl.encode()), user=None)
    slot = services.validation_claim_next(project=vproject, user=reviewer)
    shown = services.better_answer_options(slot)
    assert shown == services.better_answer_options(slot)  # the same order on every reload

    judgment = services.validation_submit(
        slot=slot, user=reviewer, version=slot.version, data={**ALL_TASKS, "better": "2"}
    )

    assert judgment.better_order == [key for key, _ in shown]
    assert (judgment.better_position, judgment.better_choice) == (2, shown[1][0])


def test_settings_reject_an_unknown_task(vproject):
    with pytest.raises(InvalidInput):
        services.validation_settings_update(project=vproject, tasks=["question", "vibes"])


def test_a_later_import_is_compared_with_the_pairs_already_there_and_counts_only_its_own(imported, coordinator):
    later = TSV_HEADER + (
        "5\tanimal\tq\tWhat is the national animal of Qatar!\tThe oryx.\tfactoid\t\tx\n"
        "6\tsport\tq\tWhich stadium hosted the 2022 finals?\tLusail.\tfactoid\t\tx\n"
        "7\tsport\tq\tWho won the 2022 final?\tArgentina.\tfactoid\t\tx\n"
    )

    report = services.validation_items_import(project=imported, source=tsv_source(later), user=coordinator)

    by_data_id = {v.data_id: v for v in ValidationItem.objects.filter(project=imported)}
    # The earlier file's own duplicate (3 of 2) is not counted again: one exact and one near repeat, both new.
    assert report.counts["duplicates"] == {"exact": 1, "near": 1}
    assert by_data_id["5"].duplicate_of == by_data_id["1"]
    assert by_data_id["6"].duplicate_of == by_data_id["4"]
    assert by_data_id["7"].duplicate_of is None
