"""Comparing releases by stable item id, and downloading files and whole releases (pages and API)."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest
from django.urls import reverse

from annotation.models import QAItem
from exports import services
from tests.conftest import api_as
from tests.exports.conftest import authored_pair


@pytest.fixture
def two_releases(released_project, annotator, coordinator):
    v1 = services.release_build_now(project=released_project, user=coordinator, seed=5)
    items = list(QAItem.objects.filter(project=released_project, status="accepted", kind="lead").order_by("id"))
    QAItem.objects.filter(pk=items[0].pk).update(question="一个改过的问题？")
    QAItem.objects.filter(pk=items[1].pk).update(status="rejected")
    added_pair = authored_pair(released_project, annotator)
    v2 = services.release_build_now(project=released_project, user=coordinator, changelog="Fixed a question.")
    slug = released_project.slug
    return {
        "v1": v1,
        "v2": v2,
        "changed": f"{slug}-q{items[0].pk}",
        "removed": f"{slug}-q{items[1].pk}",
        "added": sorted(f"{slug}-q{pk}" for pk in added_pair.items.values_list("pk", flat=True)),
    }


def test_the_diff_lists_added_removed_and_changed_items_by_stable_id(two_releases):
    diff = services.release_diff(old=two_releases["v1"], new=two_releases["v2"]).as_dict()

    assert sorted(diff["added"]) == two_releases["added"]
    assert diff["removed"] == [two_releases["removed"]]
    [change] = diff["changed"]
    assert (change["id"], change["fields"], change["question"]) == (
        two_releases["changed"],
        ["question"],
        "一个改过的问题？",
    )
    assert change["values"][0]["field"] == "question"
    assert change["values"][0]["after"] == "一个改过的问题？"
    assert change["values"][0]["before"] != change["values"][0]["after"]
    assert diff["counts"] == {"added": 2, "removed": 1, "changed": 1, "unchanged": 5}
    assert [item["id"] for item in diff["removed_items"]] == [two_releases["removed"]]
    assert all(item["question"] for item in diff["added_items"] + diff["removed_items"])


def test_the_diff_is_json_in_the_api_and_a_page_in_the_browser(two_releases, client, reviewer):
    slug = two_releases["v1"].project.slug

    api = api_as(reviewer).get(f"/api/projects/{slug}/releases/diff/", {"old": 1, "new": 2})
    client.force_login(reviewer)
    page = client.get(reverse("release_diff", args=[slug]), {"old": 1, "new": 2})

    assert api.status_code == 200
    assert api.json()["counts"] == {"added": 2, "removed": 1, "changed": 1, "unchanged": 5}
    assert page.status_code == 200
    html = page.content.decode()
    assert two_releases["changed"] in html
    assert '<dd id="diff-added">2</dd>' in html
    # The page reads as values, not field names: the question before and after, the field in words.
    before = api.json()["changed"][0]["values"][0]["before"]
    assert f"<del>{before}</del>" in html and "<ins>一个改过的问题？</ins>" in html
    assert "<td>Question</td>" in html
    assert api.json()["removed_items"][0]["question"] in html


def test_comparing_with_a_release_that_is_not_published_is_refused(two_releases, coordinator):
    pending = services.release_request(project=two_releases["v1"].project, user=coordinator, enqueue=False)

    response = api_as(coordinator).get(
        f"/api/projects/{pending.project.slug}/releases/diff/", {"old": 1, "new": pending.version}
    )

    assert response.status_code == 409
    assert "not published" in response.json()["detail"]


def _body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_a_member_downloads_each_file_byte_for_byte_as_listed_in_the_manifest(two_releases, client, annotator):
    release = two_releases["v2"]
    client.force_login(annotator)
    for entry in release.files:
        response = client.get(reverse("release_file", args=[release.project.slug, 2, entry["name"]]))
        assert response.status_code == 200, entry["name"]
        data = _body(response)
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["name"]
        assert "attachment" in response["Content-Disposition"]


def test_the_whole_release_downloads_as_the_zip_built_when_it_was_published(
    two_releases, client, annotator, monkeypatch
):
    release = two_releases["v2"]
    assert release.archive["name"] == "release.zip"
    zipped = services.release_dir(release) / "release.zip"
    assert (zipped.stat().st_size, release.archive["sha256"]) == (
        release.archive["size"],
        hashlib.sha256(zipped.read_bytes()).hexdigest(),
    )

    def zipped_again(*args, **kwargs):
        raise AssertionError("a download zipped the release again")

    monkeypatch.setattr(services, "_archive_chunks", zipped_again)
    client.force_login(annotator)
    page = client.get(reverse("release_archive", args=[release.project.slug, 2]))
    api = api_as(annotator).get(f"/api/projects/{release.project.slug}/releases/2/archive/")

    for response in (page, api):
        assert response.status_code == 200
        body = _body(response)
        assert hashlib.sha256(body).hexdigest() == release.archive["sha256"]  # the published zip, byte for byte
        assert f'filename="{release.project.slug}-v2.zip"' in response["Content-Disposition"]
        archive = zipfile.ZipFile(io.BytesIO(body))
        assert archive.testzip() is None
        names = {name.split("/", 1)[1]: name for name in archive.namelist()}
        assert set(names) == {entry["name"] for entry in release.files}
        for entry in release.files:
            assert hashlib.sha256(archive.read(names[entry["name"]])).hexdigest() == entry["sha256"]


def test_a_release_published_without_its_own_zip_is_zipped_while_it_is_sent(two_releases, client, annotator):
    release = two_releases["v1"]
    type(release).objects.filter(pk=release.pk).update(archive={})  # published before zips were built once
    client.force_login(annotator)

    response = client.get(reverse("release_archive", args=[release.project.slug, 1]))

    assert response.status_code == 200 and response.streaming
    archive = zipfile.ZipFile(io.BytesIO(_body(response)))
    assert {name.split("/", 1)[1] for name in archive.namelist()} == {entry["name"] for entry in release.files}


@pytest.mark.parametrize("name", ["../../manifest.json", "nothing.jsonl", "lead_qa", "%2e%2e/settings.py"])
def test_only_files_listed_in_the_release_are_served(two_releases, client, annotator, name):
    client.force_login(annotator)
    slug = two_releases["v1"].project.slug

    page = client.get(f"/projects/{slug}/releases/1/files/{name}")
    api = api_as(annotator).get(f"/api/projects/{slug}/releases/1/files/{name}")

    assert page.status_code == 404
    assert api.status_code == 404


def test_a_release_that_is_not_published_has_nothing_to_download(released_project, coordinator, client):
    release = services.release_request(project=released_project, user=coordinator, enqueue=False)
    client.force_login(coordinator)

    assert client.get(reverse("release_archive", args=[released_project.slug, release.version])).status_code == 404
    assert client.get(reverse("release_file", args=[released_project.slug, 1, "manifest.json"])).status_code == 404
    api = api_as(coordinator).get(f"/api/projects/{released_project.slug}/releases/1/archive/")
    assert api.status_code == 409


def test_the_release_page_shows_its_dataset_card_rendered_with_the_header_apart(two_releases, client, reviewer):
    release = two_releases["v2"]
    client.force_login(reviewer)
    html = client.get(reverse("release_detail", args=[release.project.slug, release.version])).content.decode()
    card = (services.release_file_path(release, "README.md")).read_text(encoding="utf-8")
    title = next(line for line in card.splitlines() if line.startswith("# "))[2:]
    assert f"<h3>{title}</h3>" in html  # Markdown rendered, not shown as text (under the page's own h1, h2)
    assert html.count("<h1") == 1
    assert 'id="dataset-card"' in html and "dataset_info:" in html  # the YAML header, shown apart
    assert "---\n" not in html.split('id="dataset-card"')[1].split("<details>")[0]
