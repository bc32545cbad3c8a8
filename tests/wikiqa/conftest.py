"""Shared bits of the import tests: the real WiLoVa bar–deu release, read from the password-protected zip.

The release stays encrypted on disk: tests decrypt its files into memory and hand
the importer bytes (`ImportSource(name=..., data=...)`), never a decrypted file.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from annotation.importers.sources import ImportSource
from tests import factories

_BESIDE = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "wilova" / "wilova-bar-deu.zip"
WILOVA_ZIP = _BESIDE if _BESIDE.exists() else Path("/work/shared/fixtures/wilova/wilova-bar-deu.zip")
BASE_NAME = "de.bar-MW.json"
QUALITY_NAME = "de.bar-MW_QualityMeta-VB.json"
PASSWORD = b"wilovaqa"


def wilova_bytes(name: str) -> bytes:
    return zipfile.ZipFile(WILOVA_ZIP).read(name, pwd=PASSWORD)


@pytest.fixture(scope="session")
def wilova_release() -> dict[str, bytes]:
    if not WILOVA_ZIP.exists():
        pytest.skip(f"The WiLoVa fixture is not at {WILOVA_ZIP}.")
    return {name: wilova_bytes(name) for name in (BASE_NAME, QUALITY_NAME)}


@pytest.fixture
def wilova_sources(wilova_release) -> list[ImportSource]:
    return [ImportSource(name=name, data=data) for name, data in wilova_release.items()]


@pytest.fixture
def bar_deu(coordinator):
    return factories.project(coordinator, slug="wilova-bar-deu", local_language="bar", standard_language="deu")
