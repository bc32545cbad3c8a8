"""`manifest.json`: schema version, counts, settings, statistics, agreement and every file's size and sha256."""

from __future__ import annotations

import json

from exports.formats.base import FileEntry, write_file
from exports.formats.writer import ReleaseWriter

NAME = "manifest.json"
SCHEMA_VERSION = 1


class ManifestWriter(ReleaseWriter):
    def finish(self) -> list[FileEntry]:
        state = self.state
        release, project = state.release, state.project
        manifest = {
            "schema_version": SCHEMA_VERSION,
            "generator": "localqa",
            "project": {
                "slug": project.slug,
                "name": project.name,
                "local_language": project.local_language,
                "local_wiki": project.local_wiki,
                "standard_language": project.standard_language,
                "standard_wiki": project.standard_wiki,
                "guidelines_version": project.guidelines_version,
                "settings": {
                    "lead_qa_min": project.lead_qa_min,
                    "lead_qa_max": project.lead_qa_max,
                    "collect_document_qa": project.collect_document_qa,
                    "reviewers_per_item": project.reviewers_per_item,
                    "review_criteria": project.review_criteria,
                    "topics": project.topics,
                    "regions": project.regions,
                    "settings_version": project.version,
                },
            },
            "release": {
                "version": release.version,
                "created_at": release.created_at.isoformat(),
                "item_statuses": release.item_statuses,
                "splits": state.splits,
                "seed": release.seed,
                "license": release.license,
                "changelog": release.changelog,
                "prompt_templates": state.prompt_templates,
            },
            "counts": state.counts,
            "readiness": state.readiness,
            "statistics": state.statistics,
            "agreement": state.agreement,
            "agreement_note": state.agreement_note,
            "files": [entry.as_dict() for entry in state.entries],
        }
        data = json.dumps(manifest, ensure_ascii=False, indent=2) + "\n"
        return [write_file(self.root, NAME, data.encode())]
