"""`page_pairs.jsonl`: every pair the project considered, with its screening decision and exclusion reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from exports.formats import schema
from exports.formats.base import FileEntry, HashedFile, dumps
from exports.formats.writer import BuildState, DataConfig, ReleaseWriter


class PagePairsWriter(ReleaseWriter):
    name = "page_pairs.jsonl"

    def open(self, root: Path, state: BuildState) -> None:
        super().open(root, state)
        self.file = HashedFile(root, self.name)

    def add_pairs(self, records: list[dict[str, Any]]) -> None:
        self.file.write_lines([dumps(record) for record in records])

    def finish(self) -> list[FileEntry]:
        entry = self.file.close()
        self.state.counts["page_pairs"] = entry.lines
        if entry.lines:
            self.state.configs.append(DataConfig("page_pairs", [("train", self.name)], schema.PAGE_PAIRS))
        return [entry]

    def abort(self) -> None:
        self.file.abort()
