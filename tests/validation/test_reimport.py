"""Importing a file twice adds nothing the second time, and says so; duplicates are merged in bulk."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import QAItem
from review.models import ReviewSlot
from tests.conftest import api_as
from tests.validation.conftest import TSV_HEADER, tsv_source
from validation import services
from validation.models import ValidationItem

TWELVE = TSV_HEADER + "".join(
    f"n{i}\tfood\tFood in Doha\tWhich dish number {i} is served at {place} in Doha?\tDish {i}.\tfactoid"
    f"\thttps://kaleijy.com/{i}\tgoogle\n"
    for i, place in enumerate(
        [
            "Souq Waqif",
            "Katara",
            "the Pearl",
            "West Bay",
            "Msheireb",
            "Lusail",
            "Al Wakrah",
            "Al Khor",
            "Education City",
            "Aspire Park",
            "Corniche",
            "Old Airport",
        ]
    )
)


def counts(project) -> tuple[int, int]:
    """Items and validation tasks (review slots) of the project."""
    return QAItem.objects.filter(project=project).count(), ReviewSlot.objects.filter(item__project=project).count()


def test_re_importing_the_same_file_adds_no_items_or_validation_tasks(vproject, coordinator):
    services.validation_settings_update(project=vproject, validators_per_item=2)
    first = services.validation_items_import(project=vproject, source=tsv_source(TWELVE), user=coordinator)
    assert first.ok and first.created == 12
    items, slots = (
        QAItem.objects.filter(project=vproject).count(),
        ReviewSlot.objects.filter(item__project=vproject).count(),
    )
    assert (items, slots) == (12, 24)

    again = services.validation_items_import(project=vproject, source=tsv_source(TWELVE), user=coordinator)

    # Before: 12 more items and 24 more validation tasks.
    assert (
        QAItem.objects.filter(project=vproject).count(),
        ReviewSlot.objects.filter(item__project=vproject).count(),
    ) == (12, 24)
    assert (again.created, again.already_present) == (0, 12)
    assert again.counts["imported_before"] == {"source_id": 12}
    assert "12 rows imported before" in again.warnings[0].message


def test_a_file_repeating_earlier_rows_under_other_ids_is_recognised_by_content(vproject, coordinator):
    services.validation_items_import(project=vproject, source=tsv_source(TWELVE), user=coordinator)
    renamed = TWELVE.replace("\nn", "\nm").replace("Dish 11.", "Another dish.")

    report = services.validation_items_import(project=vproject, source=tsv_source(renamed), user=coordinator)

    assert (report.created, report.already_present) == (1, 11)
    assert report.counts["imported_before"] == {"content": 11}
    assert ValidationItem.objects.filter(project=vproject).count() == 13


def test_the_import_page_reports_the_rows_imported_before(
    client, vproject, coordinator, django_capture_on_commit_callbacks
):
    services.validation_items_import(project=vproject, source=tsv_source(TWELVE), user=coordinator)
    client.force_login(coordinator)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/projects/{vproject.slug}/validation/import/",
            {"file": SimpleUploadedFile("again.tsv", TWELVE.encode()), "format": "auto"},
        )

    page = client.get(response["Location"]).content.decode()
    assert "0 created, 12 already present" in page
    assert "12 rows imported before (the same data_id and question, or the same question and answer) left out" in page
    assert ValidationItem.objects.filter(project=vproject).count() == 12


def test_duplicates_are_merged_in_bulk_from_the_api(vproject, coordinator):
    rows = TSV_HEADER + "".join(
        f"d{i}{v}\tt\tq\t{text}\tA {i}.\tfactoid\thttps://e.org/{i}{v}\tg\n"
        for i in range(5)
        for v, text in enumerate(
            [f"Where is museum number {i}?", f"Where is museum number {i} ?", f"Where's museum number {i}?"]
        )
    )
    services.validation_items_import(project=vproject, source=tsv_source(rows), user=coordinator)
    assert sum(len(group["duplicates"]) for group in services.duplicate_groups(vproject)) == 10

    exact = api_as(coordinator).post(
        f"/api/projects/{vproject.slug}/validation/duplicates/merge-all/", {"which": "exact"}, format="json"
    )
    assert exact.status_code == 200, exact.content
    assert exact.json() == {"merged": 5, "sets": 5, "left": 5}

    rest = api_as(coordinator).post(
        f"/api/projects/{vproject.slug}/validation/duplicates/merge-all/", {}, format="json"
    )
    assert rest.json() == {"merged": 5, "sets": 5, "left": 0}
    live = ValidationItem.objects.filter(project=vproject, item__deleted_at__isnull=True)
    assert sorted(v.data_id for v in live) == [f"d{i}0" for i in range(5)]
    assert all(len(v.source_urls) == 3 for v in live)  # each kept item holds its duplicates' sources


def test_the_duplicates_page_merges_every_set_with_one_button(client, vproject, coordinator):
    rows = TSV_HEADER + "".join(
        f"d{i}{v}\tt\tq\tWhere is museum number {i}{' ?' if v else '?'}\tA.\tfactoid\t\tg\n"
        for i in range(3)
        for v in range(2)
    )
    services.validation_items_import(project=vproject, source=tsv_source(rows), user=coordinator)
    client.force_login(coordinator)
    page = client.get(f"/projects/{vproject.slug}/validation/duplicates/").content.decode()
    assert "3 duplicates in 3 sets." in page

    response = client.post(f"/projects/{vproject.slug}/validation/duplicates/merge-all/", {"which": "all"}, follow=True)

    assert "3 duplicates merged in 3 sets; 0 left to look at." in response.content.decode()
    assert services.duplicate_groups(vproject) == []


def test_items_go_to_validators_who_read_their_language(coordinator, reviewer, second_reviewer):
    from annotation.services.members import membership_set
    from review.reviewers import reviewer_languages_set

    project = services.validation_project_create(name="Two languages", language="arb", created_by=coordinator)
    for user in (reviewer, second_reviewer):
        membership_set(project=project, user=user, roles={"reviewer"})
    reviewer_languages_set(project=project, user=second_reviewer, languages=["arb", "eng"], actor=coordinator)
    rows = TSV_HEADER.replace("\tengine", "\tlanguage\tengine") + (
        "a\tt\tq\tما هو الطبق الوطني في قطر؟\tالمجبوس.\tfactoid\t\tarb\tg\n"
        "e\tt\tq\tWhat is the national dish of Qatar?\tMachboos.\tfactoid\t\teng\tg\n"
    )
    services.validation_items_import(project=project, source=tsv_source(rows), user=coordinator)

    # The reviewer reads Arabic only (the project's language): the English item is never theirs.
    assert services.validation_waiting_count(project=project, user=reviewer) == 1
    slot = services.validation_claim_next(project=project, user=reviewer)
    assert slot.item.validation.data_id == "a"
    services.validation_skip(slot=slot, user=reviewer)
    assert services.validation_claim_next(project=project, user=reviewer, skipped=[slot.item_id]) is None
    assert services.validation_waiting_count(project=project, user=second_reviewer) == 2
