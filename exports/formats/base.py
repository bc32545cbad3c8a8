"""What every release writer shares: files that hash themselves as they are written."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import gc
import hashlib
import mmap
import os
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson


@dataclass(frozen=True)
class FileEntry:
    name: str  # relative to the release directory, with forward slashes
    size: int
    sha256: str
    lines: int | None = None

    def as_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "size": self.size, "sha256": self.sha256}
        if self.lines is not None:
            entry["lines"] = self.lines
        return entry


def dumps(record: Any) -> bytes:
    """One JSON line as UTF-8 bytes: characters as they are (not \\u escapes), no spaces, no newline inside.

    orjson writes the same bytes as `json.dumps(record, ensure_ascii=False, separators=(",", ":"))`, five times faster.
    """
    return orjson.dumps(record)


def json_escaped(text: str) -> bytes:
    """`text` as a JSON string's inside: escaped as `dumps` escapes it, without the quotes."""
    return orjson.dumps(text)[1:-1]


class EscapedText:
    """JSON-escaped strings (no quotes), remembered until `clear`: a release repeats each lead in many lines.

    JSON escapes character by character, so the escaping of a concatenation is the
    concatenation of the escapings: prompts are put together from escaped pieces, bytes
    identical to encoding the whole string. Writers clear it after each chunk, so it
    holds one chunk's texts at most.
    """

    def __init__(self) -> None:
        self._escaped: dict[str, bytes] = {}

    def __call__(self, text: str) -> bytes:
        escaped = self._escaped.get(text)
        if escaped is None:
            escaped = self._escaped[text] = json_escaped(text)
        return escaped

    def clear(self) -> None:
        self._escaped.clear()


class _WriteBehind:
    """One background thread that writes and hashes blocks, in order, while the build encodes the next chunk.

    `file.write` and `sha256.update` release the GIL on large blocks, so the disk
    and the hashing overlap the encoding. The queue is bounded: memory holds at
    most a few blocks, however large the release.
    """

    def __init__(self) -> None:
        self._queue: queue.Queue[Callable[[], None]] = queue.Queue(maxsize=8)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def submit(self, task: Callable[[], None]) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="release-writer", daemon=True)
                self._thread.start()
        self._queue.put(task)

    def _run(self) -> None:
        while True:
            task = self._queue.get()
            try:
                task()
            finally:
                self._queue.task_done()


_write_behind = _WriteBehind()


@contextlib.contextmanager
def few_collections() -> Iterator[None]:
    """Fewer garbage collections while a build makes millions of short-lived objects (records, lines).

    They hold no cycles, so reference counting frees them; but each 700 new containers
    start a collection, and every tenth of those scans all the objects of the loaded
    apps (0.75 s of a 100,000-item build). The objects alive before are frozen out of
    the scans and young ones are collected every 50,000; both are restored afterwards.
    """
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, threshold[1], threshold[2])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


class _Sink(Protocol):
    def write(self, data: bytes, /) -> int: ...
    def close(self) -> None: ...


ALIGNMENT = 4096  # O_DIRECT wants addresses, lengths and offsets aligned to the device's block; 4 KiB covers them
STAGING_LIMIT = 8 << 20
_staging = threading.local()


def _staging_buffer(size: int) -> mmap.mmap:
    """This thread's page-aligned buffer (anonymous maps are) of at least `size` bytes, kept for the next write."""
    buffer: mmap.mmap | None = getattr(_staging, "buffer", None)
    if buffer is None or len(buffer) < size:
        if buffer is not None:
            buffer.close()
        buffer = _staging.buffer = mmap.mmap(-1, max(size, 1 << 20))
    return buffer


class DirectFile:
    """A file written around the page cache (`O_DIRECT`).

    A release is written once and read rarely, and copying hundreds of megabytes into
    the page cache costs more CPU than making them (on a VM whose memory is handed
    back to the host when free, each new page of cache is a fault); direct writes cost
    almost none. Each `write` copies what it can into the thread's aligned staging
    buffer and hands it to the disk in one system call (every call gives up the GIL and
    waits to get it back, so calls are few); less than a block waits for the next
    write. That last tail is written through the page cache at `close`, as is
    everything after a filesystem refuses direct writes.
    """

    def __init__(self, fd: int, staging_limit: int = STAGING_LIMIT) -> None:
        self._fd = fd
        self._limit = max(staging_limit - staging_limit % ALIGNMENT, ALIGNMENT)
        self._pending = b""  # less than ALIGNMENT bytes, written with the next ones
        self._direct = True

    def write(self, data: bytes) -> int:
        source = memoryview(data)
        offset = 0
        while self._direct and len(self._pending) + len(source) - offset >= ALIGNMENT:
            pending = self._pending
            size = min(self._limit, len(pending) + len(source) - offset)
            size -= size % ALIGNMENT
            used = size - len(pending)
            buffer = _staging_buffer(size)
            buffer[: len(pending)] = pending
            buffer[len(pending) : size] = source[offset : offset + used]
            self._pending = b""
            offset += used
            self._write_staged(buffer, size)
        if self._direct:
            self._pending += source[offset:]
        else:
            self._write_all(source[offset:])
        return len(data)

    def _write_staged(self, buffer: mmap.mmap, size: int) -> None:
        """Write the buffer's first `size` bytes. No view of it outlives the call, even when it raises."""
        with memoryview(buffer) as staged:
            start = 0
            while start < size:
                try:
                    start += os.write(self._fd, staged[start:size])
                except OSError as error:
                    if error.errno != errno.EINVAL or not self._direct:
                        raise
                    self._through_the_cache()  # this filesystem takes no direct writes (or not this one)
                    continue
                if start < size and self._direct:
                    self._through_the_cache()  # a short direct write leaves the rest unaligned

    def _write_all(self, data: memoryview | bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def _through_the_cache(self) -> None:
        fcntl.fcntl(self._fd, fcntl.F_SETFL, fcntl.fcntl(self._fd, fcntl.F_GETFL) & ~os.O_DIRECT)
        self._direct = False

    def close(self) -> None:
        if self._fd < 0:
            return
        try:
            if self._pending:
                if self._direct:
                    self._through_the_cache()
                self._write_all(self._pending)
                self._pending = b""
        finally:
            os.close(self._fd)
            self._fd = -1


def open_for_writing(path: Path) -> _Sink:
    """A new file at `path`, written directly to disk where the platform and filesystem allow it."""
    direct = getattr(os, "O_DIRECT", 0)
    if direct:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | direct, 0o644)
        except OSError as error:
            if error.errno != errno.EINVAL:  # EINVAL: the filesystem (tmpfs, say) has no direct I/O
                raise
        else:
            return DirectFile(fd)
    file: BinaryIO = path.open("wb")
    return file


class HashedFile:
    """A file written in blocks, with its size and sha256 computed on the way (no second read).

    Blocks are written by a background thread; `close` waits for them and raises
    the first error (a full disk) the thread met.
    """

    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open_for_writing(path)
        self._sha = hashlib.sha256()
        self._error: BaseException | None = None
        self.size = 0
        self.lines = 0

    def write_lines(self, lines: list[bytes]) -> None:
        if not lines:
            return
        self.lines += len(lines)
        self.write(b"\n".join(lines))  # two writes rather than a second copy of the block
        self.write(b"\n")

    def write(self, data: bytes) -> None:
        if self._error is not None:
            raise self._error
        self.size += len(data)
        _write_behind.submit(lambda: self._write(data))

    def _write(self, data: bytes) -> None:
        if self._error is not None:
            return
        try:
            self._file.write(data)
            self._sha.update(data)
        except BaseException as error:  # handed to the building thread by close()
            self._error = error

    def _finish(self) -> None:
        done = threading.Event()

        def close() -> None:
            try:
                self._file.close()
            except BaseException as error:
                self._error = self._error or error
            finally:
                done.set()

        _write_behind.submit(close)
        done.wait()

    def close(self, *, count_lines: bool = True) -> FileEntry:
        self._finish()
        if self._error is not None:
            raise self._error
        return FileEntry(self.name, self.size, self._sha.hexdigest(), self.lines if count_lines else None)

    def abort(self) -> None:
        self._finish()


def write_file(root: Path, name: str, data: bytes) -> FileEntry:
    handle = HashedFile(root, name)
    handle.write(data)
    return handle.close(count_lines=False)
