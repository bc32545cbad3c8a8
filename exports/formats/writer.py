"""The interface of a release writer and the state the writers share during one build."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exports.formats.base import FileEntry


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
