"""Large releases have their prompt files written by a process of their own: the same bytes as in-process, and a
process that dies fails the build with a clear error and publishes nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from annotation.models import Project
from exports import services
from exports.formats import prompt_process
from exports.formats.prompt_process import PROJECT_DIR, PromptProcess
from exports.models import DEFAULT_PROMPT_TEMPLATES, ExportSettings, Release
from tests.exports.conftest import bulk_accepted_items
from tests.security.hostile import PAYLOADS


def prompt_hashes(release: Release) -> dict[str, str]:
    return {entry["name"]: entry["sha256"] for entry in release.files if entry["name"].startswith("prompts/")}


@pytest.fixture
def hostile_project(released_project: Project) -> Project:
    """Prompts that use every field, with a literal % and newlines, and hostile text in the items."""
    templates = DEFAULT_PROMPT_TEMPLATES | {
        "question_only": "{local_title} / {standard_title}: {question} 100%",
        "local_lead": "{local_lead}\n\n{question}",
    }
    ExportSettings.objects.update_or_create(project=released_project, defaults={"prompt_templates": templates})
    items = list(released_project.items.all())
    for item, payload in zip(items, PAYLOADS.values(), strict=False):
        item.question = f"{payload} {item.question}"
        item.save(update_fields=["question"])
    return released_project


def test_the_prompt_process_writes_the_bytes_the_build_writes_in_process(
    hostile_project, coordinator, settings, monkeypatch
):
    settings.RELEASE_PROMPT_PROCESS_FROM = None
    in_process = services.release_build_now(project=hostile_project, user=coordinator, seed=5)
    settings.RELEASE_PROMPT_PROCESS_FROM = 1
    started = []
    original = PromptProcess.start

    def spy(*args, **kwargs):
        started.append(True)
        return original(*args, **kwargs)

    monkeypatch.setattr(PromptProcess, "start", spy)  # counts the processes started; the real one does the work
    by_process = services.release_build_now(project=hostile_project, user=coordinator, seed=5)

    assert started == [True]
    assert (in_process.status, by_process.status) == (Release.Status.DONE, Release.Status.DONE)
    assert len(prompt_hashes(in_process)) == 4
    assert prompt_hashes(by_process) == prompt_hashes(in_process)


def test_a_prompt_process_killed_mid_build_fails_the_build_and_publishes_nothing(
    project, coordinator, settings, monkeypatch, media
):
    bulk_accepted_items(project, 60)
    settings.RELEASE_PROMPT_PROCESS_FROM = 1
    settings.RELEASE_CHUNK_SIZE = 10
    sent = []
    send = PromptProcess.send

    def killed_after_two_chunks(self, records):  # the kernel's OOM killer, say
        if len(sent) == 2:
            self._process.kill()
            self._process.wait()
        sent.append(len(records))
        send(self, records)

    monkeypatch.setattr(PromptProcess, "send", killed_after_two_chunks)
    release = services.release_build_now(project=project, user=coordinator)

    assert release.status == Release.Status.FAILED
    assert release.error.startswith("PromptProcessFailed: The prompt-writing process stopped (exit code -9)"), (
        release.error
    )
    releases = Path(media) / "releases" / project.slug
    assert not (releases / f"v{release.version}").exists()
    assert not any((releases / ".building").iterdir())


def test_a_prompt_process_whose_builder_goes_away_writes_no_entries(tmp_path):
    first = orjson.dumps({"root": str(tmp_path), "templates": DEFAULT_PROMPT_TEMPLATES})
    run = subprocess.run(
        [sys.executable, "-m", "exports.formats.prompt_process"],
        cwd=PROJECT_DIR,
        input=prompt_process._LENGTH.pack(len(first)) + first,  # no chunk, no end: the pipe just closes
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == 3
    assert run.stdout == b""
    assert b"went away before the end" in run.stderr
