"""What a researcher does with a published release, for every kind's tests: load each config the dataset card
declares with `datasets` (by config and split, as the card's own loading line says), read each JSONL file with
pandas, and check every line against the schema the card declares."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings

from exports.formats.schema import schema_problems
from exports.models import Release

# Offline, with a cache of our own: set before `datasets` is imported, which reads them once.
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="hf-home-"))
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"


def root_of(release: Release) -> Path:
    return Path(settings.MEDIA_ROOT) / release.path


def card_header(release: Release) -> dict[str, Any]:
    text = (root_of(release) / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))


def _schema(features: list[dict[str, Any]]) -> dict[str, Any]:
    """The card's `features` (datasets' YAML form) back in exports.formats.schema's form."""
    out: dict[str, Any] = {}
    for feature in features:
        if "dtype" in feature:
            out[feature["name"]] = feature["dtype"]
        elif "struct" in feature:
            out[feature["name"]] = _schema(feature["struct"])
        else:
            inner = feature["list"]
            out[feature["name"]] = [inner if isinstance(inner, str) else _schema(inner)]
    return out


def declared_schemas(release: Release) -> dict[str, dict[str, Any]]:
    header = card_header(release)
    return {info["config_name"]: _schema(info["features"]) for info in header.get("dataset_info", [])}


def assert_release_loads(release: Release, cache: Path) -> dict[str, Any]:
    """Every config of the card loads with `datasets` (row counts as in the files), every JSONL file reads in
    pandas, and every line has its config's declared schema; returns the loaded `DatasetDict`s by config."""
    import datasets
    import pandas as pd

    root = root_of(release)
    header = card_header(release)
    schemas = declared_schemas(release)
    configs = {config["config_name"]: config for config in header.get("configs", [])}
    assert configs, "the card declares no config"
    assert set(schemas) == set(configs), "every config declares its schema"
    loaded = {}
    for name, config in configs.items():
        dataset = datasets.load_dataset(str(root), name, cache_dir=str(cache))
        for entry in config["data_files"]:
            lines = (root / entry["path"]).read_text(encoding="utf-8").splitlines()
            assert lines, f"{entry['path']} is listed but empty"
            assert dataset[entry["split"]].num_rows == len(lines), entry["path"]
            for number, line in enumerate(lines, 1):
                problems = schema_problems(json.loads(line), schemas[name])
                assert not problems, f"{entry['path']} line {number}: {problems[:3]}"
        loaded[name] = dataset
    for entry in release.files:
        if entry["name"].endswith(".jsonl"):
            frame = pd.read_json(root / entry["name"], lines=True, dtype=False)
            assert len(frame) == entry["lines"], entry["name"]
    return loaded


def prompt_lines(release: Release, scenario: str) -> list[dict[str, Any]]:
    """Every item's line with its prompt under `scenario`, made as the dataset card says: the manifest's template
    filled from the line (`template.format(**line)`)."""
    manifest = json.loads((root_of(release) / "manifest.json").read_text(encoding="utf-8"))
    template = manifest["release"]["prompt_templates"][scenario]
    lines = []
    for name in ("lead_qa.jsonl", "document_qa.jsonl"):
        path = root_of(release) / name
        if path.exists():
            for record in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
                lines.append({**record, "scenario": scenario, "prompt": template.format(**record)})
    return lines


def rows_by_split(loaded: Any) -> dict[str, int]:
    """Rows per split of a loaded config (a `DatasetDict`), by the `split` each line names: a config's file holds
    every split once (the card lists it under `full`)."""
    counts: dict[str, int] = {}
    for name in loaded:
        for split in loaded[name]["split"]:
            counts[split] = counts.get(split, 0) + 1
    return counts
