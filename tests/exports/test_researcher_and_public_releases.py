"""The researcher reads releases, their statistics and agreement reports, and nothing else; a project may publish
its releases to anyone signed in, which opens the releases and only them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services.projects import project_update
from review import reports as agreement_reports
from tests.conftest import api_as


@pytest.fixture
def report(release_world):
    report, _ = agreement_reports.agreement_report_request(project=release_world["project"], enqueue=False)
    agreement_reports.agreement_report_compute(report_id=report.pk, bootstrap=0)
    return report


def test_a_researchers_project_page_is_the_releases(client, release_world, researcher):
    client.force_login(researcher)

    response = client.get(reverse("project_detail", args=[release_world["slug"]]))

    assert response["Location"] == reverse("release_list", args=[release_world["slug"]])
    page = client.get(response["Location"]).content.decode()
    assert reverse("agreement", args=[release_world["slug"]]) in page
    assert reverse("review_queue", args=[release_world["slug"]]) not in page
    assert reverse("project_members", args=[release_world["slug"]]) not in page


def test_a_researcher_reads_releases_statistics_and_agreement_reports(client, release_world, researcher, report):
    slug = release_world["slug"]
    client.force_login(researcher)
    api = api_as(researcher)

    pages = [
        client.get(reverse("release_list", args=[slug])),
        client.get(reverse("release_detail", args=[slug, 1])),
        client.get(reverse("release_file", args=[slug, 1, "lead_qa.jsonl"])),
        client.get(reverse("release_file", args=[slug, 1, "manifest.json"])),  # the statistics
        client.get(reverse("agreement", args=[slug])),
        client.get(reverse("agreement_report", args=[slug, report.pk])),
        client.get(reverse("agreement_download", args=[slug, report.pk, "json"])),
    ]
    calls = [
        api.get(f"/api/projects/{slug}/releases/"),
        api.get(f"/api/projects/{slug}/releases/1/"),
        api.get(f"/api/projects/{slug}/agreement/reports/"),
    ]

    assert [response.status_code for response in pages + calls] == [200] * 10
    assert "statistics" in b"".join(pages[3].streaming_content).decode()


def test_a_researcher_is_refused_every_queue_and_every_change(client, release_world, researcher):
    slug = release_world["slug"]
    client.force_login(researcher)
    api = api_as(researcher)

    refused = [
        client.post(reverse("queue_next", args=[slug])),
        client.post(reverse("review_next", args=[slug])),
        client.get(reverse("review_queue", args=[slug])),
        client.get(reverse("pair_list", args=[slug])),
        client.get(reverse("my_items", args=[slug])),
        client.get(reverse("dashboard", args=[slug])),
        client.get(reverse("project_members", args=[slug])),
        client.post(reverse("release_create", args=[slug]), {"item_statuses": ["accepted"]}),
        client.post(reverse("agreement_compute", args=[slug])),
        api.post(f"/api/projects/{slug}/queue/next/"),
        api.post(f"/api/projects/{slug}/review/next/"),
        api.get(f"/api/projects/{slug}/pairs/"),
        api.post(f"/api/projects/{slug}/releases/", {"item_statuses": ["accepted"]}, format="json"),
    ]

    assert [response.status_code for response in refused] == [403] * len(refused)


def test_agreement_reports_show_a_researcher_no_rater_names(client, release_world, researcher, report):
    response = api_as(researcher).get(f"/api/projects/{release_world['slug']}/agreement/reports/{report.pk}/")
    coordinator_view = api_as(release_world["users"]["coordinator"]).get(
        f"/api/projects/{release_world['slug']}/agreement/reports/{report.pk}/"
    )

    scopes = response.json()["result"]["scopes"]
    assert response.status_code == coordinator_view.status_code == 200
    assert "redacted" in response.json()["result"] and "redacted" not in coordinator_view.json()["result"]
    assert all(scope["summary"]["raters"] == [] for scope in scopes.values())


# Releases published to anyone signed in


def _public(project, coordinator) -> None:
    project_update(project=project, actor=coordinator, releases_public=True)


def test_releases_are_closed_to_non_members_until_the_project_publishes_them(client, release_world):
    project, outsider = release_world["project"], release_world["users"]["outsider"]
    client.force_login(outsider)
    url = reverse("release_list", args=[project.slug])
    assert client.get(url).status_code == 404

    api_as(release_world["users"]["coordinator"]).patch(
        f"/api/projects/{project.slug}/", {"releases_public": True}, format="json"
    )

    api = api_as(outsider)
    opened = [
        client.get(url),
        client.get(reverse("release_detail", args=[project.slug, 1])),
        client.get(reverse("release_file", args=[project.slug, 1, "lead_qa.jsonl"])),
        client.get(reverse("release_archive", args=[project.slug, 1])),
        client.get(reverse("release_diff", args=[project.slug])),
        api.get(f"/api/projects/{project.slug}/releases/"),
        api.get(f"/api/projects/{project.slug}/releases/1/"),
        api.get(f"/api/projects/{project.slug}/releases/1/files/lead_qa.jsonl"),
        api.get(f"/api/projects/{project.slug}/releases/1/archive/"),
    ]
    assert [response.status_code for response in opened] == [200] * len(opened)
    assert reverse("project_guidelines", args=[project.slug]) not in opened[0].content.decode()


def test_published_releases_open_nothing_else_of_the_project(client, release_world):
    project, outsider = release_world["project"], release_world["users"]["outsider"]
    _public(project, release_world["users"]["coordinator"])
    client.force_login(outsider)
    api = api_as(outsider)

    closed = [
        client.get(reverse("project_detail", args=[project.slug])),
        client.get(reverse("project_guidelines", args=[project.slug])),
        client.get(reverse("agreement", args=[project.slug])),
        client.post(reverse("release_create", args=[project.slug]), {"item_statuses": ["accepted"]}),
        client.post(reverse("release_rebuild", args=[project.slug, 2])),
        client.get(reverse("export_settings", args=[project.slug])),
        api.get(f"/api/projects/{project.slug}/"),
        api.post(f"/api/projects/{project.slug}/releases/", {"item_statuses": ["accepted"]}, format="json"),
        api.get(f"/api/projects/{project.slug}/export-settings/"),
    ]

    assert [response.status_code for response in closed] == [404] * len(closed)
    assert project.slug not in client.get(reverse("home")).content.decode()


def test_published_releases_stay_closed_to_visitors_who_are_not_signed_in(client, api_client, release_world):
    project = release_world["project"]
    _public(project, release_world["users"]["coordinator"])

    page = client.get(reverse("release_list", args=[project.slug]))
    api = api_client.get(f"/api/projects/{project.slug}/releases/")

    assert page.status_code == 302 and page["Location"].startswith(reverse("login"))
    assert api.status_code == 403


def test_the_setting_is_on_the_settings_page_and_in_the_audit_log(client, release_world):
    from audit.models import Action, AuditEvent

    project, coordinator = release_world["project"], release_world["users"]["coordinator"]
    client.force_login(coordinator)
    assert (
        "Publish releases to anyone signed in"
        in client.get(reverse("project_settings", args=[project.slug])).content.decode()
    )

    _public(project, coordinator)

    event = AuditEvent.objects.filter(action=Action.PROJECT_SETTINGS, project=project).latest("id")
    assert event.details["after"] == {"releases_public": True}
