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
ENTRIES_PER_WRITE = 10_000  # of the split assignment's groups, joined into one write


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
        }
        handle = HashedFile(self.root, NAME)
        if state.plan is None:
            manifest["split_assignment"] = None
            handle.write((json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode())
            return [handle.close(count_lines=False)]
        # Every group's split (page pair, entity, item …): the next release with this seed keeps them. It names
        # every group, so it is written from the plan's arrays as it is encoded, the same bytes json.dumps gives the
        # whole manifest: the text of a big release's whole map was the largest thing its build held.
        head = json.dumps(manifest, ensure_ascii=False, indent=2).removesuffix("\n}")
        unit_text = json.dumps(state.plan.unit, ensure_ascii=False)
        handle.write(f'{head},\n  "split_assignment": {{\n    "unit": {unit_text},\n    "groups": '.encode())
        groups = state.plan.assignment.items() if state.plan.assignment is not None else iter(())
        entries = (f'"{key}": "{split}"' for key, split in groups)  # integer keys and split names: nothing to escape
        opening = "{\n      "
        for piece in iter(lambda: ",\n      ".join(itertools.islice(entries, ENTRIES_PER_WRITE)), ""):
            handle.write((opening + piece).encode())
            opening = ",\n      "
        handle.write(b"{}\n  }\n}\n" if opening.startswith("{") else b"\n    }\n  }\n}\n")
        return [handle.close(count_lines=False)]
