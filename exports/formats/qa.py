"""`lead_qa.jsonl` and `document_qa.jsonl`: every item of a kind, plus one file per split for the dataset card."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from exports.formats.base import FileEntry, HashedFile, dumps
from exports.formats.writer import BuildState, ReleaseWriter


class QAWriter(ReleaseWriter):
    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name

    def open(self, root: Path, state: BuildState) -> None:
        super().open(root, state)
        self.all = HashedFile(root, f"{self.name}.jsonl")
        self.by_split = {split: HashedFile(root, f"{self.name}/{split}.jsonl") for split in state.splits}

    def add_items(self, records: list[dict[str, Any]]) -> None:
        lines: list[bytes] = []
        split_lines: dict[str, list[bytes]] = {split: [] for split in self.by_split}
        for record in records:
            if record["kind"] != self.kind:
                continue
            line = dumps(record)
            lines.append(line)
            if record["split"] is not None:
                split_lines[record["split"]].append(line)
        self.all.write_lines(lines)
        for split, handle in self.by_split.items():
            handle.write_lines(split_lines[split])

    def finish(self) -> list[FileEntry]:
        entries = [self.all.close()] + [handle.close() for handle in self.by_split.values()]
        self.state.counts[self.name] = entries[0].lines
        self.state.counts[f"{self.name}_by_split"] = {
            split: entry.lines for split, entry in zip(self.by_split, entries[1:], strict=True)
        }
        return entries

    def abort(self) -> None:
        for handle in [self.all, *self.by_split.values()]:
            handle.abort()
