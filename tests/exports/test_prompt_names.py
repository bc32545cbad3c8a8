"""Prompt files name each context by the project's languages; a project still on the earlier wording gets the
named defaults by migration, and templates someone edited are kept."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from exports import services
from exports.models import LEGACY_PROMPT_TEMPLATES, ExportSettings
from tests.exports.conftest import authored_pair
from tests.exports.loading import prompt_lines

pytestmark = pytest.mark.django_db


def test_the_both_leads_prompt_says_which_lead_is_which(project, annotator, coordinator):
    authored_pair(project, annotator)

    release = services.release_build_now(project=project, user=coordinator, splits={})

    prompt = prompt_lines(release, "both_leads")[0]["prompt"]
    standard, local = project.standard.name, project.local.name
    assert prompt.startswith(f"{standard} lead section: ")
    assert f"\n\n{local} lead section: " in prompt
    assert "relevant information" not in prompt
    assert prompt_lines(release, "local_lead")[0]["prompt"].startswith(f"{local} lead section: ")


def test_the_migration_names_the_leads_of_untouched_templates_only(project, coordinator):
    from annotation.services.projects import project_create

    other = project_create(
        name="Edited", slug="edited", local_language="yue", standard_language="cmn", created_by=coordinator
    )
    ExportSettings.objects.create(project=project, prompt_templates=dict(LEGACY_PROMPT_TEMPLATES))
    edited = dict(LEGACY_PROMPT_TEMPLATES, both_leads="Context A: {standard_lead}\nContext B: {local_lead}\n{question}")
    ExportSettings.objects.create(project=other, prompt_templates=edited)
    migration = importlib.import_module("exports.migrations.0004_prompt_templates_name_the_leads")

    migration.name_the_leads(apps, None)

    named = ExportSettings.objects.get(project=project).prompt_templates
    assert named["both_leads"].startswith(f"{project.standard.name} lead section: {{standard_lead}}")
    kept = ExportSettings.objects.get(project=other).prompt_templates
    assert kept["both_leads"] == edited["both_leads"]  # edited by someone: left as it is
    assert kept["local_lead"].startswith(f"{project.local.name} lead section:")  # untouched ones are named
