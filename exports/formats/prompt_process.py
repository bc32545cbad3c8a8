"""The prompt files of a large release, written by a process of their own.

A build's Python work runs on one core at a time (the GIL), and the prompt files are
half of what a release writes. From `BuildState.prompt_process_from` items on, the
building process sends each chunk's prompt fields (leads and titles once per pair)
down a pipe to `python -m exports.formats.prompt_process`, which is a plain
`PromptsWriter` in a process of its own: the same code makes the same bytes, on the
other core. At the end it answers with the files' entries (size, sha256, lines).

Messages on its stdin are a 4-byte big-endian length and an orjson body: first
`{"root", "templates"}`, then `{"pairs": {pair: [standard_lead, local_lead,
standard_title, local_title]}, "items": [[id, kind, split, question,
answer_standard, answer_local, pair], ...]}` per chunk, then `{"end": true}`. A
pipe that closes without the end (the building worker died) writes no entries and
exits with an error; the build's temporary folder is removed by the next attempt.
"""

from __future__ import annotations

import contextlib
import operator
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

import orjson

from exports.formats.base import FileEntry, few_collections
from exports.formats.prompts import PromptsWriter
from exports.formats.writer import BuildState

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent
_LENGTH = struct.Struct(">I")


class PromptProcessFailed(RuntimeError):
    pass


class PromptProcess:
    """The building side: starts the process, sends chunks, collects the entries."""

    def __init__(self, process: subprocess.Popen, errors: IO[bytes]) -> None:
        self._process = process
        self._errors = errors  # a file, not a pipe: a process writing much to a full pipe would wait forever

    @classmethod
    def start(cls, root: Path, templates: dict[str, str]) -> PromptProcess:
        errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by finish or kill
        process = subprocess.Popen(
            [sys.executable, "-m", "exports.formats.prompt_process"],
            cwd=PROJECT_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        lane = cls(process, errors)
        lane._send({"root": str(root.resolve()), "templates": templates})
        return lane

    def send(self, records: list[dict[str, Any]]) -> None:
        pairs: dict[str, tuple[Any, ...]] = {}
        items = []
        for record in records:
            pair = record["pair_id"]
            if pair not in pairs:
                pairs[pair] = _pair_fields(record)
            items.append((*_item_fields(record), pair))
        self._send({"pairs": pairs, "items": items})

    def finish(self) -> list[FileEntry]:
        self._send({"end": True})
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.close()
        with self._process.stdout:
            answer = self._process.stdout.read()
        if self._process.wait() != 0:
            raise self._failed()
        self._errors.close()
        return [FileEntry(**entry) for entry in orjson.loads(answer)]

    def kill(self) -> None:
        self._process.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout, self._errors):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def _send(self, message: dict[str, Any]) -> None:
        body = orjson.dumps(message)
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(_LENGTH.pack(len(body)))
            self._process.stdin.write(body)
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            self._process.wait()
            raise self._failed() from None

    def _failed(self) -> PromptProcessFailed:
        self._errors.seek(0)
        said = self._errors.read().decode(errors="replace").strip().splitlines()
        return PromptProcessFailed(
            f"The prompt-writing process stopped (exit code {self._process.returncode}): "
            + (said[-1] if said else "it said nothing")
        )


PAIR_FIELDS = ("standard_lead", "local_lead", "standard_title", "local_title")
ITEM_FIELDS = ("id", "kind", "split", "question", "answer_standard", "answer_local")
_pair_fields = operator.itemgetter(*PAIR_FIELDS)
_item_fields = operator.itemgetter(*ITEM_FIELDS)


def _read(stream: IO[bytes]) -> dict[str, Any] | None:
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        return None
    (length,) = _LENGTH.unpack(header)
    body = stream.read(length)
    if len(body) < length:
        return None
    return orjson.loads(body)


def main() -> int:
    """The writing side: one PromptsWriter, fed from stdin."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    first = _read(stdin)
    if first is None:
        print("No first message: nothing to write.", file=sys.stderr)
        return 2
    writer = PromptsWriter()
    state = BuildState(release=None, project=None, splits={}, prompt_templates=first["templates"])
    writer.open(Path(first["root"]), state)
    while True:
        message = _read(stdin)
        if message is None:
            writer.abort()
            print("The building process went away before the end: nothing written.", file=sys.stderr)
            return 3
        if message.get("end"):
            break
        pairs = message["pairs"]
        records = []
        for *values, pair in message["items"]:
            record = dict(zip(ITEM_FIELDS, values, strict=True))
            record.update(zip(PAIR_FIELDS, pairs[pair], strict=True))
            records.append(record)
        writer.add_items(records)
    stdout.write(orjson.dumps([entry.__dict__ for entry in writer.finish()]))
    stdout.flush()
    return 0


if __name__ == "__main__":
    with few_collections():
        code = main()
    sys.exit(code)
