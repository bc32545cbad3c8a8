"""The interface of a release writer and the state the writers share during one build."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exports.formats.base import FileEntry, HashedFile


@dataclass(frozen=True)
class DataConfig:
    """A config of the dataset card: its name, its files by split and the schema every line of them has."""

    name: str
    files: list[tuple[str, str]]  # (split, path), only files with lines: `datasets` cannot load an empty split
    features: dict[str, Any]  # exports.formats.schema
    description: str = ""


@dataclass
class BuildState:
    """What the writers know about the release being built; `entries` fills up as writers finish."""

    release: Any  # exports.models.Release (not imported here, to keep formats free of the ORM)
    project: Any
    splits: dict[str, int]
    prompt_templates: dict[str, str]
    statistics: dict[str, Any] = field(default_factory=dict)
    agreement: dict[str, Any] | None = None
    agreement_note: str = ""
    counts: dict[str, Any] = field(default_factory=dict)
    entries: list[FileEntry] = field(default_factory=list)
    manifest: FileEntry | None = None  # the manifest's own entry (it lists `entries`, so it is kept apart)
    items_expected: int = 0  # how many items the build will pass to `add_items`, as counted before it starts
    # What was unfinished when the build read the project (exports.readiness, as a record): card and manifest say it.
    readiness: dict[str, Any] = field(default_factory=dict)
    # Every group's split (exports.splits.SplitPlan), made before the first item is written; None until then.
    plan: Any = None
    # The data configs the card declares, as their writers finish: (config name, [(split, path)], features).
    configs: list[DataConfig] = field(default_factory=list)


class ReleaseWriter:
    """One part of a release. The builder calls `open`, then `add_items`/`add_pairs` per chunk, then `finish`."""

    def open(self, root: Path, state: BuildState) -> None:
        self.root = root
        self.state = state

    def add_items(self, records: list[dict[str, Any]]) -> None:
        """QA records of one chunk (lead and document items together)."""

    def add_pairs(self, records: list[dict[str, Any]]) -> None:
        """Pair records of one chunk."""

    def finish(self) -> list[FileEntry]:
        return []

    def abort(self) -> None:
        """Close whatever is open; the builder removes the directory."""


# The split name under which the dataset card lists a data file holding every split's lines (`all` is taken:
# `datasets` reads it as the union of a config's splits).
FULL_SPLIT = "full"


class SplitFiles:
    """A data config's file: every line once, in `{name}.jsonl`; each line names its split (`split`).

    The card declares the file under the split `full` when the release has splits (a researcher keeps one
    split with `.filter`, the card shows how), under `train` when it has none. The counts name every split,
    with 0 for a split with no lines. Every kind's writers use it, so every kind counts, names and declares
    its files the same way.
    """

    def __init__(self, root: Path, name: str, splits: dict[str, int]) -> None:
        self.root = root
        self.name = name
        self.splits = list(splits)
        self.all = HashedFile(root, f"{name}.jsonl")
        self.by_split: dict[str, int] = dict.fromkeys(self.splits, 0)

    def write(self, lines: list[tuple[str | None, bytes]]) -> None:
        """(split, line) pairs of one chunk, in order."""
        self.all.write_lines([line for _, line in lines])
        for split, _ in lines:
            if split is not None:
                self.by_split[split] = self.by_split.get(split, 0) + 1

    def finish(self, state: BuildState, features: dict[str, Any], description: str = "") -> list[FileEntry]:
        """Close the file; count the lines (`counts[name]`, `counts[name_by_split]` with every split named) and
        declare the config for the card."""
        entry = self.all.close()
        state.counts[self.name] = entry.lines
        state.counts[f"{self.name}_by_split"] = {split: self.by_split.get(split, 0) for split in self.splits}
        if entry.lines:
            files = [(FULL_SPLIT if self.splits else "train", entry.name)]
            state.configs.append(DataConfig(self.name, files, features, description))
        return [entry]

    def abort(self) -> None:
        self.all.abort()
