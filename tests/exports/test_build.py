"""Building a release: what gets in, the files and their hashes, immutability, failures and concurrency."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from annotation.models import PagePair, QAItem
from common.errors import InvalidInput, InvalidState
from common.jobs import JobRun
from exports import services
from exports.models import DEFAULT_SPLITS, Release
from exports.splits import ReleaseUnits, split_assign
from tests.exports.conftest import authored_pair


def published_dir(release: Release) -> Path:
    return Path(settings.MEDIA_ROOT) / release.path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_release_of_accepted_items_is_published_with_every_file_hashed(released_project, coordinator):
    release = services.release_build_now(project=released_project, user=coordinator, seed=7)

    assert release.status == Release.Status.DONE, release.error
    assert release.version == 1
    root = published_dir(release)
    names = {entry["name"] for entry in release.files}
    assert {"lead_qa.jsonl", "document_qa.jsonl", "page_pairs.jsonl", "README.md", "manifest.json"} <= names
    for entry in release.files:
        data = (root / entry["name"]).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (entry["size"], entry["sha256"])
    lead = read_jsonl(root / "lead_qa.jsonl")
    assert len(lead) == 6  # three accepted pairs x two lead QAs; the rejected pair stays out
    assert len(read_jsonl(root / "document_qa.jsonl")) == 1
    assert len(read_jsonl(root / "page_pairs.jsonl")) == 6


def test_the_manifest_is_written_in_pieces_as_the_one_indented_json_text(released_project, coordinator, monkeypatch):
    from exports.formats import manifest

    monkeypatch.setattr(manifest, "ENTRIES_PER_WRITE", 2)  # the split assignment's three groups in two writes

    release = services.release_build_now(project=released_project, user=coordinator, seed=7)

    data = (published_dir(release) / "manifest.json").read_bytes()
    # The bytes json.dumps gives the whole manifest at once, as before it was written in pieces.
    assert data == (json.dumps(json.loads(data), ensure_ascii=False, indent=2) + "\n").encode()
    groups = json.loads(data)["split_assignment"]["groups"]
    assert len(groups) == 3 and set(groups.values()) <= {"train", "dev", "test"}
    assert json.loads(data)["project"]["name"] == released_project.name


def lines_of(release: Release, name: str) -> list[dict]:
    return read_jsonl(published_dir(release) / name)


def test_other_item_statuses_come_in_only_when_asked(released_project, coordinator):
    accepted_only = services.release_build_now(project=released_project, user=coordinator)
    with_rejected = services.release_build_now(
        project=released_project, user=coordinator, item_statuses=["accepted", "rejected"]
    )

    assert {r["review_outcome"] for r in lines_of(accepted_only, "lead_qa.jsonl")} == {"accepted"}
    assert len(lines_of(with_rejected, "lead_qa.jsonl")) == 8
    assert {r["review_outcome"] for r in lines_of(with_rejected, "lead_qa.jsonl")} == {"accepted", "rejected"}
    assert with_rejected.version == 2


def test_the_same_seed_gives_the_same_splits_and_the_next_release_keeps_the_seed(project, annotator, coordinator):
    pairs = [authored_pair(project, annotator).pk for _ in range(20)]
    # Pair ids depend on what ran before: pick seeds for which these pairs fill all three splits, differently.
    groups = ReleaseUnits.counted("page pair", ((pk, 2) for pk in pairs))  # two lead QAs per pair (`authored_pair`)
    assignments = {seed: [split_assign(groups, DEFAULT_SPLITS, seed).get(pk) for pk in pairs] for seed in range(200)}
    seed, other_seed = [seed for seed, splits in assignments.items() if set(splits) == {"train", "dev", "test"}][:2]
    first = services.release_build_now(project=project, user=coordinator, seed=seed)
    second = services.release_build_now(project=project, user=coordinator)  # no seed: keeps the previous one
    other = services.release_build_now(project=project, user=coordinator, seed=other_seed)

    assert assignments[seed] != assignments[other_seed]
    assert second.seed == seed
    assert first.file_entry("lead_qa.jsonl")["sha256"] == second.file_entry("lead_qa.jsonl")["sha256"]
    assert first.file_entry("lead_qa.jsonl")["sha256"] != other.file_entry("lead_qa.jsonl")["sha256"]
    splits_of_pair: dict[str, set] = {}
    for record in lines_of(first, "lead_qa.jsonl"):
        splits_of_pair.setdefault(record["pair_id"], set()).add(record["split"])
    assert all(len(splits) == 1 for splits in splits_of_pair.values()), "a pair's items crossed splits"
    assert set().union(*splits_of_pair.values()) == {"train", "dev", "test"}


def test_a_release_without_splits_has_null_splits_and_one_file_per_kind(released_project, coordinator):
    release = services.release_build_now(project=released_project, user=coordinator, splits={})

    assert {record["split"] for record in lines_of(release, "lead_qa.jsonl")} == {None}
    assert not any(entry["name"].startswith("lead_qa/") for entry in release.files)
    assert 'path: "lead_qa.jsonl"' in (published_dir(release) / "README.md").read_text()


@pytest.mark.parametrize(
    ("request_args", "field"),
    [
        ({"splits": {"train": 70, "dev": 10, "test": 10}}, "splits"),
        ({"splits": {"train": 90, "validation": 10}}, "splits.validation"),
        ({"item_statuses": ["accepted", "approved"]}, "item_statuses"),
        ({"item_statuses": []}, "item_statuses"),
        ({"license": "CC BY SA!"}, "license"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_release_choices_are_refused_naming_the_field_and_nothing_is_created(
    released_project, coordinator, request_args, field
):
    with pytest.raises(InvalidInput) as refused:
        services.release_request(project=released_project, user=coordinator, **request_args)

    assert refused.value.field == field
    assert not Release.objects.exists()


def test_a_second_request_while_one_is_being_built_is_refused(released_project, coordinator):
    first = services.release_request(project=released_project, user=coordinator, enqueue=False)

    with pytest.raises(InvalidState, match="v1 of this project is being built"):
        services.release_request(project=released_project, user=coordinator, enqueue=False)

    assert list(Release.objects.values_list("pk", flat=True)) == [first.pk]


def test_a_duplicate_delivery_of_the_build_does_nothing(released_project, coordinator):
    release = services.release_request(project=released_project, user=coordinator, enqueue=False)

    assert services.release_build(release_id=release.pk).status == Release.Status.DONE
    assert services.release_build(release_id=release.pk) is None

    release.refresh_from_db()
    assert (release.status, release.attempts) == (Release.Status.DONE, 1)


def test_a_build_that_fails_midway_publishes_nothing_and_can_be_built_again(released_project, coordinator, monkeypatch):
    from exports.formats.qa import QAWriter

    def disk_full(self, records):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(QAWriter, "add_items", disk_full)
        failed = services.release_build_now(project=released_project, user=coordinator)

    assert failed.status == Release.Status.FAILED
    assert "No space left on device" in failed.error
    releases = Path(settings.MEDIA_ROOT) / "releases" / released_project.slug
    assert not (releases / "v1").exists()
    assert not any((releases / ".building").iterdir()), "temporary files were left behind"

    again = services.release_rebuild(release=failed, user=coordinator, enqueue=False)
    built = services.release_build(release_id=again.pk)

    assert (built.status, built.version) == (Release.Status.DONE, 1)
    failed.refresh_from_db()
    assert failed.status == Release.Status.FAILED  # the failed attempt stays on record


def test_a_build_whose_worker_stopped_reporting_is_marked_failed_and_its_files_removed(
    released_project, coordinator, settings
):
    release = services.release_request(project=released_project, user=coordinator, enqueue=False)
    token_dir = Path(settings.MEDIA_ROOT) / "releases" / released_project.slug / ".building" / "v1-deadbeef"
    token_dir.mkdir(parents=True)
    (token_dir / "lead_qa.jsonl").write_text("{}\n")
    stale = timezone.now() - timedelta(seconds=settings.RELEASE_STALE_SECONDS + 1)
    Release.objects.filter(pk=release.pk).update(status=Release.Status.RUNNING, heartbeat_at=stale, owner="x")

    assert services.release_expire_stale(project=released_project) == 1

    release.refresh_from_db()
    assert release.status == Release.Status.FAILED
    assert "No files were published" in release.error
    assert not token_dir.exists()
    assert services.release_build(release_id=release.pk) is None  # a late redelivery finds nothing to do


def test_a_redelivered_build_takes_over_a_stale_one_and_publishes_once(released_project, coordinator, settings):
    release = services.release_request(project=released_project, user=coordinator, enqueue=False)
    stale = timezone.now() - timedelta(seconds=settings.RELEASE_STALE_SECONDS + 1)
    Release.objects.filter(pk=release.pk).update(
        status=Release.Status.RUNNING, heartbeat_at=stale, owner="dead", attempts=1
    )

    built = services.release_build(release_id=release.pk)

    assert (built.status, built.attempts) == (Release.Status.DONE, 2)
    assert services.release_build(release_id=release.pk) is None


def test_building_runs_a_fixed_number_of_queries_however_many_items(project, annotator, coordinator, settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(3):
        authored_pair(project, annotator)
    services.release_build_now(project=project, user=coordinator)  # the first release also draws a seed
    with CaptureQueriesContext(connection) as small:
        services.release_build_now(project=project, user=coordinator)
    for _ in range(15):
        authored_pair(project, annotator)
    with CaptureQueriesContext(connection) as large:
        services.release_build_now(project=project, user=coordinator)

    assert len(large.captured_queries) == len(small.captured_queries)


def test_records_carry_the_review_apps_verification_labels_and_review_count(released_project, coordinator):
    review = pytest.importorskip("review.models")
    item = QAItem.objects.filter(project=released_project, status="accepted", kind="lead").first()
    pair = item.pair
    standard_text = "这是一家茶餐厅。它以菠萝油和鸳鸯闻名。"
    PagePair.objects.filter(pk=pair.pk).update(standard_text=standard_text)
    sentence = {"start": 8, "end": len(standard_text), "text": standard_text[8:]}
    review.Verification.objects.create(item=item, number=1, result="not_found", sentences=[])
    review.Verification.objects.create(
        item=item, number=2, result="found", sentences=[sentence], note="在第二段；用词不同"
    )
    review.FinalLabel.objects.create(project=pair.project, pair=pair, kind="topic", value="food", method="agreement")
    review.FinalLabel.objects.create(
        project=pair.project, pair=pair, kind="region", value="local", method="adjudicated"
    )

    release = services.release_build_now(project=released_project, user=coordinator)

    record = next(r for r in lines_of(release, "lead_qa.jsonl") if r["id"] == f"{released_project.slug}-q{item.pk}")
    assert record["verification"] == {
        "status": "found",
        "sentences": [sentence],
        "note": "在第二段；用词不同",
        "answer": None,
        "query": "",
    }
    assert standard_text[sentence["start"] : sentence["end"]] == sentence["text"]
    assert (record["topic"], record["region"]) == ("food", "local")
    others = [r for r in lines_of(release, "lead_qa.jsonl") if r["pair_id"] != record["pair_id"]]
    assert {(r["verification"]["status"], r["topic"]) for r in others} == {("not_checked", None)}
    card = (published_dir(release) / "README.md").read_text()
    assert "| food | 1 |" in card


def test_agreement_figures_come_from_two_reviewers_and_two_labellers(released_project, coordinator, reviewer):
    review = pytest.importorskip("review.models")
    from tests import factories

    second = factories.user("reviewer2")
    review.ReviewSlot.objects.filter(item__project=released_project).delete()  # the slots routed on submit
    items = QAItem.objects.filter(project=released_project, status="accepted").prefetch_related("revisions")
    for index, item in enumerate(items):
        revision = item.revisions.all()[0]
        for number, user in enumerate((reviewer, second), start=1):
            slot = review.ReviewSlot.objects.create(
                project=released_project, item=item, revision=revision, number=number, status="done", reviewer=user
            )
            for key in ("fluency", "standalone", "appropriateness"):
                verdict = "flag" if (key == "fluency" and index % 3 == 0 and user == second) else "pass"
                review.Judgment.objects.create(
                    project=released_project,
                    slot=slot,
                    item=item,
                    revision=revision,
                    reviewer=user,
                    criterion=key,
                    verdict=verdict,
                )
    for index, pair in enumerate(released_project.pairs.filter(items__status="accepted").distinct()):
        for user in (coordinator, second):
            value = "food" if index or user == coordinator else "history"
            review.ArticleLabel.objects.create(
                project=pair.project, pair=pair, labeller=user, kind="topic", value=value
            )

    release = services.release_build_now(project=released_project, user=coordinator)

    manifest = json.loads((published_dir(release) / "manifest.json").read_text())
    scopes = manifest["agreement"]["scopes"]
    assert set(scopes) == {"review:fluency", "review:standalone", "review:appropriateness", "label:topic"}
    alpha = scopes["review:fluency"]["statistics"]["krippendorff_alpha"]
    assert alpha["n_units"] == 7 and alpha["n_raters"] == 2
    assert scopes["review:standalone"]["statistics"]["percent_agreement"]["value"] == 1.0
    assert "bootstrap" in manifest["agreement_note"]
    card = (published_dir(release) / "README.md").read_text()
    assert "| review:fluency |" in card and "| label:topic |" in card
    assert all(set(figures) == {"statistics", "fingerprint"} for figures in scopes.values())  # no per-reviewer figures


def test_without_double_reviews_the_agreement_is_null_with_a_note(released_project, coordinator):
    release = services.release_build_now(project=released_project, user=coordinator)

    manifest = json.loads((published_dir(release) / "manifest.json").read_text())
    assert manifest["agreement"] is None
    assert "by two people" in manifest["agreement_note"]


def test_a_disk_that_fills_up_while_writing_fails_the_build_and_publishes_nothing(
    project, annotator, coordinator, monkeypatch
):
    from exports.formats.base import HashedFile

    for _ in range(3):
        authored_pair(project, annotator)

    class FullDisk:
        def __init__(self, real):
            self.real, self.written = real, 0

        def write(self, data):
            if self.written + len(data) > 2000:
                raise OSError(28, "No space left on device")
            self.written += len(data)
            return self.real.write(data)

        def close(self):
            self.real.close()

    real_init = HashedFile.__init__

    def small_disk_init(self, root, name):
        real_init(self, root, name)
        self._file = FullDisk(self._file)

    monkeypatch.setattr(HashedFile, "__init__", small_disk_init)

    release = services.release_build_now(project=project, user=coordinator)

    assert release.status == Release.Status.FAILED
    assert "No space left on device" in release.error
    assert not services.release_dir(release).exists()
    assert not any((Path(settings.MEDIA_ROOT) / "releases" / project.slug / ".building").iterdir())


def test_the_review_apps_latest_finished_report_is_the_releases_agreement_without_rater_names(
    released_project, coordinator
):
    from django.apps import apps

    try:
        report_model = apps.get_model("review", "AgreementReport")
    except LookupError:
        pytest.skip("The review app has no agreement reports yet.")
    statistics = {"krippendorff_alpha": {"value": 0.71, "ci_low": 0.6, "ci_high": 0.8, "n_units": 7, "n_raters": 2}}
    scope = {
        "label": "Fluency",
        "summary": {"statistics": statistics, "raters": ["reviewer", "reviewer2"], "pairs": [{"rater_a": "reviewer"}]},
        "strata": {"annotator": [{"label": "annotator"}], "topic": [{"label": "food"}]},
    }
    report = report_model.objects.create(
        project=released_project,
        status="done",
        finished_at=timezone.now(),
        result={"scopes": {"review:fluency": scope}},
    )

    release = services.release_build_now(project=released_project, user=coordinator)

    manifest = json.loads((published_dir(release) / "manifest.json").read_text())
    published = manifest["agreement"]["scopes"]["review:fluency"]
    assert manifest["agreement"]["report"]["id"] == report.pk
    assert published["statistics"]["krippendorff_alpha"]["value"] == 0.71
    assert "reviewer" not in json.dumps(published)
    assert f"#{report.pk}" in manifest["agreement_note"]
    assert "| review:fluency | 0.710 [0.600, 0.800]" in (published_dir(release) / "README.md").read_text()


def test_cancelling_a_running_build_stops_it_and_frees_the_number(released_project, coordinator):
    release = services.release_request(project=released_project, user=coordinator, enqueue=False)
    Release.objects.filter(pk=release.pk).update(
        status=Release.Status.RUNNING, owner="running", heartbeat_at=timezone.now()
    )
    running = services._Progress(JobRun(Release, release.pk, "running", 1))

    cancelled = services.release_cancel(release=release, user=coordinator)

    assert (cancelled.status, cancelled.error) == (Release.Status.FAILED, "Cancelled by coordinator.")
    with pytest.raises(services.BuildLost):
        running.advance(100)  # the build notices at its next chunk and stops
    assert services.release_build(release_id=release.pk) is None
    with pytest.raises(InvalidState):
        services.release_cancel(release=cancelled, user=coordinator)
    assert services.release_build_now(project=released_project, user=coordinator).version == 1


def test_a_scope_too_large_to_compute_while_building_is_left_out_with_a_note(
    released_project, coordinator, monkeypatch
):
    review = pytest.importorskip("review.models")
    from exports import statistics
    from tests import factories

    second = factories.user("labeller2")
    for pair in released_project.pairs.all():
        for user in (coordinator, second):
            review.ArticleLabel.objects.create(
                project=pair.project, pair=pair, labeller=user, kind="topic", value="food"
            )
    monkeypatch.setattr(statistics, "MAX_AGREEMENT_JUDGMENTS", 3)

    release = services.release_build_now(project=released_project, user=coordinator)

    manifest = json.loads((published_dir(release) / "manifest.json").read_text())
    assert manifest["agreement"] is None
    assert "too large to compute while building" in manifest["agreement_note"]
    assert "label:topic" in manifest["agreement_note"]


@pytest.fixture
def committed_project(transactional_db, project, annotator):
    """`released_project`'s shape with committed rows, so the read-ahead thread's own connection sees them."""
    from tests.exports.conftest import excluded_pair

    QAItem.objects.filter(project=project).delete()
    authored_pair(project, annotator)
    authored_pair(project, annotator, evidence=("深水埗", "六十幾年"))
    excluded_pair(project, annotator)
    return project


@pytest.mark.postgresql(
    reason="on SQLite a build reads in its own thread: its read transaction cannot be shared with a reader thread"
)
def test_chunks_read_ahead_by_a_thread_give_the_files_a_build_in_one_thread_gives(
    committed_project, coordinator, settings, monkeypatch
):
    import threading

    from django.db import transaction

    settings.RELEASE_CHUNK_SIZE = 1  # several chunks, so the reader runs ahead of the writers
    readers = []
    start = threading.Thread.start

    def spy(thread):
        readers.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", spy)
    ahead = services.release_build_now(project=committed_project, user=coordinator, seed=3)
    assert {"release-reader", "release-figures"} <= set(readers)
    readers.clear()
    with transaction.atomic():  # inside a transaction the chunks are read in the building thread
        inline = services.release_build_now(project=committed_project, user=coordinator, seed=3)
    assert not {"release-reader", "release-figures"} & set(readers)

    assert (ahead.status, inline.status) == (Release.Status.DONE, Release.Status.DONE)
    hashes = [{e["name"]: e["sha256"] for e in r.files if e["name"].endswith(".jsonl")} for r in (ahead, inline)]
    assert hashes[0] == hashes[1]
    assert len(read_jsonl(published_dir(ahead) / "lead_qa.jsonl")) == 4


@pytest.mark.postgresql(
    reason="on SQLite a build reads in its own thread: its read transaction cannot be shared with a reader thread"
)
def test_an_error_while_reading_ahead_fails_the_build_and_stops_the_reader(
    committed_project, coordinator, settings, monkeypatch
):
    import threading

    from exports import records

    settings.RELEASE_CHUNK_SIZE = 1
    threads = []

    def broken(project, row, splitter, review):  # runs on the reading thread (records are made by the builder)
        threads.append(threading.current_thread().name)
        if len(threads) == 2:
            raise ValueError("row 2 could not be read")
        return original(project, row, splitter, review)

    original = records.pair_facts
    monkeypatch.setattr(records, "pair_facts", broken)
    failed = services.release_build_now(project=committed_project, user=coordinator)

    assert threads == ["release-reader", "release-reader"]
    assert failed.status == Release.Status.FAILED
    assert "row 2 could not be read" in failed.error
    assert not any(thread.name == "release-reader" for thread in threading.enumerate())
    assert not (Path(settings.MEDIA_ROOT) / "releases" / committed_project.slug / "v1").exists()


def test_an_error_while_the_figures_are_computed_in_the_background_fails_the_build(
    committed_project, coordinator, monkeypatch
):
    import threading

    from exports import services as export_services

    def broken(project, statuses):
        raise RuntimeError("agreement figures could not be read")

    monkeypatch.setattr(export_services, "release_agreement", broken)
    failed = services.release_build_now(project=committed_project, user=coordinator)

    assert failed.status == Release.Status.FAILED
    assert "agreement figures could not be read" in failed.error
    assert not any(thread.name == "release-figures" for thread in threading.enumerate())
    assert not (Path(settings.MEDIA_ROOT) / "releases" / committed_project.slug / "v1").exists()
