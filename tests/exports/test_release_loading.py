"""A Wikipedia QA release loads by the dataset card's own line whatever mix of values its splits hold, and the
split sizes the Releases page previews are the sizes the build writes and the card states."""

from __future__ import annotations

import pytest

from annotation.models import QAItem
from exports import services
from exports.models import Release
from exports.splits import ReleaseUnits, previous_assignment, split_assign, split_sizes
from review.models import Verification
from tests.exports.conftest import authored_pair
from tests.exports.loading import assert_release_loads, root_of

pytest.importorskip("datasets")

STANDARD_TEXT = "茶餐厅在深水埗。老板姓陈。"


def test_split_sizes_are_the_largest_remainders_of_the_shares():
    assert split_sizes(6, {"train": 70, "dev": 10, "test": 20}) == {"train": 4, "dev": 1, "test": 1}
    assert split_sizes(22, {"train": 70, "dev": 10, "test": 20}) == {"train": 16, "dev": 2, "test": 4}
    assert split_sizes(65, {"train": 70, "dev": 10, "test": 20}) == {"train": 46, "dev": 6, "test": 13}


def test_single_items_are_split_exactly_and_the_same_seed_gives_the_same_splits():
    groups = ReleaseUnits.counted("item", ((key, 1) for key in range(1, 66)))
    first = split_assign(groups, {"train": 70, "dev": 10, "test": 20}, 5)
    splits = dict(first.items())
    sizes = {name: list(splits.values()).count(name) for name in ("train", "dev", "test")}
    assert sizes == {"train": 46, "dev": 6, "test": 13}  # not 59/0/6
    assert dict(split_assign(groups, {"train": 70, "dev": 10, "test": 20}, 5).items()) == splits
    # The next release keeps the earlier groups' splits; the new ones fill what the sizes still need.
    more_groups = ReleaseUnits.counted("item", ((key, 1) for key in range(1, 76)))
    more = dict(split_assign(more_groups, {"train": 70, "dev": 10, "test": 20}, 5, first).items())
    assert all(more[key] == splits[key] for key in splits)
    assert [list(more.values()).count(name) for name in ("train", "dev", "test")] == [53, 7, 15]


def _mixed_project(project, annotator):
    """Two pairs of two lead QAs; the first pair's items were verified found, with their sentences."""
    pairs = [authored_pair(project, annotator, standard_text=STANDARD_TEXT) for _ in range(2)]
    start = STANDARD_TEXT.index("老板姓陈")
    for item in QAItem.objects.filter(pair=pairs[0]):
        Verification.objects.create(
            item=item,
            number=1,
            result="found",
            sentences=[{"start": start, "end": start + 5, "text": "老板姓陈。"}],
            query="姓陈",
            answer=item.answer_standard,
        )
    return pairs


def test_a_release_with_found_sentences_in_one_split_and_none_in_another_loads_by_the_cards_line(
    project, annotator, coordinator, tmp_path
):
    _mixed_project(project, annotator)
    release = services.release_build_now(project=project, user=coordinator, seed=13)
    assert release.status == Release.Status.DONE, release.error
    by_split = release.counts["lead_qa_by_split"]
    # 4 items at 70/10/20 are 3/0/1: two whole pairs give 2/0/2, the verified pair in one split, the other apart.
    assert by_split == {"train": 2, "dev": 0, "test": 2}

    loaded = assert_release_loads(release, tmp_path / "hf")

    lead = loaded["lead_qa"]["full"]  # every item once; each line names its split
    assert lead.num_rows == 4
    statuses: dict[str, set[str]] = {}
    for row in lead:
        statuses.setdefault(row["split"], set()).add(row["verification"]["status"])
    assert set(statuses) == {"train", "test"}
    assert sorted(map(sorted, statuses.values())) == [["found"], ["not_checked"]]
    found = [row for row in lead if row["verification"]["status"] == "found"]
    assert found[0]["verification"]["sentences"][0]["text"] == "老板姓陈。"
    assert [entry["name"] for entry in release.files if entry["name"].startswith("lead_qa")] == ["lead_qa.jsonl"]
    card = (root_of(release) / "README.md").read_text(encoding="utf-8")
    assert "| `lead_qa` | 2 | 0 | 2 | 4 |" in card  # the card states the sizes of the files it describes


DEFAULT = {"train": 70, "dev": 10, "test": 20}


def test_the_previewed_splits_are_the_built_ones(client, project, annotator, coordinator):
    for evidence in (("深水埗", "六十幾年"), ("六十幾年", "招牌菜", "星期三休息")):
        authored_pair(project, annotator, evidence=evidence)
    for _ in range(3):
        authored_pair(project, annotator)
    authored_pair(project, annotator, status=QAItem.Status.REJECTED)
    client.force_login(coordinator)

    preview = client.get(f"/api/projects/{project.slug}/releases/readiness/").json()
    # Without a seed, the preview uses the seed the release will take.
    release = services.release_build_now(project=project, user=coordinator)

    assert release.status == Release.Status.DONE, release.error
    assert preview["splits"]["seed"] == release.seed
    assert preview["splits"]["sizes"] == release.counts["lead_qa_by_split"]
    assert sum(preview["splits"]["sizes"].values()) == preview["splits"]["items"] == 11
    page = client.get(f"/projects/{project.slug}/releases/").content.decode()
    assert preview["splits"]["description"] in page


def test_the_next_release_keeps_every_items_split_and_new_pairs_fill_the_sizes(client, project, annotator, coordinator):
    import json

    for _ in range(10):
        authored_pair(project, annotator)
    first = services.release_build_now(project=project, user=coordinator, seed=21)
    for _ in range(5):
        authored_pair(project, annotator)
    client.force_login(coordinator)
    preview = client.get(f"/api/projects/{project.slug}/releases/readiness/").json()

    second = services.release_build_now(project=project, user=coordinator)  # keeps the seed

    def splits(release: Release) -> dict[str, str]:
        lines = (root_of(release) / "lead_qa.jsonl").read_text(encoding="utf-8").splitlines()
        return {record["id"]: record["split"] for record in map(json.loads, lines)}

    before, after = splits(first), splits(second)
    assert {item: after[item] for item in before} == before  # no item changed split
    assert second.counts["lead_qa_by_split"] == preview["splits"]["sizes"] == {"train": 20, "dev": 4, "test": 6}
    diff = services.release_diff(old=first, new=second).as_dict()
    assert diff["counts"] == {"added": 10, "removed": 0, "changed": 0, "unchanged": 20}


def test_a_hand_edited_previous_assignment_keeps_only_the_groups_with_a_split_of_these_shares(
    project, annotator, coordinator
):
    import json

    for _ in range(4):
        authored_pair(project, annotator)
    first = services.release_build_now(project=project, user=coordinator, seed=21)
    path = root_of(first) / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    groups = manifest["split_assignment"]["groups"]
    keys = sorted(groups)
    groups[keys[0]], groups[keys[1]] = ["train"], "holdout"  # not a split name; not a split of these shares
    path.write_text(json.dumps(manifest, ensure_ascii=False, indent=2), encoding="utf-8")

    previous = previous_assignment(project, first.splits, 21)

    assert previous is not None
    assert dict(previous.items()) == {int(key): groups[key] for key in keys[2:]}
    assert set(dict(previous.items()).values()) <= {"train", "dev", "test"}
