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


class SplitFiles:
    """A data config's files: every line in `{name}.jsonl`, and with splits each line in `{name}/{split}.jsonl`.

    A split file is written only when a line goes to it: an empty split has no file (the card names it with
    its size 0), since `datasets` refuses a split with no data. Every kind's writers use it, so every kind
    counts, names and declares its files the same way.
    """

    def __init__(self, root: Path, name: str, splits: dict[str, int]) -> None:
        self.root = root
        self.name = name
        self.splits = list(splits)
        self.all = HashedFile(root, f"{name}.jsonl")
        self.by_split: dict[str, HashedFile] = {}

    def write(self, lines: list[tuple[str | None, bytes]]) -> None:
        """(split, line) pairs of one chunk, in order."""
        self.all.write_lines([line for _, line in lines])
        grouped: dict[str, list[bytes]] = {}
        for split, line in lines:
            if split is not None:
                grouped.setdefault(split, []).append(line)
        for split, split_lines in grouped.items():
            handle = self.by_split.get(split)
            if handle is None:
                handle = self.by_split[split] = HashedFile(self.root, f"{self.name}/{split}.jsonl")
            handle.write_lines(split_lines)

    def finish(self, state: BuildState, features: dict[str, Any], description: str = "") -> list[FileEntry]:
        """Close the files; count the lines (`counts[name]`, `counts[name_by_split]` with every split named) and
        declare the config for the card."""
        entries = [self.all.close()]
        by_split = {split: self.by_split[split].close() for split in self.splits if split in self.by_split}
        entries += by_split.values()
        state.counts[self.name] = entries[0].lines
        state.counts[f"{self.name}_by_split"] = {
            split: (by_split[split].lines if split in by_split else 0) for split in self.splits
        }
        if self.splits:
            files = [(split, entry.name) for split, entry in by_split.items()]
        else:
            files = [("train", entries[0].name)] if entries[0].lines else []
        if files:
            state.configs.append(DataConfig(self.name, files, features, description))
        return entries

    def abort(self) -> None:
        for handle in [self.all, *self.by_split.values()]:
            handle.abort()
