"""A trivia project's release: both languages side by side with local/global labels, per-language CSVs, card."""

from __future__ import annotations

import csv
import io
import json

import pytest

from exports.services import release_build_now, release_file_path
from multichoice.models import TriviaItem
from multichoice.services.files import trivia_import_jsonl
from multichoice.services.translation import translation_resolve
from tests.multichoice.conftest import item_values


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def translated(trivia, coordinator, flagged_item):
    """Two items translated (one imported with its translation, one resolved by the coordinator), one open."""
    records = [
        item_values(
            id="g1",
            subset="global",
            question="Who wrote Hamlet?",
            candidates=["Marlowe", "Shakespeare", "Kyd"],
            answer=1,
        )
        | {"target_question": "Nork idatzi zuen Hamlet?", "target_candidates": ["Marlowe", "Shakespeare", "Kyd"]},
        item_values(id="o1", question="Open?"),
    ]
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    trivia_import_jsonl(project=trivia, data=data, user=coordinator)
    translation_resolve(item=flagged_item, user=coordinator, resolution="accept")
    return trivia


def test_the_release_holds_translated_items_in_both_languages_with_subsets(translated, coordinator):
    release = release_build_now(project=translated, user=coordinator, seed=3)

    assert release.status == "done", release.error
    names = {entry["name"] for entry in release.files}
    assert {"trivia.jsonl", "trivia_eus.csv", "trivia_eng.csv", "README.md", "manifest.json"} <= names
    records = {r["id"]: r for r in read_jsonl(release_file_path(release, "trivia.jsonl"))}
    assert set(records) == {"g1", str(TriviaItem.objects.get(item__question="Where's Atxondo?").item_id)}
    hamlet = records["g1"]
    assert hamlet["subset"] == "global" and hamlet["original_answer"] == 1  # options are shuffled at release
    assert hamlet["eus"]["question"] == "Who wrote Hamlet?"
    assert hamlet["eng"]["question"] == "Nork idatzi zuen Hamlet?"
    assert hamlet["eng"]["candidates"][hamlet["answer"]] == "Shakespeare"
    assert release.counts["trivia"] == 2 and release.counts["trivia_not_released"] == 1
    assert release.counts["trivia_by_subset"] == {"local": 1, "global": 1}


def test_the_per_language_csvs_use_the_simple_layout_with_the_subset(translated, coordinator):
    release = release_build_now(project=translated, user=coordinator, seed=3)

    rows = list(csv.DictReader(io.StringIO(release_file_path(release, "trivia_eng.csv").read_text(encoding="utf-8"))))

    assert list(rows[0]) == [
        "id",
        "category",
        "difficulty",
        "question",
        "candidate0",
        "candidate1",
        "candidate2",
        "answer",
        "subset",
    ]
    assert [(r["question"], r["subset"], r["difficulty"]) for r in rows] == [
        ("Where is Atxondo?", "local", "1"),
        ("Nork idatzi zuen Hamlet?", "global", "1"),
    ]


def test_splits_come_from_the_seed(translated, coordinator):
    release = release_build_now(project=translated, user=coordinator, seed=3, splits={"train": 50, "test": 50})

    records = read_jsonl(release_file_path(release, "trivia.jsonl"))
    assert {r["split"] for r in records} <= {"train", "test"}
    again = release_build_now(project=translated, user=coordinator, seed=3, splits={"train": 50, "test": 50})
    assert read_jsonl(release_file_path(again, "trivia.jsonl")) == records


@pytest.fixture
def six_written_first(trivia, coordinator):
    """Six items imported with their translation, each with the correct option written first (index 0)."""
    records = [
        item_values(id=f"t{n}", question=f"Question {n}?", candidates=[f"right {n}", f"wrong {n}a", f"wrong {n}b"])
        | {"target_question": f"Galdera {n}?", "target_candidates": [f"zuzen {n}", f"oker {n}a", f"oker {n}b"]}
        for n in range(6)
    ]
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    trivia_import_jsonl(project=trivia, data=data, user=coordinator)
    return trivia


def test_six_items_at_70_10_20_are_split_4_1_1_as_previewed_and_load_by_the_cards_line(
    client, six_written_first, coordinator, tmp_path
):
    from tests.exports.loading import assert_release_loads, rows_by_split

    client.force_login(coordinator)
    preview = client.get(f"/api/projects/{six_written_first.slug}/releases/readiness/?seed=8").json()
    release = release_build_now(project=six_written_first, user=coordinator, seed=8)

    assert release.status == "done", release.error
    assert release.counts["trivia_by_split"] == {"train": 4, "dev": 1, "test": 1} == preview["splits"]["sizes"]
    loaded = assert_release_loads(release, tmp_path / "hf")
    assert rows_by_split(loaded["trivia"]) == {"train": 4, "dev": 1, "test": 1}


def test_options_are_shuffled_at_release_by_the_seed_and_the_card_shows_where_answers_are(
    six_written_first, coordinator
):
    release = release_build_now(project=six_written_first, user=coordinator, seed=8)

    records = read_jsonl(release_file_path(release, "trivia.jsonl"))
    answers = [record["answer"] for record in records]
    assert len(set(answers)) > 1, "every correct option is still first"
    for record in records:
        n = record["id"].removeprefix("t")
        assert record["original_answer"] == 0
        assert sorted(record["option_order"]) == [0, 1, 2]
        assert record["eus"]["candidates"][record["answer"]] == f"right {n}"
        assert record["eng"]["candidates"][record["answer"]] == f"zuzen {n}"  # both languages the same order
        assert record["option_order"][record["answer"]] == record["original_answer"]
    positions = release.counts["trivia_answer_positions"]
    assert sum(positions.values()) == 6 and positions == {str(k): answers.count(k) for k in sorted(set(answers))}
    card = release_file_path(release, "README.md").read_text(encoding="utf-8")
    assert "## Answer positions" in card
    assert ", ".join(f"option {k}: {n}" for k, n in positions.items()) in card
    rows = list(csv.DictReader(io.StringIO(release_file_path(release, "trivia_eng.csv").read_text(encoding="utf-8"))))
    assert [row[f"candidate{row['answer']}"] for row in rows] == [f"zuzen {r['id'][1:]}" for r in records]
    again = release_build_now(project=six_written_first, user=coordinator, seed=8)
    assert read_jsonl(release_file_path(again, "trivia.jsonl")) == records  # the same seed, the same order
