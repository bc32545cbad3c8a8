"""Domain labels: no label is chosen for the coordinator, and a label can be changed, its history kept."""

from __future__ import annotations

from django.urls import reverse

from audit.models import AuditEvent
from tests.conftest import api_as
from validation import services
from validation.models import SourceDomain


def test_the_label_choice_has_no_default_and_a_post_without_one_labels_nothing(client, imported, coordinator):
    client.force_login(coordinator)
    url = reverse("validation_domains", args=[imported.slug])

    page = client.get(url).content.decode()
    assert 'required><option value="" selected disabled>Choose a label</option>' in page
    response = client.post(url, {"domain": "qatarday.com"}, follow=True)

    assert "label: use one of" in response.content.decode()
    assert not SourceDomain.objects.exists()


def test_a_coordinator_changes_a_label_on_the_page_and_its_history_shows(client, imported, coordinator):
    services.source_domain_label(
        project=imported, domain="qatarday.com", label="very_reliable", user=coordinator, origin="coordinator"
    )
    client.force_login(coordinator)
    url = reverse("validation_domains", args=[imported.slug])

    response = client.post(
        url,
        {"action": "relabel", "domain": "qatarday.com", "label": "completely_unreliable", "note": "ads only"},
        follow=True,
    )

    page = response.content.decode()
    assert "qatarday.com is now completely unreliable." in page
    assert "Very reliable → Completely unreliable (ads only)" in page
    assert SourceDomain.objects.get(domain="qatarday.com").label == "completely_unreliable"
    event = AuditEvent.objects.get(action="validation.domain_relabelled")
    assert event.details["before"] == "very_reliable" and event.actor == coordinator


def test_the_api_changes_a_label_and_answers_its_history(imported, coordinator):
    api_as(coordinator).post(
        f"/api/projects/{imported.slug}/validation/domains/",
        {"domain": "kaleijy.com", "label": "very_reliable"},
        format="json",
    )
    url = f"/api/projects/{imported.slug}/validation/domains/kaleijy.com/"

    changed = api_as(coordinator).patch(url, {"label": "not_sure"}, format="json")
    same = api_as(coordinator).patch(url, {"label": "not_sure"}, format="json")
    blank = api_as(coordinator).patch(url, {"label": ""}, format="json")

    assert changed.status_code == 200 and changed.json()["label"] == "not_sure"
    assert [(h["before"], h["label"]) for h in changed.json()["history"]] == [
        ("very_reliable", "not_sure"),
        (None, "very_reliable"),
    ]
    assert same.status_code == 409 and blank.status_code == 400
    assert api_as(coordinator).get(url).json()["label"] == "not_sure"
