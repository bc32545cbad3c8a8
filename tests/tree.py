"""The project's own files, for the tests that read the source (private APIs, CSV writers, the app graph).

Walks the checkout once per process and never enters the virtualenv, Git's folder or generated files: a plain
`rglob` lists the tens of thousands of files under `.venv` before any filter sees them.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = {".venv", ".git", "node_modules", "staticfiles", "media", "__pycache__", ".mypy_cache", ".ruff_cache"}


@functools.cache
def project_files(suffixes: tuple[str, ...] = (".py",)) -> tuple[Path, ...]:
    """Every file of the checkout ending in one of `suffixes`, sorted, skipped folders not entered."""
    found: list[Path] = []
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = sorted(
            name for name in subfolders if name not in SKIPPED and not name.startswith("localqa-test-")
        )
        found.extend(Path(folder, name) for name in names if name.endswith(suffixes))
    return tuple(sorted(found))
