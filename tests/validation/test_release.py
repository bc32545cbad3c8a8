"""A validation project's release: validated QA pairs as JSONL with judgments and aggregate, splits, seed queries."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from annotation.importers.sources import ImportSource
from annotation.models import QAItem
from exports.services import release_build_now, release_diff, release_file_path
from tests.validation.conftest import ARABIC_TSV, COLLECTED_TSV, NATIVQA, TSV_HEADER, tsv_source
from validation import services
from validation.models import ValidationItem

SPLITS = ("train", "dev", "test")

JUDGMENT = {
    "question": "good",
    "location_relevant": "yes",
    "domain_label": "partially_reliable",
    "likert": {"clarity": 5, "faithfulness": 4, "informativeness": 3, "plausibility": 5},
}


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def validated(vproject, coordinator, reviewer, second_reviewer):
    """Two validators on every item: the first edits the answer of the oryx question, the second does not."""
    imported = vproject
    services.validation_settings_update(project=imported, validators_per_item=2)
    services.validation_items_import(project=imported, source=tsv_source(COLLECTED_TSV), user=coordinator)
    services.validation_settings_update(
        project=imported, tasks=["question", "answer_edit", "location", "domain", "likert"]
    )
    services.source_domains_import(
        project=imported, source=ImportSource.of(NATIVQA / "annotated_domains.csv"), user=None
    )
    services.seed_queries_import(
        project=imported, source=ImportSource.of(NATIVQA / "test_query.csv"), locations=["New York"], user=coordinator
    )
    for user in (reviewer, second_reviewer):
        while (slot := services.validation_claim_next(project=imported, user=user)) is not None:
            data = dict(JUDGMENT)
            if user == reviewer and slot.item.validation.data_id == "1":
                data["answer"] = "The Arabian oryx (Oryx leucoryx)."
            if user == second_reviewer and slot.item.validation.data_id == "4":
                data["question"], data["question_reason"] = "bad", "ambiguous"
            services.validation_submit(slot=slot, user=user, version=slot.version, data=data)
    return imported


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_an_item_needs_every_validator_before_it_is_released(imported, reviewer):
    slot = services.validation_claim_next(project=imported, user=reviewer)
    services.validation_submit(slot=slot, user=reviewer, version=slot.version, data=JUDGMENT | {"better": "1"})

    # reviewers_per_item is 1 in this project: one judgment validates an item.
    assert QAItem.objects.get(pk=slot.item_id).status == QAItem.Status.ACCEPTED


def test_the_release_holds_validated_pairs_with_judgments_aggregate_and_seed_queries(validated, coordinator):
    release = release_build_now(project=validated, user=coordinator, seed=7)

    assert release.status == "done", release.error
    names = {entry["name"] for entry in release.files}
    assert {"validation_qa.jsonl", "seed_queries.csv", "README.md", "manifest.json"} <= names
    assert not {"lead_qa.jsonl", "page_pairs.jsonl"} & names
    records = read_jsonl(release_file_path(release, "validation_qa.jsonl"))
    assert len(records) == 4 and release.counts["validation_qa"] == 4
    oryx = next(r for r in records if r["data_id"] == "1")
    assert oryx["question"] == "What is the national animal of Qatar?"
    assert oryx["answer"] == "The Arabian oryx (Oryx leucoryx)."
    assert oryx["original_answer"] == "The Arabian oryx."
    assert oryx["answer_edited"] is True
    assert oryx["source_urls"] == ["https://www.qatarday.com/animals"]
    assert (oryx["domain"], oryx["domain_label"]) == ("qatarday.com", "very_reliable")  # from the imported list
    assert oryx["location_relevant"] is True
    assert oryx["split"] in {"train", "dev", "test"}
    assert [j["validator"] for j in oryx["judgments"]] == ["v1", "v2"]
    assert oryx["judgments"][0]["edited_answer"] == "The Arabian oryx (Oryx leucoryx)."
    assert oryx["aggregate"]["likert_mean"] == {
        "clarity": 5,
        "faithfulness": 4,
        "informativeness": 3,
        "plausibility": 5,
    }
    assert oryx["aggregate"]["question"] == "good"
    blog = next(r for r in records if r["data_id"] == "3")
    assert blog["domain_label"] == "partially_reliable"  # labelled by its first validator
    stadium = next(r for r in records if r["data_id"] == "4")
    assert stadium["aggregate"]["question"] is None  # one good, one bad: a tie
    seeds = list(csv.reader(io.StringIO(release_file_path(release, "seed_queries.csv").read_text(encoding="utf-8"))))
    assert seeds[0] == ["topic", "query", "location"] and len(seeds) == 8


def test_the_file_holds_every_line_once_with_its_split_at_the_default_70_10_20(validated, coordinator):
    release = release_build_now(project=validated, user=coordinator, seed=7)

    assert release.splits == {"train": 70, "dev": 10, "test": 20}
    everything = read_jsonl(release_file_path(release, "validation_qa.jsonl"))
    by_split: dict[str, list] = {}
    for line in everything:
        by_split.setdefault(line["split"], []).append(line)
    assert not any(entry["name"].startswith("validation_qa/") for entry in release.files)
    assert sum(len(lines) for lines in by_split.values()) == 4
    for split, lines in by_split.items():
        assert all(line["split"] == split for line in lines)
    manifest = json.loads(release_file_path(release, "manifest.json").read_text())
    assert {entry["name"] for entry in manifest["files"]} >= {"validation_qa.jsonl", "seed_queries.csv"}


def test_the_validation_lines_load_in_datasets_and_pandas(validated, coordinator, tmp_path):
    import datasets
    import pandas as pd

    release = release_build_now(project=validated, user=coordinator, seed=7)
    path = release_file_path(release, "validation_qa.jsonl")

    dataset = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
    frame = pd.read_json(path, lines=True, dtype=False)

    assert dataset.num_rows == len(frame) == 4
    assert list(frame.columns) == dataset.column_names


def test_the_release_diff_names_validation_items_added_removed_and_changed(validated, coordinator, reviewer):
    first = release_build_now(project=validated, user=coordinator, seed=7)
    oryx = ValidationItem.objects.get(project=validated, data_id="1")
    services.validation_final_answer_choose(vitem=oryx, revision_number=1, user=coordinator)  # changes its answer
    group = services.duplicate_groups(validated)[0]
    services.validation_item_merge(
        project=validated, keep=group["keep"], duplicate=group["duplicates"][0], user=coordinator
    )  # the duplicate leaves the dataset
    services.validation_settings_update(project=validated, validators_per_item=1)
    services.validation_items_import(project=validated, source=tsv_source(ARABIC_TSV), user=coordinator)
    slot = services.validation_claim_next(project=validated, user=reviewer)
    services.validation_submit(slot=slot, user=reviewer, version=slot.version, data=JUDGMENT)

    second = release_build_now(project=validated, user=coordinator, seed=7)
    diff = release_diff(old=first, new=second).as_dict()

    def record_id(vitem: ValidationItem) -> str:
        return f"{validated.slug}-q{vitem.item_id}"

    arabic = ValidationItem.objects.get(project=validated, data_id="a1")
    assert (diff["counts"]["added"], diff["counts"]["removed"]) == (1, 1)
    assert diff["counts"]["changed"] + diff["counts"]["unchanged"] == 3  # the three items in both releases
    assert diff["added"] == [record_id(arabic)]
    assert diff["removed"] == [record_id(group["duplicates"][0])]
    # Exact split sizes over a set that changed can move an item to another split (which one depends on the ids
    # the run gave out): that is not what changed here, so an item whose split alone moved is left aside.
    changed = {change["id"]: [f for f in change["fields"] if f != "split"] for change in diff["changed"]}
    changed = {record: fields for record, fields in changed.items() if fields}
    assert changed == {
        record_id(oryx): ["answer", "answer_edited", "final_answer_chosen", "final_answer_revision"],
        record_id(group["keep"]): ["source_urls"],  # the merged duplicate's source joined the item kept
    }


def test_the_final_answer_is_the_revision_the_coordinator_chose(validated, coordinator):
    oryx = ValidationItem.objects.get(project=validated, data_id="1")
    before = release_build_now(project=validated, user=coordinator, seed=7)
    services.validation_final_answer_choose(vitem=oryx, revision_number=1, user=coordinator, note="edit unsourced")

    after = release_build_now(project=validated, user=coordinator, seed=7)

    def oryx_line(release):
        return next(r for r in read_jsonl(release_file_path(release, "validation_qa.jsonl")) if r["data_id"] == "1")

    assert (oryx_line(before)["answer"], oryx_line(before)["final_answer_chosen"]) == (
        "The Arabian oryx (Oryx leucoryx).",
        False,
    )
    line = oryx_line(after)
    assert (line["answer"], line["answer_edited"]) == ("The Arabian oryx.", False)
    assert (line["final_answer_revision"], line["final_answer_chosen"]) == (1, True)


def _accept_all(project, reviewer, data=None):
    services.validation_settings_update(project=project, tasks=["location"])
    while (slot := services.validation_claim_next(project=project, user=reviewer)) is not None:
        services.validation_submit(
            slot=slot, user=reviewer, version=slot.version, data=data or {"location_relevant": "no"}
        )


def test_two_hundred_collected_pairs_split_exactly_140_20_40(vproject, coordinator, reviewer):
    rows = "".join(f"{i}\tt\tq\tQuestion number {i} about {i * 7919}?\tAnswer {i}.\tfactoid\t\tx\n" for i in range(200))
    services.validation_items_import(project=vproject, source=tsv_source(TSV_HEADER + rows), user=coordinator)
    _accept_all(vproject, reviewer)

    release = release_build_now(project=vproject, user=coordinator, seed=7)

    everything = read_jsonl(release_file_path(release, "validation_qa.jsonl"))
    lines = {split: [line for line in everything if line["split"] == split] for split in SPLITS}
    sizes = {split: len(lines[split]) for split in SPLITS}
    assert sizes == {"train": 140, "dev": 20, "test": 40}  # was 145/22/33: a hash per item, exact only on average
    assert release.counts["validation_qa_by_split"] == sizes
    assert all(line["split"] == split for split in SPLITS for line in lines[split])
    again = release_build_now(project=vproject, user=coordinator, seed=7)
    assert {line["id"]: line["split"] for line in read_jsonl(release_file_path(again, "validation_qa.jsonl"))} == {
        line["id"]: split for split in SPLITS for line in lines[split]
    }  # the same seed, the same splits


def test_duplicates_not_yet_merged_never_straddle_splits(vproject, coordinator, reviewer):
    # 30 questions asked three times each (the same, with a space, reworded): sets of duplicates to be merged.
    rows = "".join(
        f"{i}{v}\tt\tq\t{text}\tAnswer {i}.\tfactoid\t\tx\n"
        for i in range(30)
        for v, text in enumerate(
            [
                f"Which year did event number {i} happen?",
                f"Which year did event number {i} happen ?",
                f"In which year did event number {i} happen?",
            ]
        )
    )
    services.validation_items_import(project=vproject, source=tsv_source(TSV_HEADER + rows), user=coordinator)
    sets = {
        group["keep"].item_id: {v.item_id for v in group["duplicates"]} for group in services.duplicate_groups(vproject)
    }
    assert len(sets) == 30 and all(len(members) == 2 for members in sets.values())
    _accept_all(vproject, reviewer)

    release = release_build_now(project=vproject, user=coordinator, seed=3)

    split_of = {
        int(line["id"].rsplit("-q", 1)[1]): line["split"]
        for line in read_jsonl(release_file_path(release, "validation_qa.jsonl"))
    }
    assert len(split_of) == 90
    for keep, members in sets.items():
        assert {split_of[pk] for pk in members | {keep}} == {split_of[keep]}
    sizes = release.counts["validation_qa_by_split"]
    assert abs(sizes["train"] - 63) <= 2 and abs(sizes["dev"] - 9) <= 2 and abs(sizes["test"] - 18) <= 2, sizes


def test_the_split_sizes_are_the_largest_remainder_of_the_shares():
    assert services.split_sizes(200, {"train": 70, "dev": 10, "test": 20}) == {"train": 140, "dev": 20, "test": 40}
    assert services.split_sizes(7, {"train": 70, "dev": 10, "test": 20}) == {"train": 5, "dev": 1, "test": 1}
    assert services.split_sizes(3, {"train": 1, "dev": 1, "test": 1}) == {"train": 1, "dev": 1, "test": 1}
    assert services.split_sizes(0, {"train": 70, "dev": 10, "test": 20}) == {"train": 0, "dev": 0, "test": 0}


BAD_AND_UNRELIABLE = TSV_HEADER + (
    "o1\tfood\tq\tWhich restaurant in Doha is the nicest to go to?\tSeveral.\tfactoid\thttps://spam.example/x\tg\n"
    "o2\tfood\tq\tWhat is the national dish of Qatar?\tMachboos.\tfactoid\thttps://spam.example/y\tg\n"
    "o3\tfood\tq\tWhich dessert is the tastiest in Qatar?\tUmm Ali.\tfactoid\thttps://kaleijy.com/z\tg\n"
    "o4\tsport\tq\tWhich stadium hosted the 2022 final?\tLusail.\tfactoid\thttps://kaleijy.com/s\tg\n"
)


def _judge_opinions(project, coordinator, reviewer, second_reviewer):
    services.validation_settings_update(project=project, validators_per_item=2, tasks=["question"])
    services.validation_items_import(project=project, source=tsv_source(BAD_AND_UNRELIABLE), user=coordinator)
    services.source_domain_label(
        project=project, domain="spam.example", label="completely_unreliable", user=coordinator, origin="coordinator"
    )
    for user in (reviewer, second_reviewer):
        while (slot := services.validation_claim_next(project=project, user=user)) is not None:
            opinion = slot.item.validation.data_id in ("o1", "o3")
            data = {"question": "bad", "question_reason": "opinion_seeking"} if opinion else {"question": "good"}
            services.validation_submit(slot=slot, user=user, version=slot.version, data=data)


def test_bad_questions_and_unreliable_domains_are_left_out_and_the_card_counts_them(
    vproject, coordinator, reviewer, second_reviewer
):
    _judge_opinions(vproject, coordinator, reviewer, second_reviewer)

    release = release_build_now(project=vproject, user=coordinator, seed=7)

    # o1: opinion-seeking from a completely unreliable domain; it was released as accepted in train before.
    lines = read_jsonl(release_file_path(release, "validation_qa.jsonl"))
    assert [line["data_id"] for line in lines] == ["o4"]
    assert release.counts["validation_qa_left_out"] == {"bad_question": 2, "unreliable_domain": 1}
    card = release_file_path(release, "README.md").read_text(encoding="utf-8")
    assert "3 validated items left out of this release:" in card
    assert "- Question judged bad by the validators: 2" in card
    assert "(the validators' reason: opinion-seeking 2)" in card
    assert "- Source domain labelled completely unreliable: 1" in card
    assert "| `validation_qa.jsonl` | 1 |" in card


def test_the_setting_releases_what_it_no_longer_leaves_out(vproject, coordinator, reviewer, second_reviewer):
    _judge_opinions(vproject, coordinator, reviewer, second_reviewer)
    services.validation_settings_update(project=vproject, release_leave_out=["unreliable_domain"])

    release = release_build_now(project=vproject, user=coordinator, seed=7)

    lines = read_jsonl(release_file_path(release, "validation_qa.jsonl"))
    assert sorted(line["data_id"] for line in lines) == ["o3", "o4"]
    card = release_file_path(release, "README.md").read_text(encoding="utf-8")
    assert "2 validated items left out of this release:" in card
    assert "Not left out (the project releases them): question judged bad by the validators." in card


def test_the_card_lists_the_languages_of_the_released_rows(coordinator, reviewer):
    from annotation.services.members import membership_set
    from review.reviewers import reviewer_languages_set

    project = services.validation_project_create(name="Doha ar", language="arb", created_by=coordinator)
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    reviewer_languages_set(project=project, user=reviewer, languages=["arb", "eng"], actor=coordinator)
    english = TSV_HEADER.replace("\tengine", "\tlanguage\tengine") + (
        "e1\tfood\tq\tWhat is the national dish of Qatar?\tMachboos.\tfactoid\t\teng\tg\n"
    )
    services.validation_items_import(project=project, source=tsv_source(ARABIC_TSV), user=coordinator)
    services.validation_items_import(project=project, source=tsv_source(english), user=coordinator)
    _accept_all(project, reviewer)

    release = release_build_now(project=project, user=coordinator, seed=7)

    card = release_file_path(release, "README.md").read_text(encoding="utf-8")
    header = card.split("---")[1]
    assert 'language:\n- "arb"\n- "eng"\n' in header  # was only "arb", the project's language
    assert release.counts["validation_qa_languages"] == ["arb", "eng"]


def test_the_previewed_splits_leave_out_what_the_release_leaves_out_and_match_the_files(
    client, vproject, coordinator, reviewer
):
    # 24 collected pairs, 2 from a completely unreliable domain: the release holds 22 (16/2/4), and says so before.
    rows = "".join(
        f"{i}\tt\tq\tQuestion number {i} about {i * 7919}?\tAnswer {i}.\tfactoid\t"
        f"{'https://spam.example/' if i < 2 else 'https://kaleijy.com/'}{i}\tx\n"
        for i in range(24)
    )
    services.validation_items_import(project=vproject, source=tsv_source(TSV_HEADER + rows), user=coordinator)
    services.source_domain_label(
        project=vproject, domain="spam.example", label="completely_unreliable", user=coordinator, origin="coordinator"
    )
    _accept_all(vproject, reviewer)
    client.force_login(coordinator)

    preview = client.get(f"/api/projects/{vproject.slug}/releases/readiness/?seed=7").json()
    release = release_build_now(project=vproject, user=coordinator, seed=7)

    built = release.counts["validation_qa_by_split"]
    assert built == {"train": 16, "dev": 2, "test": 4} == preview["splits"]["sizes"]
    assert preview["splits"]["items"] == 22
    assert preview["splits"]["left_out"] == {"source domain labelled completely unreliable": 2}
    detail = next(check["detail"] for check in preview["unfinished"] if check["code"] == "splits_small")
    assert detail.startswith("train 16, dev 2, test 4 (of 22 items; 2 left out")
    card = release_file_path(release, "README.md").read_text(encoding="utf-8")
    assert "train 16, dev 2, test 4 (of 22 items; 2 left out" in card  # the unfinished section: as built
    assert "| `validation_qa` | 16 | 2 | 4 | 22 |" in card


def test_a_validation_release_loads_by_the_cards_line_with_every_line_in_its_schema(validated, coordinator, tmp_path):
    from tests.exports.loading import assert_release_loads

    release = release_build_now(project=validated, user=coordinator, seed=7)

    loaded = assert_release_loads(release, tmp_path / "hf")
    assert (
        sum(loaded["validation_qa"][split].num_rows for split in loaded["validation_qa"])
        == release.counts["validation_qa"]
    )
