"""Prompt templates are capped in length and in placeholders: each placeholder copies a lead into every prompt,
so `{local_lead}` a thousand times (12 KB) and five items wrote a 200 MB prompt file. Refused on save, with
the limit named, through the API and the page; a template stored before the rule stops the build."""

from __future__ import annotations

import pytest
from django.urls import reverse

from exports import services as exports
from exports.models import ExportSettings
from tests import factories
from tests.conftest import api_as
from tests.exports.conftest import authored_pair

AMPLIFIER = "{question} " + "{local_lead}" * 1000  # 12 KB, a thousand copies of the lead per prompt
LONG = "{question} " + "x" * 5000


@pytest.mark.parametrize(
    ("template", "limit"), [(AMPLIFIER, "PROMPT_TEMPLATE_MAX"), (LONG, "PROMPT_TEMPLATE_MAX_CHARS")]
)
def test_an_amplifying_template_is_refused_through_the_api(project, coordinator, template, limit):
    response = api_as(coordinator).patch(
        f"/api/projects/{project.slug}/export-settings/", {"prompt_templates": {"local_lead": template}}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["field"] == "prompt_templates.local_lead"
    assert limit in response.json()["detail"]
    assert template not in exports.export_settings_get(project=project).prompt_templates.values()


def test_too_many_placeholders_are_refused_on_the_page_with_the_limit(client, project, coordinator):
    client.force_login(coordinator)
    row = exports.export_settings_get(project=project)
    form = {f"template_{scenario}": text for scenario, text in row.prompt_templates.items()}

    page = client.post(
        reverse("export_settings", args=[project.slug]),
        form | {"template_local_lead": "{question}" + " {local_lead}" * 11, "license": row.license,
                "version": row.version},
    )  # fmt: skip

    assert page.status_code == 200
    assert "has 12 placeholders; a template may have at most 10" in page.content.decode()


def test_a_template_within_the_caps_is_saved(project, coordinator):
    template = "{local_title}: {local_lead}\n{standard_title}: {standard_lead}\n{question}"

    response = api_as(coordinator).patch(
        f"/api/projects/{project.slug}/export-settings/", {"prompt_templates": {"both_leads": template}}, format="json"
    )

    assert response.status_code == 200
    assert exports.export_settings_get(project=project).prompt_templates["both_leads"] == template


def test_a_stored_amplifying_template_stops_the_build_before_writing(project, coordinator):
    authored_pair(project, factories.user("author"))
    row = exports.export_settings_get(project=project)
    ExportSettings.objects.filter(pk=row.pk).update(prompt_templates=row.prompt_templates | {"local_lead": AMPLIFIER})

    release = exports.release_build_now(project=project, user=coordinator, seed=1)

    assert release.status == "failed"
    assert "PROMPT_TEMPLATE_MAX" in release.error
