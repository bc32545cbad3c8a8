"""Files that belong to rows: a published release's files, kept byte for byte with their sha256.

In the archive a release's files sit under `files/release-<id in the archive>/<name>`; on import they are
written under the new project's release folder and the release's `path` is pointed there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from exports.models import Release
from exports.paths import NAME_PATTERN, inside, release_folder

MEMBER = re.compile(rf"^files/release-(?P<pk>[0-9]{{1,19}})/(?P<name>{NAME_PATTERN})$")


def release_members(project: Any) -> Iterator[tuple[str, Path, str, dict[str, Any]]]:
    """(member name, file on disk, sha256 the release recorded, what it belongs to) of every published file."""
    releases = Release.objects.filter(project=project).exclude(path="").order_by("pk")
    for pk, path, files in releases.values_list("pk", "path", "files").iterator():
        for entry in files:
            member = f"files/release-{pk}/{entry['name']}"
            if not MEMBER.match(member):
                raise ValueError(f"Release {pk}: the file name {entry['name']!r} cannot be archived safely.")
            yield (
                member,
                inside(release_folder(path), entry["name"]),
                entry.get("sha256", ""),
                {
                    "model": Release._meta.label,
                    "pk": pk,
                    "name": entry["name"],
                },
            )


def release_path(slug: str, version: int) -> str:
    """Where the release files of `slug` v`version` live, relative to MEDIA_ROOT (as exports.services has it)."""
    return f"releases/{slug}/v{version}"
