"""The protocol (how many lead QAs a pair takes) is one setting, quoted the same everywhere a person reads it:
the guidelines page and panel, the authoring page, the submit check and the release's dataset card."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.models import Project
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_update
from annotation.services.submission import pair_submit
from common.errors import InvalidInput
from exports import services as exports
from tests import factories
from tests.exports.conftest import authored_pair

pytestmark = pytest.mark.django_db


def test_every_screen_and_the_card_quote_the_one_setting(client, project, annotator, coordinator):
    project_update(project=project, lead_qa_min=1, lead_qa_max=3, guidelines="# Guidelines\n\nWrite QAs.")
    project.refresh_from_db()
    assert project.lead_qa_range == "1–3"
    client.force_login(annotator)

    guidelines = client.get(reverse("project_guidelines", args=[project.slug])).content.decode()
    factories.pair(project)
    pair = pair_claim_next(project=project, user=annotator)
    pair_screen(pair=pair, user=annotator, decision="annotate")
    authoring = client.get(reverse("pair_detail", args=[project.slug, pair.pk])).content.decode()

    for page in (guidelines, authoring):
        assert "1–3 lead-section QAs per pair" in page and "2–3" not in page
    with pytest.raises(InvalidInput, match="1–3 lead-section QAs per pair"):
        pair_submit(pair=pair, user=annotator)

    authored_pair(project, annotator, evidence=("深水埗",))
    release = exports.release_build_now(project=project, user=coordinator)
    card = (Path(settings.MEDIA_ROOT) / release.path / "README.md").read_text()
    assert "wrote 1–3 lead QAs per kept pair" in card and "2–3" not in card


def test_a_fixed_number_reads_as_one_number():
    project = Project(lead_qa_min=2, lead_qa_max=2)
    assert project.lead_qa_range == "2"


def test_the_demo_guidelines_state_no_number_of_their_own():
    text = (Path(settings.BASE_DIR) / "demo" / "data" / "guidelines.md").read_text(encoding="utf-8")
    assert "2–3" not in text and "two or three" not in text
