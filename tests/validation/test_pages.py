"""The validation pages through HTTP: the coordinator's set-up and the validator's loop."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import ingest
from annotation.importers.sources import ImportSource
from annotation.models import ImportJob, Project, QAItem
from review.models import ReviewSlot
from tests.validation.conftest import COLLECTED_TSV, NATIVQA, TSV_HEADER
from validation import services
from validation.models import SeedQuery, SourceDomain, ValidationItem, ValidationJudgment


def url(name: str, project: Project, **kwargs) -> str:
    return reverse(name, kwargs={"slug": project.slug, **kwargs})


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data)


def test_a_superuser_creates_a_validation_project_in_the_browser_form(client, superuser):
    client.force_login(superuser)

    response = client.post(
        reverse("validation_project_create"),
        {"name": "Doha QA", "slug": "doha-qa", "language": "arb", "location": "Doha", "validators_per_item": "3"},
    )

    project = Project.objects.get(slug="doha-qa")
    assert response.status_code == 302 and response["Location"] == url("validation_home", project)
    assert (project.kind, project.reviewers_per_item) == ("validation", 3)
    assert services.validation_settings(project).location == "Doha"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_the_coordinator_imports_a_tsv_and_sees_the_counts_on_the_job_page(
    client, vproject, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)

    with django_capture_on_commit_callbacks(execute=True):  # the import task runs (eagerly) once committed
        response = client.post(url("validation_import", vproject), {"file": upload("c.tsv", COLLECTED_TSV.encode())})

    job = ImportJob.objects.get(project=vproject)
    assert response.status_code == 302 and response["Location"] == url("validation_import_job", vproject, job_id=job.pk)
    assert ValidationItem.objects.filter(project=vproject).count() == 4
    partial = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert "4 created" in partial and "every 2s" not in partial  # done: the partial stops polling
    assert "c.tsv" in client.get(url("validation_import", vproject)).content.decode()  # listed as a recent import


def test_a_queued_import_page_polls_its_progress(client, vproject, coordinator):
    client.force_login(coordinator)

    response = client.post(url("validation_import", vproject), {"file": upload("c.tsv", COLLECTED_TSV.encode())})

    job = ImportJob.objects.get(project=vproject)  # no commit in this test: the job waits for a worker
    page = client.get(response["Location"]).content.decode()
    assert job.status == ImportJob.Status.PENDING and not ValidationItem.objects.exists()
    assert 'hx-trigger="every 2s"' in page and "Waiting for a worker" in page


def test_a_bad_import_shows_line_and_field_and_writes_nothing(
    client, vproject, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)
    bad = TSV_HEADER + "1\tfood\tq\tA question?\t\tfactoid\t\tx\n"

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url("validation_import", vproject), {"file": upload("c.tsv", bad.encode())})

    page = client.get(response["Location"]).content.decode()
    assert "Import refused" in page and "<td>answer</td>" in page and '<td class="num">2</td>' in page
    assert not ValidationItem.objects.exists()


def test_seed_templates_upload_runs_as_a_job_and_the_csv_downloads(
    client, vproject, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)
    data = (NATIVQA / "test_query.csv").read_bytes()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            url("validation_seeds", vproject),
            {"action": "import", "file": upload("t.csv", data), "locations": "New York"},
        )
    download = client.get(url("validation_seeds_csv", vproject))

    job = ImportJob.objects.get(project=vproject)
    assert response["Location"] == url("validation_import_job", vproject, job_id=job.pk)
    assert (job.format, job.options, job.status) == ("seeds", {"locations": ["New York"]}, "done")
    page = client.get(response["Location"]).content.decode()
    assert "seed-query templates for New York" in page and "7 added" in page
    assert SeedQuery.objects.filter(project=vproject).count() == 7
    assert download["Content-Type"].startswith("text/csv")
    assert download.content.decode().splitlines()[0] == "topic,query,location"


def test_seed_templates_without_locations_are_refused_before_any_job(client, vproject, coordinator):
    client.force_login(coordinator)
    data = (NATIVQA / "test_query.csv").read_bytes()

    response = client.post(
        url("validation_seeds", vproject), {"action": "import", "file": upload("t.csv", data), "locations": " "}
    )

    assert response.status_code == 200 and "give at least one location" in response.content.decode()
    assert not ImportJob.objects.exists()


def test_a_seed_file_without_its_header_is_refused_naming_the_column(
    client, vproject, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            url("validation_seeds", vproject),
            {"action": "import", "file": upload("t.csv", b"subject,text\nfood,Best food?\n"), "locations": "Doha"},
        )

    page = client.get(response["Location"]).content.decode()
    assert ImportJob.objects.get().status == "refused" and "Import refused" in page and "<td>query</td>" in page
    assert not SeedQuery.objects.exists()


def test_domain_list_upload_and_filtering_items_by_label(
    client, imported, coordinator, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)
    data = (NATIVQA / "annotated_domains.csv").read_bytes()

    with django_capture_on_commit_callbacks(execute=True):
        queued = client.post(url("validation_domains", imported), {"action": "import", "file": upload("d.csv", data)})
    client.post(url("validation_domains", imported), {"domain": "blog.example.org", "label": "completely_unreliable"})
    reliable = client.get(url("validation_items", imported) + "?label=very_reliable")
    unreliable = client.get(url("validation_items", imported) + "?label=completely_unreliable")

    assert (
        "2031 domains labelled from the list; 49 already labelled kept theirs."
        in client.get(queued["Location"]).content.decode()
    )
    assert SourceDomain.objects.get(domain="blog.example.org").origin == "coordinator"
    assert len(reliable.context["page"].object_list) == 3
    assert [v.data_id for v in unreliable.context["page"].object_list] == ["3"]


def test_merging_from_the_duplicates_page(client, imported, coordinator):
    client.force_login(coordinator)
    group = services.duplicate_groups(imported)[0]

    response = client.post(
        url("validation_merge", imported), {"keep": group["keep"].item_id, "duplicate": group["duplicates"][0].item_id}
    )

    assert response.status_code == 302
    assert QAItem.objects.alive().filter(project=imported).count() == 3
    assert "No duplicates" in client.get(url("validation_duplicates", imported)).content.decode()


def test_a_validator_claims_judges_and_gets_the_next_item(client, imported, reviewer):
    client.force_login(reviewer)

    first = client.post(url("validation_next", imported))
    slot = ReviewSlot.objects.get(reviewer=reviewer, status="claimed")
    assert first["Location"] == url("validation_task", imported, slot_id=slot.pk)
    page = client.get(first["Location"]).content.decode()
    assert slot.item.question in page

    data = {
        "version": slot.version,
        "question": "good",
        "answer": "An edited answer.",
        "location_relevant": "yes",
        "domain_label": "not_sure",
        "better": "2",
        **{f"likert_{key}": "4" for key in ("clarity", "faithfulness", "informativeness", "plausibility")},
    }
    saved = client.post(first["Location"], data)

    assert saved.status_code == 302
    judgment = ValidationJudgment.objects.get(slot=slot)
    assert judgment.edit_revision.answer_standard == "An edited answer."
    assert ReviewSlot.objects.filter(reviewer=reviewer, status="claimed").exclude(pk=slot.pk).count() == 1


def test_a_judgment_with_a_missing_task_is_shown_again_with_the_problem(client, imported, reviewer):
    client.force_login(reviewer)
    client.post(url("validation_next", imported))
    slot = ReviewSlot.objects.get(reviewer=reviewer, status="claimed")

    response = client.post(url("validation_task", imported, slot_id=slot.pk), {"version": slot.version})

    assert response.status_code == 400
    assert "choose good or bad" in response.content.decode()
    assert not ValidationJudgment.objects.exists()


def test_the_item_page_shows_the_answer_diff_and_the_agreement_page_renders(client, imported, reviewer, coordinator):
    slot = services.validation_claim_next(project=imported, user=reviewer)
    services.validation_submit(
        slot=slot,
        user=reviewer,
        version=slot.version,
        data={
            "question": "good",
            "answer": slot.revision.answer_standard + " Extra words.",
            "location_relevant": "no",
            "domain_label": "not_sure",
            "better": "1",
            "likert": {"clarity": 3, "faithfulness": 3, "informativeness": 3, "plausibility": 3},
        },
    )
    client.force_login(coordinator)

    item_page = client.get(url("validation_item", imported, item_id=slot.item_id)).content.decode()
    agreement = client.get(url("validation_agreement", imported))

    assert "<ins> Extra words.</ins>" in item_page
    assert agreement.status_code == 200 and "Gwet" in agreement.content.decode()


def test_settings_page_turns_tasks_off_and_edits_a_rubric(client, vproject, coordinator):
    client.force_login(coordinator)
    settings = services.validation_settings(vproject)
    data = {"version": settings.version, "tasks": ["question", "likert"], "location": "Doha", "duplicate_threshold": 85}
    for index, criterion in enumerate(settings.likert_criteria):
        data |= {f"criterion_{index}_key": criterion["key"], f"criterion_{index}_label": criterion["label"]}
        data[f"criterion_{index}_rubric"] = "New rubric" if index == 0 else criterion["rubric"]

    response = client.post(url("validation_settings", vproject), data)

    settings.refresh_from_db()
    assert response.status_code == 302
    assert settings.tasks == ["question", "likert"] and settings.duplicate_threshold == 85
    assert settings.likert_criteria[0]["rubric"] == "New rubric"


def test_the_items_list_takes_a_fixed_number_of_queries(client, imported, coordinator, django_assert_max_num_queries):
    more = TSV_HEADER + "".join(
        f"m{n}\tfood\tq\tQuestion number {n} about something else {n * 7919}?\tAnswer {n}.\tf\thttps://s{n}.org/\tx\n"
        for n in range(30)
    )
    services.validation_items_import(
        project=imported, source=ImportSource("m.tsv", data=more.encode()), user=coordinator
    )
    client.force_login(coordinator)

    with django_assert_max_num_queries(12):
        response = client.get(url("validation_items", imported))

    assert len(response.context["page"].object_list) == 34


def test_a_second_delivery_of_the_import_job_imports_nothing_more(client, vproject, coordinator):
    client.force_login(coordinator)
    client.post(url("validation_import", vproject), {"file": upload("c.tsv", COLLECTED_TSV.encode())})
    job = ImportJob.objects.get(project=vproject)  # queued, not run: no commit in this test

    first = ingest.import_job_run(job_id=job.pk)
    second = ingest.import_job_run(job_id=job.pk)  # a retry or a duplicate message finds nothing to claim

    assert first is not None and first.status == ImportJob.Status.DONE and second is None
    assert ValidationItem.objects.filter(project=vproject).count() == 4
    assert ReviewSlot.objects.filter(item__project=vproject).count() == 4
