"""A validation project with the shared cast: the reviewer (and a second one) validate."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.importers.sources import ImportSource
from annotation.services.members import membership_set
from tests import factories
from validation import services

NATIVQA = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "nativqa"
if not NATIVQA.is_dir():  # CI keeps the fixtures beside its clone; locally they are in /work/shared
    NATIVQA = Path("/work/shared/fixtures/nativqa")

TSV_HEADER = "data_id\tcategory\tinput_query\tquestion\tanswer\tquestion_type\tanswer_URLs\tengine\n"
COLLECTED_TSV = TSV_HEADER + (
    "1\tanimal\tWhat is Doha State animal?\tWhat is the national animal of Qatar?\tThe Arabian oryx."
    "\tfactoid\t['https://www.qatarday.com/animals']\tgoogle\n"
    "2\tfood\tFood in Doha\tWhat is the national dish of Qatar?\tMachboos, spiced rice with meat."
    "\tfactoid\t['https://kaleijy.com/food/machboos']\tgoogle\n"
    "3\tfood\tFood in Doha\tWhat is the national dish of Qatar ?\tMachboos."
    "\tfactoid\t['https://blog.example.org/qatar']\tbing\n"
    "4\tsport\tSport in Doha\tWhich stadium hosted the 2022 final?\tLusail Stadium."
    "\tfactoid\t['https://www.for9a.com/stadiums']\tgoogle\n"
)

ARABIC_TSV = TSV_HEADER + (
    "a1\tfood\tأكلات الدوحة\tما هو الطبق الوطني في قطر؟\tالمجبوس، أرز بالبهارات واللحم."
    "\tfactoid\thttps://kaleijy.com/ar/food\tgoogle\n"
)


def tsv_source(text: str, name: str = "collected.tsv") -> ImportSource:
    return ImportSource(name=name, data=text.encode("utf-8"))


@pytest.fixture
def second_reviewer(db):
    return factories.user("reviewer2")


@pytest.fixture
def vproject(coordinator, annotator, reviewer, second_reviewer):
    project = services.validation_project_create(
        name="Qatar validation", slug="qa-eng", language="eng", location="Qatar", created_by=coordinator
    )
    membership_set(project=project, user=annotator, roles={"annotator"})
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    membership_set(project=project, user=second_reviewer, roles={"reviewer"})
    return project


@pytest.fixture
def imported(vproject, coordinator):
    report = services.validation_items_import(project=vproject, source=tsv_source(COLLECTED_TSV), user=coordinator)
    assert report.ok, report.problems
    return vproject
