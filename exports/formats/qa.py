"""`lead_qa.jsonl` and `document_qa.jsonl`: every item of a kind, plus one file per split for the dataset card."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from exports.formats import schema
from exports.formats.base import FileEntry, dumps
from exports.formats.writer import BuildState, ReleaseWriter, SplitFiles


class QAWriter(ReleaseWriter):
    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name

    def open(self, root: Path, state: BuildState) -> None:
        super().open(root, state)
        self.files = SplitFiles(root, self.name, state.splits)

    def add_items(self, records: list[dict[str, Any]]) -> None:
        self.files.write([(record["split"], dumps(record)) for record in records if record["kind"] == self.kind])

    def finish(self) -> list[FileEntry]:
        features = schema.DOCUMENT_QA if self.kind == "document" else schema.LEAD_QA
        return self.files.finish(self.state, features)

    def abort(self) -> None:
        self.files.abort()
