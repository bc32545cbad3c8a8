"""The files an import reads: a path or bytes with the name to report, and the formats told by name."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

FORMATS = ("auto", "jsonl", "csv", "wilova")
ProgressCallback = Callable[[int, int], None]  # (bytes read so far, records read so far)


@dataclass
class ImportSource:
    """A file to import: a path, or bytes already in memory, and the name to report it under."""

    name: str
    path: Path | None = None
    data: bytes | None = None

    @classmethod
    def of(cls, value: str | os.PathLike[str] | ImportSource) -> ImportSource:
        if isinstance(value, ImportSource):
            return value
        path = Path(value)
        return cls(name=path.name, path=path)

    def size(self) -> int:
        return len(self.data) if self.data is not None else self._path().stat().st_size

    def open(self) -> BinaryIO:
        return io.BytesIO(self.data) if self.data is not None else self._path().open("rb")

    def _path(self) -> Path:
        if self.path is None:
            raise ValueError(f"import source {self.name!r} has neither a path nor data")
        return self.path

    def read(self) -> bytes:
        with self.open() as stream:
            return stream.read()


def detect_format(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith(".jsonl") or lower.endswith(".ndjson"):
        return "jsonl"
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(".json"):
        return "wilova"
    return None
