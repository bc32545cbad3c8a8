"""Published releases to score: a Cantonese–Mandarin one and a Bavarian–German one, each with its prompt files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.services.items import qa_item_create
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.submission import pair_submit
from exports import services as releases
from exports.models import Release
from tests import factories
from tests.exports import loading
from tests.exports.conftest import authored_pair


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def prompt_lines(release: Release, scenario: str) -> list[dict]:
    return loading.prompt_lines(release, scenario)


def predictions(release: Release, answer, *, model: str = "oracle", scenarios=None) -> bytes:
    """A predictions JSONL: `answer(line)` is the model output for each prompt line of each scenario."""
    lines = []
    for scenario in scenarios or ("question_only", "standard_lead", "local_lead", "both_leads"):
        for line in prompt_lines(release, scenario):
            lines.append({"id": line["id"], "scenario": scenario, "prediction": answer(line), "model": model})
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode() + b"\n"


@pytest.fixture
def yue_release(project, annotator, coordinator):
    """v1 of yue-cmn: three pairs, six accepted lead QAs (golds are simplified Mandarin with a 标准 marker)."""
    authored_pair(project, annotator)
    authored_pair(project, annotator, evidence=("深水埗", "六十幾年"))
    authored_pair(project, annotator, evidence=("星期三休息", "招牌菜"))
    release = releases.release_build_now(project=project, user=coordinator, seed=1)
    assert release.status == Release.Status.DONE, release.error
    return release


BAVARIAN_LEAD = "Minga is de Landeshauptstod vo Bayern. Da Viktualienmarkt is a großa Markt mit Bier und Brezn."
GERMAN_LEAD = "München ist die Landeshauptstadt von Bayern."


@pytest.fixture
def bar_world(db):
    """A Bavarian–German project with a coordinator, an annotator, a researcher and a published v1."""
    coordinator = factories.user("bar_coordinator")
    annotator = factories.user("bar_annotator")
    researcher = factories.user("bar_researcher")
    project = factories.project(coordinator, slug="bar-deu", local_language="bar", standard_language="deu")
    membership_set(project=project, user=annotator, roles={"annotator"})
    membership_set(project=project, user=researcher, roles={"researcher"})
    factories.pair(project, local_lead=BAVARIAN_LEAD, standard_lead=GERMAN_LEAD)
    pair = pair_claim_next(project=project, user=annotator)
    pair = pair_screen(pair=pair, user=annotator, decision="annotate")
    for question, answer, evidence in (
        ("Wovon ist München die Hauptstadt?", "Landeshauptstadt von Bayern", "Landeshauptstod vo Bayern"),
        ("Was gibt es auf dem Viktualienmarkt?", "Bier und Brezeln", "Bier und Brezn"),
    ):
        start = pair.local_lead.index(evidence)
        qa_item_create(
            pair=pair,
            user=annotator,
            question=question,
            answer_standard=answer,
            answer_local=evidence,
            spans=[{"start": start, "end": start + len(evidence), "text": evidence}],
        )
    pair_submit(pair=pair, user=annotator)
    from annotation.models import QAItem

    QAItem.objects.filter(pair=pair).update(status=QAItem.Status.ACCEPTED)
    release = releases.release_build_now(project=project, user=coordinator, seed=1)
    assert release.status == Release.Status.DONE, release.error
    return {"project": project, "release": release, "researcher": researcher, "coordinator": coordinator}


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path
