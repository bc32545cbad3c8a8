"""The registry of export formats.

`release_writers()` lists the writers of a localqa release, in the order they
finish (the dataset card and the manifest come last: they describe the files
written before them). Project formats such as WiLoVa write a whole project in
someone else's format; their modules are imported only when used, so a format
whose module is absent is simply not offered.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exports.formats.card import DatasetCardWriter
from exports.formats.manifest import ManifestWriter
from exports.formats.pairs import PagePairsWriter
from exports.formats.prompts import PromptsWriter
from exports.formats.qa import QAWriter
from exports.formats.writer import BuildState, ReleaseWriter

RELEASE_FORMAT = "localqa"


# Project kinds (`Project.Kind` values) whose releases other writers make: kind → (module, function returning the
# writers). Plain strings, so this package loads without the ORM.
KIND_WRITERS = {
    "validation": ("validation.release", "release_writers"),
    "trivia": ("multichoice.release", "release_writers"),
    "entity_qa": ("multichoice.release", "entity_release_writers"),
}


def release_writers(project: Any = None) -> list[ReleaseWriter]:
    kind = getattr(project, "kind", None)
    if kind in KIND_WRITERS:
        module, function = KIND_WRITERS[kind]
        return getattr(importlib.import_module(module), function)()
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
