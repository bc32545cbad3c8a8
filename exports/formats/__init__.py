"""The registry of export formats.

`release_writers(project)` lists the writers of a localqa release of the project's
kind (registered in `common.kinds`), in the order they finish (the dataset card
and the manifest come last: they describe the files written before them).
Project formats such as WiLoVa write a whole project in
someone else's format; their modules are imported only when used, so a format
whose module is absent is simply not offered.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import kinds
from exports.formats.card import DatasetCardWriter
from exports.formats.manifest import ManifestWriter
from exports.formats.pairs import PagePairsWriter
from exports.formats.prompts import PromptsWriter
from exports.formats.qa import QAWriter
from exports.formats.writer import BuildState, ReleaseWriter

RELEASE_FORMAT = "localqa"


def release_writers(project: Any) -> list[ReleaseWriter]:
    """The writers of the project's release: its kind's (`common.kinds`), registered by the kind's app."""
    writers = kinds.of(project).release_writers
    if writers is None:
        raise LookupError(f"The project kind {project.kind!r} registered no release writers.")
    return writers()


def wikipedia_release_writers() -> list[ReleaseWriter]:
    """A Wikipedia QA release: lead and document QAs, the page pairs, the prompt templates (checked; kept in the
    manifest), the card, the manifest."""
    return [
        QAWriter("lead", "lead_qa"),
        QAWriter("document", "document_qa"),
        PagePairsWriter(),
        PromptsWriter(),
        DatasetCardWriter(),
        ManifestWriter(),
    ]


@dataclass(frozen=True)
class ProjectFormat:
    name: str
    label: str
    module: str
    function: str

    def load(self) -> Callable[..., list[Path]] | None:
        try:
            module = importlib.import_module(self.module)
        except ModuleNotFoundError as error:
            if error.name != self.module:
                raise  # the module exists but is broken: say so rather than hide the format
            return None
        return getattr(module, self.function, None)

    def applies(self, project: Any) -> bool:
        """A write-back format applies to a project imported from files of that format."""
        return bool(project.source_files.filter(format=self.name).exists())


PROJECT_FORMATS = {
    "wilova": ProjectFormat(
        "wilova", "WiLoVa release files (base file and _QualityMeta)", "exports.formats.wilova", "write_wilova"
    ),
}


def project_format(name: str) -> Callable[..., list[Path]] | None:
    """The writer of a project format, or None when its module is not installed."""
    fmt = PROJECT_FORMATS.get(name)
    return fmt.load() if fmt is not None else None


def available_project_formats(project: Any = None) -> list[ProjectFormat]:
    """Formats whose writer is installed (and, given a project, that apply to it)."""
    return [
        fmt for fmt in PROJECT_FORMATS.values() if fmt.load() is not None and (project is None or fmt.applies(project))
    ]


def format_names() -> list[str]:
    return [RELEASE_FORMAT, *PROJECT_FORMATS]


__all__ = [
    "BuildState",
    "ManifestWriter",
    "ReleaseWriter",
    "available_project_formats",
    "project_format",
    "release_writers",
]
