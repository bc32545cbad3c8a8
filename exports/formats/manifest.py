"""`manifest.json`: schema version, counts, settings, statistics, agreement and every file's size and sha256."""

from __future__ import annotations

import itertools
import json
from typing import Any

from common import kinds
from exports.formats.base import FileEntry, HashedFile
from exports.formats.writer import ReleaseWriter

NAME = "manifest.json"
SCHEMA_VERSION = 1
PIECES_PER_WRITE = 10_000  # of the encoder's pieces (keys, values, punctuation) joined into one write


def _kind_project(project: Any) -> dict[str, Any]:
    """What the project's kind says of it (its settings; Wikipedia QA its wikis too): no other kind's settings."""
    describe = kinds.of(project).manifest_project
    return describe(project) if describe is not None else {}


class ManifestWriter(ReleaseWriter):
    def finish(self) -> list[FileEntry]:
        state = self.state
        release, project = state.release, state.project
        unit = kinds.of(project)
        manifest = {
            "schema_version": SCHEMA_VERSION,
            "generator": "localqa",
            "project": {
                "slug": project.slug,
                "name": project.name,
                "kind": project.kind,
                "local_language": project.local_language,
                "standard_language": project.standard_language,
                "guidelines_version": project.guidelines_version,
                **_kind_project(project),
            },
            "release": {
                "version": release.version,
                "created_at": release.created_at.isoformat(),
                "item_statuses": release.item_statuses,
                "splits": state.splits,
                "seed": release.seed,
                "license": release.license,
                "changelog": release.changelog,
                **({"prompt_templates": state.prompt_templates} if unit.prompt_templates else {}),
            },
            "counts": state.counts,
            "readiness": state.readiness,
            "statistics": state.statistics,
            "agreement": state.agreement,
            "agreement_note": state.agreement_note,
            "files": [entry.as_dict() for entry in state.entries],
            # Every group's split (page pair, entity, item …): the next release with this seed keeps them.
            "split_assignment": {
                "unit": state.plan.unit,
                # The plan's own map: json writes its integer keys as text, without a copy of it keyed by text.
                "groups": state.plan.assignment,
            }
            if state.plan is not None
            else None,
        }
        # Written as it is encoded: the split assignment names every group, and a big release's whole text (with
        # its pieces) was the largest thing its build held.
        handle = HashedFile(self.root, NAME)
        text = json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(manifest)
        for piece in iter(lambda: "".join(itertools.islice(text, PIECES_PER_WRITE)), ""):
            handle.write(piece.encode())
        handle.write(b"\n")
        return [handle.close(count_lines=False)]
