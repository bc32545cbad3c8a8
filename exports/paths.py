"""Where a release's files may be: plain relative names, inside the release's own folder, checked on every use.

A file name comes from a Release row, and a Release row may come from an uploaded project archive: its
`files[].name` is outside input. A name is plain when each `/`-separated part is letters, digits, `.`, `_`
and `-`, not starting with a dot (so no `..`, no hidden files, no absolute path, no backslash or drive). On
top of the syntax, every write and every download resolves the path and refuses one that leaves the folder
(a symlink placed by something else included).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.conf import settings

from common.errors import InvalidInput

NAME_PATTERN = r"(?:[A-Za-z0-9_-][A-Za-z0-9._-]*/)*[A-Za-z0-9_-][A-Za-z0-9._-]*"
_NAME = re.compile(NAME_PATTERN)
MAX_NAME = 255
SHA256 = re.compile(r"[0-9a-f]{64}")


def is_release_file_name(name: object) -> bool:
    return isinstance(name, str) and len(name) <= MAX_NAME and _NAME.fullmatch(name) is not None


def releases_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "releases"


def inside(root: Path, name: str) -> Path:
    """`root / name`, refused unless `name` is a plain relative name whose resolved path stays inside `root`."""
    if not is_release_file_name(name):
        raise InvalidInput(f"{str(name)[:80]!r} is not a plain file name inside its release.", field="name")
    base = root.resolve()
    target = (base / name).resolve()
    if target == base or not target.is_relative_to(base):
        raise InvalidInput(f"{name[:80]!r} leads outside its release folder.", field="name")
    return base / name


def release_folder(path: str) -> Path:
    """The folder of a release's `path` (relative to MEDIA_ROOT), refused unless it is under releases/."""
    root = releases_root().resolve()
    folder = (Path(settings.MEDIA_ROOT) / path).resolve()
    if not path or folder == root or not folder.is_relative_to(root):
        raise InvalidInput(f"The release folder {path[:80]!r} is not under the releases folder.", field="path")
    return folder


def release_files_problems(files: Any) -> list[str]:
    """What is wrong with a Release row's `files` list ([{name, size, sha256}]); empty when fine."""
    if not isinstance(files, list):
        return ["files must be a list of {name, size, sha256}"]
    problems, seen = [], set()
    for position, entry in enumerate(files):
        if not isinstance(entry, dict):
            problems.append(f"files[{position}] must be an object")
            continue
        name, size, sha = entry.get("name"), entry.get("size"), entry.get("sha256")
        if not is_release_file_name(name):
            problems.append(f"files[{position}].name {str(name)[:80]!r} is not a plain file name inside its release")
        elif name in seen:
            problems.append(f"files[{position}].name {name!r} appears twice")
        else:
            seen.add(name)
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            problems.append(f"files[{position}].size must be a whole number of bytes")
        if not isinstance(sha, str) or not SHA256.fullmatch(sha):
            problems.append(f"files[{position}].sha256 must be 64 lowercase hex digits")
    return problems
