"""Building a release: what gets in, the files and their hashes, immutability, failures and concurrency."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from django.conf import settings

from exports import services
from exports.models import Release


def published_dir(release: Release) -> Path:
    return Path(settings.MEDIA_ROOT) / release.path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_release_of_accepted_items_is_published_with_every_file_hashed(released_project, coordinator):
    release = services.release_build_now(project=released_project, user=coordinator, seed=7)

    assert release.status == Release.Status.PUBLISHED, release.error
    assert release.version == 1
    root = published_dir(release)
    names = {entry["name"] for entry in release.files}
    assert {"lead_qa.jsonl", "document_qa.jsonl", "page_pairs.jsonl", "README.md", "manifest.json"} <= names
    for entry in release.files:
        data = (root / entry["name"]).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (entry["size"], entry["sha256"])
    lead = read_jsonl(root / "lead_qa.jsonl")
    assert len(lead) == 6  # three accepted pairs x two lead QAs; the rejected pair stays out
    assert len(read_jsonl(root / "document_qa.jsonl")) == 1
    assert len(read_jsonl(root / "page_pairs.jsonl")) == 6
