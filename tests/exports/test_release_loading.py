"""A Wikipedia QA release loads by the dataset card's own line whatever mix of values its splits hold, and the
split sizes the Releases page previews are the sizes the build writes and the card states."""

from __future__ import annotations

import pytest

from annotation.models import QAItem
from exports import services
from exports.models import Release
from exports.splits import release_split_plan, split_assign, split_sizes
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
    groups = dict.fromkeys(range(1, 66), 1)
    first = split_assign(groups, {"train": 70, "dev": 10, "test": 20}, 5)
    sizes = {name: list(first.values()).count(name) for name in ("train", "dev", "test")}
    assert sizes == {"train": 46, "dev": 6, "test": 13}  # not 59/0/6
    assert split_assign(groups, {"train": 70, "dev": 10, "test": 20}, 5) == first
    # A few more items move only a few of the others (the order is drawn per group from the seed).
    more = split_assign(dict.fromkeys(range(1, 71), 1), {"train": 70, "dev": 10, "test": 20}, 5)
    assert sum(first[key] != more[key] for key in first) <= 6


def _mixed_project(project, annotator):
    """Three pairs of two lead QAs; the first pair's items were verified found, with their sentences."""
    pairs = [authored_pair(project, annotator, standard_text=STANDARD_TEXT) for _ in range(3)]
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
    pairs = _mixed_project(project, annotator)

    def splits_of(seed: int) -> list[str | None]:
        plan = release_split_plan(project, statuses=["accepted"], shares=DEFAULT, seed=seed)
        return [plan.split_of(pair.pk) for pair in pairs]

    # A seed that puts the verified pair alone in its split (the other split holds no sentences at all).
    seed = next(seed for seed in range(500) if splits_of(seed).count(splits_of(seed)[0]) == 1)
    release = services.release_build_now(project=project, user=coordinator, seed=seed)
    assert release.status == Release.Status.DONE, release.error
    by_split = release.counts["lead_qa_by_split"]
    assert sorted(by_split.values()) == [0, 2, 4]  # one split empty: 3 pairs of 2 cannot fill three

    loaded = assert_release_loads(release, tmp_path / "hf")

    lead = loaded["lead_qa"]
    assert {split: lead[split].num_rows for split in lead} == {s: n for s, n in by_split.items() if n}
    found = [row for split in lead for row in lead[split] if row["verification"]["status"] == "found"]
    assert len(found) == 2 and found[0]["verification"]["sentences"][0]["text"] == "老板姓陈。"
    empty = next(split for split, n in by_split.items() if n == 0)
    assert not (root_of(release) / f"lead_qa/{empty}.jsonl").exists()  # no empty split file to trip a loader
    card = (root_of(release) / "README.md").read_text(encoding="utf-8")
    cells = " | ".join(str(by_split[name]) for name in ("train", "dev", "test"))
    assert f"| lead_qa | {cells} | 6 |" in card  # the card states the sizes of the files it describes


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
