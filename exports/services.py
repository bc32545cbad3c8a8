"""Business rules of releases: requesting, building, publishing, comparing and serving them.

Views, the API, the `release_build` command and the Celery task all call these
functions. A build writes into a temporary directory under
MEDIA_ROOT/releases/<slug>/.building/ and is moved into place (one rename) in
the same transaction that marks the row published; a build that dies leaves no
published files, and its row is marked failed once its heartbeat goes stale.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from annotation.models import Project, QAItem
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState
from common.jobs import JobLost, JobRun, job_claim, job_enqueue, job_expire_stale, pause_between_steps
from common.snapshot import read_snapshot
from exports import formats, paths
from exports.formats import card
from exports.formats.base import few_collections
from exports.formats.prompts import template_problems
from exports.models import DEFAULT_SPLITS, ExportSettings, Release, project_prompt_templates
from exports.readiness import Readiness, release_readiness
from exports.records import (
    in_background,
    iter_item_chunks,
    iter_pair_records,
    read_ahead,
    release_items,
)
from exports.splits import SPLIT_NAMES, release_split_plan
from exports.statistics import release_agreement, release_statistics

log = logging.getLogger(__name__)

LICENSE_PATTERN = re.compile(r"^[a-z0-9][a-z0-9.+-]{1,63}$")
STALE_ERROR = (
    "The build stopped without finishing (the worker was lost: killed, restarted or out of memory). "
    "No files were published. Build again."
)


class BuildLost(Exception):
    """Another run took the build over (this one was presumed dead); this run stops and publishes nothing."""


# Settings and paths


def releases_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "releases"


def release_dir(release: Release) -> Path:
    return releases_root() / release.project.slug / f"v{release.version}"


def export_settings_get(*, project: Project) -> ExportSettings:
    settings_row, _ = ExportSettings.objects.get_or_create(
        project=project, defaults={"prompt_templates": project_prompt_templates(project)}
    )
    return settings_row


def export_settings_update(
    *,
    project: Project,
    prompt_templates: dict[str, str] | None = None,
    license: str | None = None,
    version: int | None = None,
    actor: User | None = None,
) -> ExportSettings:
    """Change the prompt templates or the default license; with `version`, refuse if someone saved in between."""
    current = export_settings_get(project=project)
    changes: dict[str, Any] = {}
    if prompt_templates is not None:
        templates = {**current.prompt_templates, **prompt_templates}
        problems = template_problems(templates)
        if problems:
            first = next(iter(problems))
            raise InvalidInput(f"{first}: {problems[first][0]}", field=first, details=problems)
        changes["prompt_templates"] = templates
    if license is not None:
        changes["license"] = _check_license(license)
    query = ExportSettings.objects.filter(pk=current.pk)
    if version is not None:
        query = query.filter(version=version)
    before = {"prompt_templates": current.prompt_templates, "license": current.license}
    with transaction.atomic():
        if changes and not query.update(**changes, version=F("version") + 1, updated_at=timezone.now()):
            raise InvalidState("The export settings were changed by someone else; reload them.", field="version")
        diff = audit.changes(before, {**before, **changes})
        if diff["after"]:
            audit.record(
                actor,
                Action.PROJECT_EXPORT_SETTINGS,
                current,
                project=project,
                label=str(project),
                before=diff["before"],
                after=diff["after"],
            )
    current.refresh_from_db()
    return current


def _check_license(value: str) -> str:
    value = value.strip().lower()
    if not LICENSE_PATTERN.match(value):
        raise InvalidInput(
            "license: use a license identifier such as cc-by-sa-4.0, cc-by-4.0 or other.", field="license"
        )
    return value


def _check_splits(splits: dict[str, int] | None) -> dict[str, int]:
    if splits is None:
        return dict(DEFAULT_SPLITS)
    if not splits:
        return {}
    unknown = sorted(set(splits) - set(SPLIT_NAMES))
    if unknown:
        raise InvalidInput(
            f"splits.{unknown[0]}: unknown split; use train, dev and test.", field=f"splits.{unknown[0]}"
        )
    for name, share in splits.items():
        if not isinstance(share, int) or isinstance(share, bool) or not 0 <= share <= 100:
            raise InvalidInput(f"splits.{name}: must be a whole percentage from 0 to 100.", field=f"splits.{name}")
    if sum(splits.values()) != 100:
        raise InvalidInput(
            f"splits: the shares must add up to 100, not {sum(splits.values())}.", field="splits", details=splits
        )
    return {name: splits[name] for name in SPLIT_NAMES if splits.get(name)}


def _check_statuses(statuses: Iterable[str] | None) -> list[str]:
    if statuses is None:
        return [QAItem.Status.ACCEPTED]
    statuses = list(dict.fromkeys(statuses))
    for status in statuses:
        if status not in QAItem.Status.values:
            raise InvalidInput(
                f"item_statuses: unknown status {status!r}; use {', '.join(QAItem.Status.values)}.",
                field="item_statuses",
            )
    if not statuses:
        raise InvalidInput("item_statuses: choose at least one item status.", field="item_statuses")
    return statuses


# Readiness, requesting and building


def release_readiness_get(
    *,
    project: Project,
    item_statuses: Iterable[str] | None = None,
    splits: dict[str, int] | None = None,
    seed: int | None = None,
) -> Readiness:
    """What is unfinished for a release with these choices (the defaults of `release_request` when left out).

    Without a seed, the seed the next release would keep (the latest published one's) is used.
    """
    statuses = _check_statuses(item_statuses)
    splits = _check_splits(splits)
    if seed is None:
        seed = release_next_seed(project)
    return release_readiness(project, statuses=statuses, splits=splits, seed=seed)


def release_next_seed(project: Project) -> int:
    """The seed a release requested without one uses: the latest published release's (items stay in their
    splits), else one drawn from the project itself, so that the preview before a first release shows the
    splits that release will have."""
    previous = Release.objects.published().filter(project=project).order_by("-version").first()
    if previous is not None:
        return previous.seed
    digest = hashlib.blake2b(f"localqa-seed:{project.pk}:{project.slug}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") % 2**31


def release_request(
    *,
    project: Project,
    user: User | None,
    item_statuses: Iterable[str] | None = None,
    splits: dict[str, int] | None = None,
    seed: int | None = None,
    changelog: str = "",
    license: str | None = None,
    version: int | None = None,
    enqueue: bool = True,
) -> Release:
    """Ask for a new release; a worker builds it (after commit). One build per project at a time.

    Without a seed, the seed of the latest published release is kept, so items stay
    in their splits from one version to the next; the first release takes the project's
    (`release_next_seed`, the one its preview used).
    """
    release_expire_stale(project=project)
    statuses = _check_statuses(item_statuses)
    splits = _check_splits(splits)
    if seed is not None and not 0 <= seed < 2**31:
        raise InvalidInput("seed: must be a whole number from 0 to 2147483647.", field="seed")
    if len(changelog) > 20_000:
        raise InvalidInput("changelog: at most 20000 characters.", field="changelog")
    license = _check_license(license) if license else export_settings_get(project=project).license
    taken = Release.objects.filter(project=project).exclude(status=Release.Status.FAILED)
    latest = taken.aggregate(v=Max("version"))["v"] or 0
    if version is None:
        version = latest + 1
    elif version <= latest:
        raise InvalidInput(f"version: must be greater than {latest}, the latest version.", field="version")
    if seed is None:
        seed = release_next_seed(project)
    # What is unfinished as requested (the build records it again from its snapshot); building anyway is allowed.
    readiness = release_readiness(project, statuses=statuses, splits=splits, seed=seed).as_record()
    try:
        with transaction.atomic():
            release = Release.objects.create(
                project=project,
                version=version,
                item_statuses=statuses,
                splits=splits,
                seed=seed,
                changelog=changelog,
                license=license,
                readiness=readiness,
                created_by=user,
            )
            audit.record(
                user,
                Action.RELEASE_REQUESTED,
                release,
                project=project,
                label=f"{project.slug} v{version}",
                version=version,
                item_statuses=statuses,
                splits=splits,
                seed=seed,
                license=license,
                unfinished={check["check"]: check["count"] for check in readiness["unfinished"]},
            )
    except IntegrityError as error:
        message = str(error)  # PostgreSQL names the constraint; SQLite names the table
        if not any(name in message for name in ("release_one_build", "release_unique_version", "exports_release.")):
            raise  # not the race this handles: a real fault, reported as it is
        building = Release.objects.in_progress().filter(project=project).first()
        if building is not None:
            raise InvalidState(
                f"Release v{building.version} of this project is being built; wait for it to finish.",
                field="version",
            ) from None
        raise InvalidState(f"Version {version} was just taken; request the release again.", field="version") from None
    if enqueue:
        job_enqueue("release", release.pk)
    return release


def release_rebuild(*, release: Release, user: User | None, enqueue: bool = True) -> Release:
    """Build a failed release again: a new request with the same choices (and the same number, now free)."""
    release_expire_stale(project=release.project)
    release.refresh_from_db(fields=["status"])
    if release.status != Release.Status.FAILED:
        raise InvalidState("Only a failed release can be built again.", field="status")
    audit.record(user, Action.RELEASE_REBUILT, release, project=release.project, version=release.version)
    return release_request(
        project=release.project,
        user=user,
        item_statuses=release.item_statuses,
        splits=release.splits,
        seed=release.seed,
        changelog=release.changelog,
        license=release.license,
        enqueue=enqueue,
    )


def release_cancel(*, release: Release, user: User) -> Release:
    """Stop a waiting or running build (a worker that never comes, a build started by mistake).

    The release becomes failed; a running build notices at its next chunk (its
    claim no longer holds), stops and removes its temporary files. Nothing is
    published, and the number is free for the next request.
    """
    who = getattr(user, "username", "") or "a coordinator"
    with transaction.atomic():
        if not Release.objects.filter(pk=release.pk, status__in=Release.ACTIVE).update(
            status=Release.Status.FAILED, error=f"Cancelled by {who}.", finished_at=timezone.now()
        ):
            raise InvalidState("Only a release that is waiting or being built can be cancelled.", field="status")
        audit.record(user, Action.RELEASE_CANCELLED, release, project=release.project, version=release.version)
    _remove_temporary(release)
    release.refresh_from_db()
    return release


def release_expire_stale(*, project: Project | None = None) -> int:
    """Mark builds whose worker stopped reporting as failed, and remove their temporary files."""
    with transaction.atomic():
        expired = job_expire_stale(Release, STALE_ERROR, **({"project": project} if project is not None else {}))
        releases = list(Release.objects.filter(pk__in=expired).select_related("project"))
        for release in releases:
            audit.record(
                None,
                Action.RELEASE_FAILED,
                release,
                project=release.project,
                version=release.version,
                error=STALE_ERROR,
            )
    for release in releases:
        _remove_temporary(release)
    return len(releases)


def _building_root(release: Release) -> Path:
    return releases_root() / release.project.slug / ".building"


def _remove_temporary(release: Release) -> None:
    root = _building_root(release)
    if root.is_dir():
        for path in root.glob(f"v{release.version}-*"):
            shutil.rmtree(path, ignore_errors=True)


@dataclass
class _Progress:
    run: JobRun
    done: int = 0

    def total(self, total: int) -> None:
        self.run.beat(progress_total=total, force=True)

    def advance(self, n: int) -> None:
        """A chunk written: the build's heartbeat; BuildLost once the run no longer holds it (cancelled, taken over)."""
        self.done += n
        try:
            self.run.beat(progress_done=self.done)
        except JobLost:
            raise BuildLost from None
        pause_between_steps()
        build_step_hook(self.done)


def build_step_hook(done: int) -> None:
    """Tests only: called after every chunk of a build (a test changes the project here, mid-build)."""


def release_build(*, release_id: int) -> Release | None:
    """Build a requested release and publish it; None if another run holds it or it is already done.

    The claim is a conditional update: a pending release, or a building one whose
    heartbeat went stale (its worker died and the message came back). A duplicate
    delivery finds nothing to claim and returns.
    """
    run = job_claim(Release, release_id, progress_done=0)
    if run is None:
        return None
    release = Release.objects.select_related("project").get(pk=release_id)
    _remove_temporary(release)  # an earlier run's leftovers
    temporary = _building_root(release) / f"v{release.version}-{run.owner}"
    try:
        with few_collections():
            state = _write_release(release, temporary, _Progress(run))
        archive = _write_archive(release, temporary, state, _Progress(run))
        _publish(release, temporary, run, state, archive)
    except BuildLost:
        shutil.rmtree(temporary, ignore_errors=True)
        return None
    except Exception as error:
        log.exception("Release %s failed", release)
        shutil.rmtree(temporary, ignore_errors=True)
        message = f"{type(error).__name__}: {error}"
        with transaction.atomic():
            if run.fail(message):
                audit.record(
                    None,
                    Action.RELEASE_FAILED,
                    release,
                    project=release.project,
                    version=release.version,
                    error=message,
                )
    release.refresh_from_db()
    return release


def _write_release(release: Release, root: Path, progress: _Progress) -> formats.BuildState:
    """Write every file of the release from one snapshot of the database (common.snapshot).

    Changes made while the build runs (a pair deleted, an item rejected or edited) are not in
    this release and cannot fail it: it is the project as it was when the build began reading.
    """
    project = release.project
    statuses = release.item_statuses
    state = formats.BuildState(
        release=release,
        project=project,
        splits={name: release.splits[name] for name in SPLIT_NAMES if release.splits.get(name)},
        prompt_templates=export_settings_get(project=project).prompt_templates,
    )
    # Counted before the snapshot, for the progress bar and the writers' choices: the writers open (and may
    # create their settings rows) before the build's read-only snapshot begins.
    state.items_expected = release_items(project, statuses).count()
    progress.total(state.items_expected)
    root.mkdir(parents=True, exist_ok=False)
    writers = formats.release_writers(project)
    for writer in writers:
        writer.open(root, state)
    try:
        # The build's own writes (progress, heartbeat: a cancel must be able to stop them) go aside of its read.
        with read_snapshot() as snapshot, progress.run.aside(enabled=snapshot.own):
            # Needed by the card and the manifest only, when the writers finish: computed while the items are written.
            figures = in_background(
                lambda: (release_statistics(project, statuses), release_agreement(project, statuses)), snapshot
            )
            # The one split function of every kind (exports.splits), as the readiness preview showed it.
            state.plan = release_split_plan(project, statuses=statuses, shares=state.splits, seed=release.seed)
            state.counts["splits"] = state.plan.as_record()
            splitter = state.plan.split_of
            chunk = settings.RELEASE_CHUNK_SIZE
            items = iter_item_chunks(project, statuses=statuses, splitter=splitter, chunk_size=chunk)
            for item_chunk in read_ahead(items, snapshot=snapshot):
                records = item_chunk.records()
                for writer in writers:
                    writer.add_items(records)
                progress.advance(len(records))
            pairs = iter_pair_records(project, statuses=statuses, splitter=splitter, chunk_size=chunk)
            for pair_records in read_ahead(pairs, snapshot=snapshot):
                for writer in writers:
                    writer.add_pairs(pair_records)
                progress.advance(0)
            state.statistics, (state.agreement, state.agreement_note) = figures()
            state.readiness = release_readiness(
                project, statuses=statuses, splits=state.splits, seed=release.seed, plan=state.plan
            ).as_record()
            for writer in writers:
                entries = writer.finish()
                if isinstance(writer, formats.ManifestWriter):
                    state.manifest = entries[0]
                else:
                    state.entries.extend(entries)
    except BaseException:
        for writer in writers:
            writer.abort()
        raise
    return state


ARCHIVE_NAME = "release.zip"  # in the release's directory, beside the files it holds (not one of them)


def _write_archive(release: Release, root: Path, state: formats.BuildState, progress: _Progress) -> dict[str, Any]:
    """Zip the release's files once, before it is published: every download sends this file as it is.

    Members are `<slug>-v<version>/<name>`, dated when the build started, in the order of the file list; the
    zip's own size and sha256 go on the release row (the manifest inside cannot name the zip that holds it).
    """
    entries = [*state.entries, *([] if state.manifest is None else [state.manifest])]
    prefix = f"{release.project.slug}-v{release.version}"
    moment = (release.started_at or release.created_at).timetuple()[:6]
    path = root / ARCHIVE_NAME
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for entry in entries:
            info = zipfile.ZipInfo(f"{prefix}/{entry.name}", date_time=moment)
            info.compress_type = zipfile.ZIP_DEFLATED
            with (
                archive.open(info, "w", force_zip64=entry.size > 2**31) as target,
                (root / entry.name).open("rb") as data,
            ):
                shutil.copyfileobj(data, target, 1 << 20)
            progress.advance(0)
    digest = hashlib.sha256()
    with path.open("rb") as data:
        while block := data.read(1 << 20):
            digest.update(block)
    return {"name": ARCHIVE_NAME, "size": path.stat().st_size, "sha256": digest.hexdigest()}


def _publish(
    release: Release, temporary: Path, run: JobRun, state: formats.BuildState, archive: dict[str, Any]
) -> None:
    final = release_dir(release)
    if final.exists():
        # Left by a run that died between the rename and the commit: never published, safe to replace.
        shutil.rmtree(final)
    manifest = [] if state.manifest is None else [state.manifest]
    files = [entry.as_dict() for entry in [*state.entries, *manifest]]
    with transaction.atomic():
        try:
            run.finish(
                files=files,
                archive=archive,
                counts=state.counts,
                readiness=state.readiness,
                path=str(final.relative_to(Path(settings.MEDIA_ROOT))),
                progress_done=F("progress_total"),
            )
        except JobLost:
            raise BuildLost from None
        audit.record(
            None,  # the worker publishes; who asked for it is on the release.requested event
            Action.RELEASE_PUBLISHED,
            release,
            project=release.project,
            version=release.version,
            files=len(files),
            counts=state.counts,
            unfinished={check["check"]: check["count"] for check in state.readiness.get("unfinished", [])},
        )
        os.rename(temporary, final)  # atomic on one filesystem; a failure rolls the row back


def release_build_now(**request: Any) -> Release:
    """Request and build in this process (the management command and the benchmark)."""
    release = release_request(enqueue=False, **request)
    built = release_build(release_id=release.pk)
    return built if built is not None else Release.objects.get(pk=release.pk)


# Reading published releases


CARD_SHOWN_MAX_BYTES = 512 * 1024  # a card longer than this is downloaded, not shown on the page


def release_card(release: Release) -> tuple[str, str] | None:
    """The published dataset card to show on the release's page: (its YAML header, its Markdown body)."""
    if not release.is_published or release.file_entry(card.NAME) is None:
        return None
    path = release_file_path(release, card.NAME)
    if path.stat().st_size > CARD_SHOWN_MAX_BYTES:
        return None
    text = path.read_text(encoding="utf-8")
    header, body = "", text
    if text.startswith("---\n"):
        before, separator, after = text[4:].partition("\n---\n")
        if separator:
            header, body = before, after
    return header, _headings_demoted(body)


def _headings_demoted(markdown: str) -> str:
    """The card's headings two levels down (# → ###), under the page's own: the page keeps one h1."""
    lines, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            line = "##" + line if line.startswith(("# ", "## ", "### ", "#### ")) else line
        lines.append(line)
    return "\n".join(lines)


def release_file_path(release: Release, name: str) -> Path:
    """The path of one published file; only names listed in the release's files are served."""
    if not release.is_published or release.file_entry(name) is None:
        raise InvalidInput(f"The release has no file called {name[:80]!r}.", field="name")
    # Listed is not enough: a row may come from an imported archive, so the path itself is checked too.
    return paths.inside(paths.release_folder(release.path), name)


def release_archive_name(release: Release) -> str:
    return f"{release.project.slug}-v{release.version}.zip"


class _Sink(io.RawIOBase):
    """A write-only, unseekable stream whose bytes are handed out as they arrive (zipfile streams into it)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.chunks.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data = b"".join(self.chunks)
        self.chunks.clear()
        return data


def release_archive_path(release: Release) -> Path | None:
    """The zip built when the release was published; None for a release without one (published before, or
    imported from a project archive), which `release_archive_stream` zips while it is sent."""
    if not release.is_published or (release.archive or {}).get("name") != ARCHIVE_NAME:
        return None
    path = paths.inside(paths.release_folder(release.path), release.archive["name"])
    return path if path.is_file() else None


def release_archive_stream(release: Release, block: int = 1 << 16) -> Iterator[bytes]:
    """The whole release as one zip, produced while it is sent: memory holds one block, not the archive.

    Only for releases without a zip of their own (`release_archive_path`)."""
    if not release.is_published:
        raise InvalidState("Only a published release can be downloaded.", field="status")
    return _archive_chunks(release, block)


def _archive_chunks(release: Release, block: int) -> Iterator[bytes]:
    prefix = f"{release.project.slug}-v{release.version}"
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for entry in release.files:
            source = release_file_path(release, entry["name"])
            info = zipfile.ZipInfo(
                f"{prefix}/{entry['name']}", date_time=(release.finished_at or release.created_at).timetuple()[:6]
            )
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w", force_zip64=entry["size"] > 2**31) as target, source.open("rb") as data:
                while chunk := data.read(block):
                    target.write(chunk)
                    if sink.chunks:
                        yield sink.take()
            yield sink.take()
    yield sink.take()


# Comparing releases


@dataclass
class ReleaseDiff:
    old: Release
    new: Release
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)  # {id, question, fields, values}
    unchanged: int = 0
    # The question of each added and removed item, so a person reads what came and went, not only ids.
    questions: dict[str, str] = field(default_factory=dict)

    def as_dict(self, limit: int | None = None) -> dict[str, Any]:
        return {
            "from_version": self.old.version,
            "to_version": self.new.version,
            "counts": {
                "added": len(self.added),
                "removed": len(self.removed),
                "changed": len(self.changed),
                "unchanged": self.unchanged,
            },
            "added": self.added[:limit],
            "removed": self.removed[:limit],
            "changed": self.changed[:limit],
            "added_items": [{"id": item, "question": self.questions[item]} for item in self.added[:limit]],
            "removed_items": [{"id": item, "question": self.questions[item]} for item in self.removed[:limit]],
        }


# The item files of a release, by stable item id: localqa QA releases and validation releases.
DIFF_FILES = ("lead_qa.jsonl", "document_qa.jsonl", "validation_qa.jsonl")


def _records(release: Release) -> Iterator[dict[str, Any]]:
    for name in DIFF_FILES:
        if release.file_entry(name) is None:
            continue
        with release_file_path(release, name).open(encoding="utf-8") as lines:
            for line in lines:
                yield json.loads(line)


def release_diff(*, old: Release, new: Release) -> ReleaseDiff:
    """Items added, removed and changed (by stable id) between two published releases of a project.

    Streams both releases: memory holds one short digest per item of the older
    release, and the full records only of items that changed.
    """
    for release in (old, new):
        if not release.is_published:
            raise InvalidState(f"Release v{release.version} is not published; only published releases compare.")
    if old.project_id != new.project_id:
        raise InvalidInput("Both releases must belong to the same project.", field="to")

    def digest(record: dict[str, Any]) -> bytes:
        return hashlib.blake2b(json.dumps(record, sort_keys=True).encode(), digest_size=16).digest()

    old_digests = {record["id"]: digest(record) for record in _records(old)}
    diff = ReleaseDiff(old=old, new=new)
    changed_new: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for record in _records(new):
        seen.add(record["id"])
        before = old_digests.get(record["id"])
        if before is None:
            diff.added.append(record["id"])
            diff.questions[record["id"]] = _question(record)
        elif before != digest(record):
            changed_new[record["id"]] = record
        else:
            diff.unchanged += 1
    diff.removed = [item for item in old_digests if item not in seen]
    removed = set(diff.removed)
    if changed_new or removed:
        for record in _records(old):
            if record["id"] in removed:
                diff.questions[record["id"]] = _question(record)
            newer = changed_new.get(record["id"])
            if newer is not None:
                fields = sorted(key for key in record.keys() | newer.keys() if record.get(key) != newer.get(key))
                values = [{"field": key, "before": record.get(key), "after": newer.get(key)} for key in fields]
                diff.changed.append(
                    {"id": record["id"], "question": _question(newer), "fields": fields, "values": values}
                )
    return diff


def _question(record: dict[str, Any]) -> str:
    return str(record.get("question") or "")


# Project formats (WiLoVa write-back)


def project_format_write(*, project: Project, format: str, out_dir: Path) -> list[Path]:
    """Write the project in another format (e.g. WiLoVa) into `out_dir`; the writer names its files."""
    writer = formats.project_format(format)
    if writer is None:
        known = ", ".join(fmt.name for fmt in formats.available_project_formats()) or "none"
        raise InvalidInput(f"format: {format!r} is not available here (available: {known}).", field="format")
    if not formats.PROJECT_FORMATS[format].applies(project):
        raise InvalidInput(
            f"format: the project {project.slug!r} was not imported from {format} files; "
            "there is nothing to write back.",
            field="format",
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    return list(writer(project, out_dir))


def project_format_archive(*, project: Project, format: str) -> tuple[Path, Callable[[], None]]:
    """The project written in `format`, zipped into a temporary file; returns the path and a cleanup."""
    workdir = Path(tempfile.mkdtemp(prefix=f"{format}-", dir=_scratch_dir()))
    try:
        paths = project_format_write(project=project, format=format, out_dir=workdir / "out")
        archive = workdir / f"{project.slug}-{format}.zip"
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
            for path in paths:
                zipped.write(path, arcname=Path(path).name)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    return archive, lambda: shutil.rmtree(workdir, ignore_errors=True)


def _scratch_dir() -> Path:
    path = releases_root() / ".scratch"
    path.mkdir(parents=True, exist_ok=True)
    return path
