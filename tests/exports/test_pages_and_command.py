"""A coordinator cuts and watches a release in the browser; export settings; the release_build command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from exports import formats, services
from exports.models import Release
from tests.conftest import api_as
from tests.exports.loading import prompt_lines

FORM = {"item_statuses": ["accepted"], "use_splits": "on", "train": 70, "dev": 10, "test": 20, "license": ""}


def test_a_coordinator_cuts_a_release_and_sees_it_published_with_its_files(
    released_project, coordinator, client, django_capture_on_commit_callbacks
):
    client.force_login(coordinator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("release_create", args=[released_project.slug]), FORM | {"changelog": "First"})

    assert response.status_code == 302
    release = Release.objects.get()
    assert response["Location"] == reverse("release_detail", args=[released_project.slug, release.version])
    page = client.get(response["Location"]).content.decode()
    assert "Published" in page
    assert reverse("release_file", args=[released_project.slug, 1, "lead_qa.jsonl"]) in page
    assert "hx-trigger" not in page  # nothing left to poll
    listing = client.get(reverse("release_list", args=[released_project.slug])).content.decode()
    assert reverse("release_archive", args=[released_project.slug, 1]) in listing


def test_the_status_of_a_build_in_progress_is_polled_as_a_partial(released_project, coordinator, client):
    release = services.release_request(project=released_project, user=coordinator, enqueue=False)
    Release.objects.filter(pk=release.pk).update(status="running", progress_total=200, progress_done=50)
    client.force_login(coordinator)
    url = reverse("release_detail", args=[released_project.slug, release.version])

    full = client.get(url)
    partial = client.get(url, headers={"HX-Request": "true"})

    assert 'hx-trigger="every 1s"' in full.content.decode()
    body = partial.content.decode()
    assert body.lstrip().startswith('<section id="release-status"')
    assert "50 of 200 items written" in body
    assert "<html" not in body
    assert partial["Vary"] and "HX-Request" in partial["Vary"]


def test_a_failed_release_shows_its_error_and_a_build_again_button(release_world, client):
    client.force_login(release_world["users"]["coordinator"])

    page = client.get(reverse("release_detail", args=[release_world["slug"], 2])).content.decode()

    assert "No space left on device" in page
    assert reverse("release_rebuild", args=[release_world["slug"], 2]) in page


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"train": 70, "dev": 10, "test": 10}, "must add up to 100"),
        ({"item_statuses": []}, "This field is required"),
        ({"license": "not a license!"}, "license identifier"),
    ],
)
def test_bad_release_form_input_is_shown_and_nothing_is_requested(
    released_project, coordinator, client, change, message
):
    client.force_login(coordinator)

    response = client.post(reverse("release_create", args=[released_project.slug]), FORM | change)

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Release.objects.exists()


def test_user_text_is_escaped_on_release_pages(released_project, coordinator, client):
    changelog = '<script>alert("x")</script>'
    services.release_build_now(project=released_project, user=coordinator, changelog=changelog)
    client.force_login(coordinator)

    page = client.get(reverse("release_detail", args=[released_project.slug, 1])).content.decode()

    assert "<script>alert" not in page
    assert "&lt;script&gt;" in page


def test_edited_prompt_templates_shape_the_next_releases_prompts(released_project, coordinator, client):
    client.force_login(coordinator)
    current = services.export_settings_get(project=released_project)
    data = {"license": "cc-by-4.0", "version": current.version}
    data |= {f"template_{scenario}": template for scenario, template in current.prompt_templates.items()}
    data["template_local_lead"] = "Kontext: {local_lead}\nFrage: {question}\n<answer></answer>"

    response = client.post(reverse("export_settings", args=[released_project.slug]), data)
    release = services.release_build_now(project=released_project, user=coordinator)

    assert response.status_code == 302
    assert release.license == "cc-by-4.0"
    first = prompt_lines(release, "local_lead")[0]
    assert first["prompt"].startswith("Kontext: 𠮶間茶餐廳")


@pytest.mark.parametrize(
    ("templates", "field"),
    [
        ({"local_lead": "{context} {question}"}, "prompt_templates.local_lead"),
        ({"both_leads": "no question here {local_lead}"}, "prompt_templates.both_leads"),
        ({"question_only": "{question"}, "prompt_templates.question_only"),
        ({"chain_of_thought": "{question}"}, "prompt_templates.chain_of_thought"),
    ],
)
def test_bad_prompt_templates_are_refused_naming_the_template(released_project, coordinator, templates, field):
    response = api_as(coordinator).patch(
        f"/api/projects/{released_project.slug}/export-settings/", {"prompt_templates": templates}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["field"] == field
    assert services.export_settings_get(project=released_project).version == 1


def test_the_api_requests_a_release_and_reports_its_progress(
    released_project, coordinator, django_capture_on_commit_callbacks
):
    client = api_as(coordinator)
    with django_capture_on_commit_callbacks(execute=True):
        requested = client.post(
            f"/api/projects/{released_project.slug}/releases/",
            {"splits": {"train": 80, "test": 20}, "seed": 9, "license": "cc-by-4.0"},
            format="json",
        )

    assert requested.status_code == 202
    assert requested.json()["status"] == "pending"
    detail = client.get(f"/api/projects/{released_project.slug}/releases/1/").json()
    assert (detail["status"], detail["percent"], detail["splits"]) == ("done", 100, {"train": 80, "test": 20})
    names = {entry["name"] for entry in detail["files"]}
    assert names >= {"manifest.json", "README.md", "lead_qa.jsonl", "page_pairs.jsonl"}
    assert not any("/" in name for name in names)  # no split copies, no prompt files: each line once
    again = client.post(f"/api/projects/{released_project.slug}/releases/", {}, format="json")
    assert again.status_code == 202 and again.json()["version"] == 2


def test_the_command_builds_a_release_and_copies_it_out(released_project, tmp_path, capsys):
    call_command("release_build", released_project.slug, "--version", "3", "--out", str(tmp_path / "out"))

    release = Release.objects.get()
    assert (release.version, release.status) == (3, "done")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["release"]["version"] == 3
    assert manifest["agreement"] is None and manifest["agreement_note"]
    assert {entry["name"] for entry in manifest["files"]} | {"manifest.json"} == {e["name"] for e in release.files}
    assert "v3: 6 lead QAs, 1 document QAs" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-project"], "No project with the slug"),
        (["yue-cmn", "--splits", "70,30"], "three percentages"),
        (["yue-cmn", "--statuses", "accepted,finished"], "unknown status 'finished'"),
        (["yue-cmn", "--format", "wilova"], "needs --out"),
    ],
)
def test_the_command_refuses_bad_arguments_clearly(released_project, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("release_build", *args)
    assert not Release.objects.exists()


def test_the_wilova_format_is_offered_only_when_its_writer_is_installed(
    released_project, tmp_path, monkeypatch, client, coordinator
):
    fmt = formats.PROJECT_FORMATS["wilova"]
    monkeypatch.setitem(
        formats.PROJECT_FORMATS, "wilova", formats.ProjectFormat(fmt.name, fmt.label, "exports.formats.absent", "x")
    )
    client.force_login(coordinator)

    assert formats.project_format("wilova") is None
    assert "WiLoVa" not in client.get(reverse("release_list", args=[released_project.slug])).content.decode()
    with pytest.raises(CommandError, match="not available"):
        call_command("release_build", released_project.slug, "--format", "wilova", "--out", str(tmp_path))


def test_a_project_format_writer_is_called_through_the_registry(released_project, tmp_path, monkeypatch):
    calls = []

    def fake_writer(project, out_dir: Path) -> list[Path]:
        calls.append(project.slug)
        path = out_dir / "de.bar-MW.json"
        path.write_text("[]")
        return [path]

    monkeypatch.setattr(formats.ProjectFormat, "load", lambda self: fake_writer)
    monkeypatch.setattr(formats.ProjectFormat, "applies", lambda self, project: True)

    call_command("release_build", released_project.slug, "--format", "wilova", "--out", str(tmp_path))
    archive, cleanup = services.project_format_archive(project=released_project, format="wilova")

    assert calls == [released_project.slug, released_project.slug]
    assert (tmp_path / "de.bar-MW.json").read_text() == "[]"
    assert archive.exists()
    cleanup()
    assert not archive.exists()


def test_the_admin_shows_releases_read_only(release_world, client):
    client.force_login(release_world["users"]["superuser"])
    release = release_world["published"]
    change_url = reverse("admin:exports_release_change", args=[release.pk])

    assert client.get(reverse("admin:exports_release_changelist")).status_code == 200
    assert client.get(change_url).status_code == 200  # view only
    assert client.post(change_url, {"changelog": "rewritten"}).status_code == 403
    assert client.post(reverse("admin:exports_release_delete", args=[release.pk]), {"post": "yes"}).status_code == 403
    release.refresh_from_db()
    assert (release.status, release.changelog) == ("done", "")


def test_the_release_list_runs_a_fixed_number_of_queries(release_world, client, django_assert_max_num_queries):
    from exports.models import Release as ReleaseModel

    for version in range(3, 13):
        ReleaseModel.objects.create(
            project=release_world["project"], version=version, status="failed", seed=1, license="cc-by-4.0"
        )
    client.force_login(release_world["users"]["coordinator"])
    api = api_as(release_world["users"]["coordinator"])

    with django_assert_max_num_queries(20):  # 12 for the page, 8 for the readiness checks (a fixed number)
        assert client.get(reverse("release_list", args=[release_world["slug"]])).status_code == 200
    with django_assert_max_num_queries(8):
        assert api.get(f"/api/projects/{release_world['slug']}/releases/").status_code == 200


def test_the_release_page_lists_splits_in_train_dev_test_order(release_world, client):
    client.force_login(release_world["users"]["annotator"])

    page = client.get(reverse("release_detail", args=[release_world["slug"], 1])).content.decode()

    assert "train 70%, dev 10%, test 20%" in page


def test_a_coordinator_cancels_a_waiting_release_from_its_page_and_the_api(released_project, coordinator, client):
    first = services.release_request(project=released_project, user=coordinator, enqueue=False)
    client.force_login(coordinator)
    page = client.get(reverse("release_detail", args=[released_project.slug, 1])).content.decode()

    response = client.post(reverse("release_cancel", args=[released_project.slug, 1]))

    assert reverse("release_cancel", args=[released_project.slug, 1]) in page
    assert response.status_code == 302
    first.refresh_from_db()
    assert first.status == "failed"
    services.release_request(project=released_project, user=coordinator, enqueue=False)
    api = api_as(coordinator).post(f"/api/projects/{released_project.slug}/releases/1/cancel/")
    assert (api.status_code, api.json()["status"]) == (200, "failed")


def test_writing_back_a_project_that_was_not_imported_in_that_format_is_refused(released_project, tmp_path, client):
    out = tmp_path / "out"
    with pytest.raises(CommandError, match="was not imported from wilova files"):
        call_command("release_build", released_project.slug, "--format", "wilova", "--out", str(out))
    client.force_login(released_project.memberships.get(is_coordinator=True).user)

    listing = client.get(reverse("release_list", args=[released_project.slug])).content.decode()
    download = client.get(reverse("project_format", args=[released_project.slug, "wilova"]))

    api = api_as(released_project.memberships.get(is_coordinator=True).user).get(
        f"/api/projects/{released_project.slug}/formats/wilova/"
    )

    assert "WiLoVa" not in listing
    assert download.status_code == 400
    assert (api.status_code, api.json()["field"]) == (400, "format")
    assert not out.exists()
