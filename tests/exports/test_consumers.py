"""Consumers are the test: every JSONL file of a release loads in `datasets` and pandas as it is,
and every evidence span is found by slicing its document with its code-point offsets."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

from exports import services
from exports.models import Release
from tests.exports.conftest import authored_pair

# Offline, with a cache of our own: set before `datasets` is imported, which reads them once.
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="hf-home-"))
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

datasets = pytest.importorskip("datasets")
pd = pytest.importorskip("pandas")


@pytest.fixture
def release(released_project, coordinator) -> Release:
    release = services.release_build_now(project=released_project, user=coordinator, seed=11)
    assert release.status == Release.Status.DONE, release.error
    return release


def root_of(release: Release) -> Path:
    return Path(settings.MEDIA_ROOT) / release.path


def jsonl_files(release: Release) -> list[Path]:
    return [root_of(release) / entry["name"] for entry in release.files if entry["name"].endswith(".jsonl")]


def test_every_jsonl_file_loads_in_datasets_and_pandas_with_one_row_per_line(release, tmp_path):
    loaded = 0
    for path in jsonl_files(release):
        lines = path.read_text(encoding="utf-8").splitlines()
        if not lines:
            assert path.stat().st_size == 0
            continue
        dataset = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
        frame = pd.read_json(path, lines=True, dtype=False)
        assert dataset.num_rows == len(frame) == len(lines), path.name
        assert list(frame.columns) == list(json.loads(lines[0])), path.name
        assert dataset.column_names == list(frame.columns), path.name
        loaded += 1
    assert loaded == 3  # lead, document, pairs: each item once, prompts made from the templates


def test_every_evidence_span_is_the_slice_of_its_document_at_its_offsets(release, tmp_path):
    checked = 0
    for name in ("lead_qa.jsonl", "document_qa.jsonl"):
        path = root_of(release) / name
        for record in datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path)):
            assert record["evidence"], record["id"]
            for span in record["evidence"]:
                document = record[span["document"]]
                assert document[span["start"] : span["end"]] == span["text"], record["id"]
                checked += 1
        for record in pd.read_json(path, lines=True, dtype=False).to_dict("records"):
            for span in record["evidence"]:
                assert record[span["document"]][span["start"] : span["end"]] == span["text"]
    assert checked == 7
    # The lead begins with a character outside the Basic Multilingual Plane: UTF-16 offsets would be off by one.
    first = json.loads((root_of(release) / "lead_qa.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert ord(first["local_lead"][0]) > 0xFFFF


def test_the_dataset_card_configs_load_the_release_folder_by_config_and_split(
    project, annotator, coordinator, tmp_path
):
    for _ in range(12):
        authored_pair(project, annotator)
    release = services.release_build_now(project=project, user=coordinator, seed=3)
    by_split = release.counts["lead_qa_by_split"]
    assert sum(by_split.values()) == 24

    # As the card's loading lines say: the config's one file, then a split by the `split` each line names.
    lead_qa = datasets.load_dataset(str(root_of(release)), "lead_qa", split="full", cache_dir=str(tmp_path / "hf"))

    assert lead_qa.num_rows == 24
    by_name = {split: lead_qa.filter(lambda line, s=split: line["split"] == s) for split in by_split}
    assert {split: rows.num_rows for split, rows in by_name.items()} == by_split
    pairs_per_split = {split: set(rows["pair_id"]) for split, rows in by_name.items()}
    splits = list(pairs_per_split)
    for index, split in enumerate(splits):
        for other in splits[index + 1 :]:
            assert not pairs_per_split[split] & pairs_per_split[other], "a page pair leaked across splits"
    # The prompts as the card's prompt lines make them: the manifest's template over each line.
    manifest = json.loads((root_of(release) / "manifest.json").read_text(encoding="utf-8"))
    templates = manifest["release"]["prompt_templates"]
    prompts = lead_qa.map(lambda line: {"prompt": templates["local_lead"].format(**line)})
    assert prompts.num_rows == 24
    assert all("<answer></answer>" in prompt for prompt in prompts["prompt"])
    assert all(line["local_lead"] in prompt for line, prompt in zip(lead_qa, prompts["prompt"], strict=True))


def test_the_dataset_card_header_parses_as_hugging_face_card_metadata(release):
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(root_of(release) / "README.md")

    data = card.data.to_dict()
    assert data["license"] == "cc-by-sa-4.0"
    assert data["language"] == ["yue", "cmn"]
    assert data["task_categories"] == ["question-answering"]
    configs = {config["config_name"]: config for config in data["configs"]}
    assert configs["lead_qa"]["default"] is True
    listed = {entry["path"] for config in configs.values() for entry in config["data_files"]}
    nonempty = {entry["name"] for entry in release.files if entry.get("lines")}
    assert listed <= nonempty  # every listed file exists and has data
    assert "| Page pairs collected | 6 |" in card.text
    assert "| — excluded as translated | 1 |" in card.text


def test_the_dataset_cards_own_python_lines_load_the_release_and_make_its_prompts(
    project, annotator, coordinator, tmp_path
):
    for _ in range(6):
        authored_pair(project, annotator)
    release = services.release_build_now(project=project, user=coordinator, seed=3)
    card = (root_of(release) / "README.md").read_text(encoding="utf-8")
    blocks = [block.split("```", 1)[0] for block in card.split("```python\n")[1:]]
    assert len(blocks) == 2  # loading, then prompts
    code = "\n".join(blocks).replace("path/to/this/release", str(root_of(release)))
    cache = str(tmp_path / "hf")  # offline, in a cache of the test's own
    code = code.replace(
        "from datasets import load_dataset\n",
        "from functools import partial\nfrom datasets import load_dataset\n"
        f"load_dataset = partial(load_dataset, cache_dir={cache!r})\n",
    )
    scope: dict = {}

    exec(code, scope)  # noqa: S102 - the card's own lines, on the release just built

    assert scope["lead_qa"].num_rows == len(scope["frame"]) == release.counts["lead_qa"]
    assert scope["train"].num_rows == release.counts["lead_qa_by_split"]["train"]
    first = scope["lead_qa"][0]
    assert first["prompt"].count(first["local_lead"]) == 1 and first["question"] in first["prompt"]
