"""The real bar–deu WiLoVa release: written back byte for byte through the command and the page, and
released as a localqa dataset whose every located evidence span slices out of its document."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.management import call_command
from django.urls import reverse

from exports import services
from exports.models import Release
from tests.wikiqa.conftest import BASE_NAME, QUALITY_NAME, bar_deu, wilova_release, wilova_sources  # noqa: F401
from wikiqa.importers.services import pairs_import


@pytest.fixture
def imported(bar_deu, wilova_sources):  # noqa: F811
    report = pairs_import(project=bar_deu, paths=wilova_sources)
    assert report.ok, report.summary()
    return bar_deu


def test_the_command_writes_the_wilova_files_back_byte_for_byte(imported, wilova_release, tmp_path):  # noqa: F811
    call_command("release_build", imported.slug, "--format", "wilova", "--out", str(tmp_path))

    for name in (BASE_NAME, QUALITY_NAME):
        assert (tmp_path / name).read_bytes() == wilova_release[name], name
    assert not Release.objects.exists()  # a write-back is not a release


def test_the_page_offers_the_wilova_files_as_a_zip_of_the_originals(imported, wilova_release, client, coordinator):  # noqa: F811
    client.force_login(coordinator)
    listing = client.get(reverse("release_list", args=[imported.slug])).content.decode()
    url = reverse("project_format", args=[imported.slug, "wilova"])

    response = client.get(url)

    assert url in listing
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert sorted(archive.namelist()) == sorted([BASE_NAME, QUALITY_NAME])
    for name in (BASE_NAME, QUALITY_NAME):
        assert archive.read(name) == wilova_release[name], name


def test_a_release_of_the_real_bar_deu_data_slices_every_located_span(imported, coordinator):
    release = services.release_build_now(project=imported, user=coordinator, item_statuses=["accepted"], seed=1)

    assert release.status == Release.Status.DONE, release.error
    root = services.release_dir(release)
    located = 0
    for name in ("lead_qa.jsonl", "document_qa.jsonl"):
        for line in (root / name).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for span in record["evidence"]:
                if span["start"] is None:
                    assert span["match"] == "unlocated"
                    continue
                assert record[span["document"]][span["start"] : span["end"]] == span["text"], record["id"]
                located += 1
    assert located > 100
    assert release.counts["page_pairs"] == imported.pairs.count()
    # The release's verification results and labels come from what the WiLoVa files said.
    lead = [json.loads(line) for line in (root / "lead_qa.jsonl").read_text(encoding="utf-8").splitlines()]
    found = [record for record in lead if record["verification"]["status"] == "found"]
    assert found and all(record["verification"]["sentences"][0]["text"].strip() for record in found)
    assert {record["verification"]["status"] for record in lead} == {"found", "not_checked"}
    assert {record["topic"] for record in lead} - {None} <= set(imported.topics)
    assert {record["region"] for record in lead} - {None} <= {"local", "standard", "other"}
    assert sum(record["topic"] is not None for record in lead) > 50
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["statistics"]["by_topic"]) > 3


def test_every_file_of_the_real_bar_deu_release_loads_in_datasets_and_pandas(imported, coordinator, tmp_path):
    from tests.exports.test_consumers import datasets, pd

    release = services.release_build_now(project=imported, user=coordinator, seed=1)
    root = services.release_dir(release)

    for entry in release.files:
        if not (entry["name"].endswith(".jsonl") and entry["lines"]):
            continue
        path = root / entry["name"]
        dataset = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path))
        assert dataset.num_rows == len(pd.read_json(path, lines=True, dtype=False)) == entry["lines"], entry["name"]
    assert release.counts["lead_qa"] > 100 and release.counts["document_qa"] > 10
