"""Checking an uploaded project archive before anything is unpacked or written.

In order: the file's size; that it is a zip; every member's name (no absolute paths, no `..`, no backslashes
or drive letters, no links, only the names an archive has); the declared unpacked size in all and each
member's compression ratio (zip bombs); encryption and compression methods; the manifest (format, schema
version, a size and sha256 for every member and no member it does not list). `archive_verify` then reads
every member once and compares its sha256 and size with the manifest, before the import writes a row. Every
refusal says which file and which member.
"""

from __future__ import annotations

import hashlib
import json
import re
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings

from archive.files import MEMBER as FILE_MEMBER
from archive.rows import FORMAT, SCHEMA_VERSION
from common.errors import InvalidInput

DATA_MEMBER = re.compile(r"^data/[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\.jsonl$")
MANIFEST = "manifest.json"
MANIFEST_MAX_BYTES = 10 * 1024 * 1024
SMALL = 1 << 20  # members smaller than this unpacked are not held to the ratio
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _refuse(name: str, message: str, field: str = "file") -> InvalidInput:
    return InvalidInput(f"{name}: {message}", field=field)


def member_name_problem(member: str) -> str | None:
    """Why a member name is refused, or None. Checked before any member is read."""
    if not member or "\x00" in member or any(ord(char) < 32 for char in member):
        return "an empty name or one with control characters"
    if member.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", member):
        return "an absolute path"
    if "\\" in member:
        return "a backslash in its name"
    if any(part in ("..", ".", "") for part in member.split("/")):
        return "a path that leaves the archive or is not normalised (.., . or //)"
    if (
        member != MANIFEST
        and member != "users.jsonl"
        and not DATA_MEMBER.match(member)
        and not FILE_MEMBER.match(member)
    ):
        return "a name a project archive does not have (manifest.json, users.jsonl, data/<model>.jsonl, files/…)"
    return None


def archive_check(path: Path, *, name: str) -> dict[str, Any]:
    """Check the file without unpacking it; returns the manifest. Raises InvalidInput saying what and where."""
    size = path.stat().st_size
    limit = settings.ARCHIVE_MAX_BYTES
    if size > limit:
        raise _refuse(
            name, f"the file is {size:,} bytes, more than the archive limit of {limit:,} bytes (ARCHIVE_MAX_BYTES)."
        )
    if not zipfile.is_zipfile(path):
        raise _refuse(name, "not a zip file; a project archive is the .zip an export produced.")
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            _check_members(name, infos)
            return _check_manifest(name, archive, {info.filename: info for info in infos})
    except zipfile.BadZipFile as error:
        raise _refuse(name, f"the zip is damaged ({error}).") from None


def _check_members(name: str, infos: list[zipfile.ZipInfo]) -> None:
    if len(infos) > settings.ARCHIVE_MAX_MEMBERS:
        raise _refuse(name, f"{len(infos):,} members, more than the limit of {settings.ARCHIVE_MAX_MEMBERS:,}.")
    seen: set[str] = set()
    unpacked = 0
    for info in infos:
        member = info.filename
        problem = member_name_problem(member)
        if problem:
            raise _refuse(name, f"member {member!r} has {problem}; refused before unpacking.")
        if member in seen:
            raise _refuse(name, f"member {member!r} appears twice.")
        seen.add(member)
        if stat.S_ISLNK(info.external_attr >> 16) or info.is_dir():
            raise _refuse(name, f"member {member!r} is a link or a folder; an archive holds only files.")
        if info.flag_bits & 0x1:
            raise _refuse(name, f"member {member!r} is encrypted.")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _refuse(name, f"member {member!r} uses compression method {info.compress_type}; use deflate.")
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > SMALL and ratio > settings.ARCHIVE_MAX_RATIO:
            raise _refuse(
                name,
                f"member {member!r} unpacks to {info.file_size:,} bytes from {info.compress_size:,} "
                f"(ratio {ratio:,.0f}, limit {settings.ARCHIVE_MAX_RATIO}): refused as a zip bomb.",
            )
        unpacked += info.file_size
    limit = settings.ARCHIVE_MAX_UNPACKED_BYTES
    if unpacked > limit:
        raise _refuse(
            name,
            f"the members unpack to {unpacked:,} bytes, more than the limit of {limit:,} (ARCHIVE_MAX_UNPACKED_BYTES).",
        )


def _check_manifest(name: str, archive: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo]) -> dict[str, Any]:
    info = infos.get(MANIFEST)
    if info is None:
        raise _refuse(name, "no manifest.json: not a localqa project archive.")
    if info.file_size > MANIFEST_MAX_BYTES:
        raise _refuse(name, f"manifest.json is {info.file_size:,} bytes, more than {MANIFEST_MAX_BYTES:,}.")
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except (ValueError, UnicodeDecodeError) as error:
        raise _refuse(name, f"manifest.json is not valid JSON ({error}).") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _refuse(name, f"manifest.json: 'format' must be {FORMAT!r}; this is not a localqa project archive.")
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION:
        raise _refuse(
            name,
            f"manifest.json: schema_version {version!r} is not one this server reads ({SCHEMA_VERSION}); "
            "import it on a localqa of the same version, or upgrade this one.",
        )
    members = manifest.get("members")
    models = manifest.get("models")
    project = manifest.get("project")
    if not isinstance(members, dict) or not isinstance(models, list) or not isinstance(project, dict):
        raise _refuse(name, "manifest.json: 'members', 'models' and 'project' are missing or of the wrong type.")
    listed = set(members)
    present = set(infos) - {MANIFEST}
    if present - listed:
        raise _refuse(name, f"member {sorted(present - listed)[0]!r} is not listed in manifest.json.")
    if listed - present:
        raise _refuse(name, f"manifest.json lists {sorted(listed - present)[0]!r}, which the zip does not contain.")
    for member, entry in members.items():
        if not isinstance(entry, dict) or not SHA256.match(str(entry.get("sha256", ""))):
            raise _refuse(name, f"manifest.json: member {member!r} has no valid sha256.")
        if entry.get("size") != infos[member].file_size:
            raise _refuse(
                name,
                f"member {member!r} is {infos[member].file_size:,} bytes; manifest.json says {entry.get('size')!r}.",
            )
    for position, entry in enumerate(models):
        if not isinstance(entry, dict) or entry.get("member") not in members or not isinstance(entry.get("model"), str):
            raise _refuse(name, f"manifest.json: models[{position}] does not name a model and one of the members.")
        for count in ("rows", "max_pk"):
            value = entry.get(count)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise _refuse(name, f"manifest.json: models[{position}].{count} must be a whole number, not {value!r}.")
    if "users.jsonl" not in members:
        raise _refuse(name, "no users.jsonl: the archive does not say who did the work.")
    return manifest


def archive_verify(
    path: Path, manifest: dict[str, Any], *, name: str, progress: Callable[[int, int], None] | None = None
) -> None:
    """Read every member once and compare its sha256 with the manifest (sizes are bounded by the checks above)."""
    total = sum(entry["size"] for entry in manifest["members"].values())
    done = 0
    with zipfile.ZipFile(path) as archive:
        for member, entry in manifest["members"].items():
            digest = hashlib.sha256()
            try:
                with archive.open(member) as data:
                    while block := data.read(1 << 16):
                        digest.update(block)
                        done += len(block)
                        if progress:
                            progress(done, total)
            except (zipfile.BadZipFile, OSError, EOFError) as error:
                raise _refuse(name, f"member {member!r} cannot be read ({error}).") from None
            if digest.hexdigest() != entry["sha256"]:
                raise _refuse(
                    name, f"member {member!r} does not match its sha256 in manifest.json: damaged or altered."
                )
