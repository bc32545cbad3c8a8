"""Releases of other studies in the WiLoVa format, made here in their shape (not copies of any release).

Each study brings what the Bavarian–German release does not: hyphenated wiki codes in its file names, a region
vocabulary of its own, residue in empty slots, floats where the Bavarian file has integers, empty strings where
it has nulls. Each file is checked for its counts, its warnings and a byte-identical write-back.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.importers.sources import ImportSource
from annotation.models import PagePair, QAItem, SourceRow
from annotation.services.projects import project_region_vocabulary_map
from annotation.wilova import file_name_mismatch, file_wikis, region_vocabulary_seed
from exports.formats.wilova import wilova_file_bytes
from review.models import ReviewSlot
from tests import factories
from tests.conftest import api_as
from wikiqa.importers.services import pairs_import

Q0 = "Q0: Should we annotate this dialect-standard Wikipedia page pair? If no, specify why."
NOTE = "Note: if this is an interesting/tricky/difficult example, write a brief explanation here."
YUE_BASE = "zh.zh-yue-YM.json"
YUE_QUALITY = "zh.zh-yue-YM_QualityMeta-LP.json"


def study_row(number: int, *, decision: str = "Yes", slots: dict[int, dict[str, Any]] | None = None, **fields) -> dict:
    """A base row as the spreadsheet tooling writes it: every slot present, empty ones as null."""
    local_lead = f"呢篇文第{number}段：香港嘅茶餐廳好出名，奶茶同菠蘿油都係招牌。"
    standard_lead = f"本文第{number}段：香港的茶餐厅很有名。"
    row: dict[str, Any] = {
        "standard_title": f"茶餐厅{number}",
        "dialect_title": f"茶餐廳{number}",
        "standard_len_sum": float(len(standard_lead)),  # the Bavarian file has integers here
        "dialect_len_sum": float(len(local_lead)),
        "standard_summary": standard_lead,
        "dialect_summary": local_lead,
        Q0: decision,
    }
    for slot in (1, 2, 3):
        row |= {f"Question{slot}": None, f"Source{slot}": None, f"Answer{slot}": None, f"Translation{slot}": None}
    row |= {
        "standard_len_text": 5000.0,
        "dialect_len_text": 7000,
        "standard_url": f"https://zh.wikipedia.org/wiki/C{number}",
        "dialect_url": f"https://zh-yue.wikipedia.org/wiki/C{number}",
        "Question4": None,
        "Source4": None,
        "Answer4": None,
        "Translation4": None,
        "Validate1": None,
        "Validate2": None,
        "Validate3": None,
        NOTE: None,
        "num_langs": 12.0,
    }
    for slot, values in (slots or {}).items():
        row.update({f"{name}{slot}": value for name, value in values.items()})
    row.update(fields)
    return row


def qa(question: str, source: str | None, answer: str, translation: str) -> dict[str, Any]:
    return {"Question": question, "Source": source, "Answer": answer, "Translation": translation}


def quality_of(row: dict, *, region: str | None, checked: dict[int, tuple[Any, Any]] | None = None) -> dict:
    """The review pass: the base row repeated, with checked texts and the article labels added."""
    out = dict(row)
    for slot, (question, translation) in (checked or {}).items():
        out[f"Question{slot}_qualitychecked"] = question
        out[f"Translation{slot}_qualitychecked"] = translation
    out |= {"Article_Topic": "food", "Article_Region": region, "Article_Entity": "", "num_langs": row["num_langs"]}
    return out


def encode(rows: dict[str, dict]) -> bytes:
    return json.dumps(rows, indent=4, ensure_ascii=False).encode()


@pytest.fixture
def yue_release() -> dict[str, bytes]:
    return cantonese_release()


def cantonese_release() -> dict[str, bytes]:
    """A Cantonese–Mandarin release: Hongkong spelled as one word, Answer4 residue, "" where Bavarian has null."""
    rows = {
        "茶餐厅1": study_row(
            1,
            slots={
                1: qa("香港的茶餐厅有什么招牌？", "奶茶同菠蘿油", "奶茶同菠蘿油", "奶茶和菠萝包"),
                2: qa("茶餐厅在哪里有名？", "香港", "香港", "香港"),
                4: qa("茶餐厅几点开门？", "朝早七點", "朝早七點", "早上七点"),
            },
        ),
        # Spreadsheet residue: a bracket pair left in an otherwise empty slot 4, and "" instead of null.
        "茶餐厅2": study_row(
            2,
            slots={1: qa("什么最出名？", "奶茶", "奶茶", "奶茶"), 4: qa("", "", "（）", "")},
            **{NOTE: ""},
        ),
        "茶餐厅3": study_row(3, decision="Translated"),
        "茶餐厅4": study_row(4, decision="Disambiguation"),
        "茶餐厅5": study_row(5, slots={1: qa("茶餐厅卖什么？", "菠蘿油", "菠蘿油", "菠萝油")}),
    }
    quality = {
        "茶餐厅1": quality_of(
            rows["茶餐厅1"],
            region="Hongkong",
            checked={
                1: ("香港的茶餐厅有什么招牌？", "奶茶和菠萝包"),
                2: ("茶餐厅在哪里最有名？", "香港"),
                4: ("茶餐厅几点开门？", "早上七点"),
            },
        ),
        "茶餐厅2": quality_of(rows["茶餐厅2"], region="Guangdong", checked={1: ("什么最出名？", "奶茶")}),
        "茶餐厅3": quality_of(rows["茶餐厅3"], region=""),
        "茶餐厅4": quality_of(rows["茶餐厅4"], region=None),
        "茶餐厅5": quality_of(rows["茶餐厅5"], region="China", checked={1: (None, None)}),
    }
    return {YUE_BASE: encode(rows), YUE_QUALITY: encode(quality)}


def sources(release: dict[str, bytes], *names: str) -> list[ImportSource]:
    return [ImportSource(name=name, data=release[name]) for name in (names or release)]


def warnings(report) -> list[tuple]:
    return [(w.file, w.record, w.field) for w in report.warnings]


def written_back(project) -> dict[str, bytes]:
    return dict(wilova_file_bytes(project))


# File names


@pytest.mark.parametrize(
    ("name", "wikis"),
    [
        ("de.bar-MW.json", ("de", "bar")),
        ("de.bar-MW_QualityMeta-VB.json", ("de", "bar")),
        ("zh.zh-yue-YM.json", ("zh", "zh-yue")),
        ("zh.zh-yue-YM_QualityMeta-LP.json", ("zh", "zh-yue")),
        ("zh.zh-min-nan-TH.json", ("zh", "zh-min-nan")),
        ("lt.bat-smg-JP_QualityMeta-RK.json", ("lt", "bat-smg")),
        ("it.roa-tara-GM.json", ("it", "roa-tara")),
        ("be.be-tarask-AK.json", ("be", "be-tarask")),
        ("zh.zh-classical-WY.json", ("zh", "zh-classical")),
        ("be.be-x-old-AK.json", ("be", "be-x-old")),
        ("zh.zh-yue.json", ("zh", "zh-yue")),  # no annotators' tag
        ("de.bar-mw.json", ("de", "bar")),  # a tag in lower case
        ("pairs.json", None),
    ],
)
def test_release_file_names_are_read_against_real_wiki_codes(name, wikis):
    assert file_wikis(name) == wikis


def test_a_file_name_that_disagrees_with_the_project_says_what_it_read_and_what_to_do(bar_deu, yue_release):
    report = pairs_import(project=bar_deu, paths=sources(yue_release, YUE_BASE))

    assert not report.ok
    message = report.problems[0].message
    assert "local wiki 'zh-yue'" in message and "standard wiki 'zh'" in message and "annotators YM" in message
    assert "bar.wikipedia.org with de.wikipedia.org" in message and "a project for zh-yue→zh" in message
    assert file_name_mismatch("zh.zh-yue-YM.json", standard_wiki="zh", local_wiki="zh-yue") is None


@pytest.mark.parametrize(
    ("name", "local_wiki", "standard_wiki"),
    [("zh.zh-min-nan-TH.json", "zh-min-nan", "zh"), ("lt.bat-smg-JP.json", "bat-smg", "lt")],
)
def test_a_release_of_a_hyphenated_wiki_imports_into_its_project(coordinator, name, local_wiki, standard_wiki):
    project = factories.project(
        coordinator, slug="hyphen", local_language="nan", local_wiki=local_wiki, standard_wiki=standard_wiki
    )
    data = encode({"茶餐厅1": study_row(1, slots={1: qa("问？", "茶餐廳", "茶餐廳", "茶餐厅")})})

    report = pairs_import(project=project, paths=[ImportSource(name=name, data=data)])

    assert report.ok, [str(p) for p in report.problems]
    assert (report.created, report.counts["items"]) == (1, {"lead": 1})
    assert written_back(project) == {name: data}


# A Cantonese–Mandarin release


def test_the_cantonese_release_imports_with_its_own_regions_and_residue_and_writes_back_byte_for_byte(
    project, yue_release
):
    report = pairs_import(project=project, paths=sources(yue_release))

    assert report.ok, [str(p) for p in report.problems]
    assert (report.created, report.already_present) == (5, 0)
    assert report.counts["screenings"] == {"annotate": 3, "translated": 1, "structural": 1}
    assert report.counts["items"] == {"lead": 4, "document": 1}
    assert report.counts["item_statuses"] == {"accepted": 4, "rejected": 1}
    assert warnings(report) == [(YUE_BASE, "茶餐厅2", "Answer4")]
    assert "slot 4 has no question" in report.warnings[0].message
    assert "1 warning: residue kept as written" in report.summary()
    assert not QAItem.objects.filter(project=project, metadata__wilova__slot=4, pair__standard_title="茶餐厅2")
    labels = {
        pair.standard_title: pair.metadata["wilova"].get("labels", {})
        for pair in PagePair.objects.filter(project=project)
    }
    assert (labels["茶餐厅1"]["region"], labels["茶餐厅1"]["region_detail"]) == ("local", "Hongkong")
    assert (labels["茶餐厅2"]["region"], labels["茶餐厅5"]["region"]) == ("local", "standard")
    assert labels["茶餐厅3"].get("region") is None
    assert written_back(project) == yue_release


def test_the_residue_stays_in_the_stored_row_verbatim(project, yue_release):
    pairs_import(project=project, paths=sources(yue_release, YUE_BASE))

    row = SourceRow.objects.get(source_file__name=YUE_BASE, key="茶餐厅2")

    stored = json.loads(row.raw)
    assert (stored["Answer4"], stored["Question4"], stored["Translation4"], stored[NOTE]) == ("（）", "", "", "")
    assert stored["num_langs"] == 12.0 and isinstance(stored["standard_len_sum"], float)


def test_text_where_nothing_is_expected_is_kept_and_reported_not_imported(project):
    rows = {
        # A question on a pair screened as a translation, and a Validate text in a slot without a question.
        "茶餐厅1": study_row(1, decision="Translated", slots={1: qa("问？", "源", "答", "答")}),
        "茶餐厅2": study_row(2, Validate2="香港", Source3="  "),
    }
    quality = {
        "茶餐厅1": quality_of(rows["茶餐厅1"], region="Macau"),
        "茶餐厅2": quality_of(rows["茶餐厅2"], region="Taiwan", checked={3: ("审过的问题？", None)}),
    }
    release = {YUE_BASE: encode(rows), YUE_QUALITY: encode(quality)}

    report = pairs_import(project=project, paths=sources(release))

    assert report.ok, [str(p) for p in report.problems]
    assert (report.created, report.counts["items"]) == (2, {})
    assert warnings(report) == [
        (YUE_BASE, "茶餐厅1", "Question1"),
        (YUE_BASE, "茶餐厅2", "Validate2"),
        (YUE_QUALITY, "茶餐厅2", "Question3_qualitychecked"),
    ]
    assert "screened 'Translated'" in report.warnings[0].message
    assert not QAItem.objects.filter(project=project).exists()
    assert written_back(project) == release


def test_a_length_that_is_not_a_whole_number_names_its_record_and_field(project):
    data = encode({"茶餐厅1": study_row(1, dialect_len_text=7000.5)})

    report = pairs_import(project=project, paths=[ImportSource(name=YUE_BASE, data=data)])

    assert [(p.record, p.field) for p in report.problems] == [("茶餐厅1", "dialect_len_text")]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_nan_or_infinity_in_a_release_is_a_record_and_field_error(project, token):
    data = encode({"茶餐厅1": study_row(1)}).replace(b'"num_langs": 12.0', f'"num_langs": {token}'.encode())

    report = pairs_import(project=project, paths=[ImportSource(name=YUE_BASE, data=data)])

    assert [(p.file, p.record, p.field) for p in report.problems] == [(YUE_BASE, "茶餐厅1", "num_langs")]
    assert "JSON does not allow" in report.problems[0].message and token in report.problems[0].message
    assert not PagePair.objects.filter(project=project).exists()


def test_every_nan_of_a_release_file_is_named_by_its_record_and_field(project):
    rows = {"茶餐厅1": study_row(1), "茶餐厅2": study_row(2)}
    data = encode(rows).replace(b'"num_langs": 12.0', b'"num_langs": NaN')

    report = pairs_import(project=project, paths=[ImportSource(name=YUE_BASE, data=data)])

    assert [(p.record, p.field) for p in report.problems] == [("茶餐厅1", "num_langs"), ("茶餐厅2", "num_langs")]


def test_nan_in_a_jsonl_line_is_a_line_and_field_error_not_a_database_error(project, tmp_path):
    path = tmp_path / "pairs.jsonl"
    line = {
        "local_title": "唐樓",
        "standard_title": "唐楼",
        "local_url": "https://zh-yue.wikipedia.org/wiki/T",
        "standard_url": "https://zh.wikipedia.org/wiki/T",
        "local_lead": "唐樓係舊式樓宇。",
        "standard_lead": "唐楼。",
        "metadata": {"score": 1.5},
    }
    path.write_text(json.dumps(line, ensure_ascii=False).replace("1.5", "NaN") + "\n", encoding="utf-8")

    report = pairs_import(project=project, paths=[path])

    assert [(p.line, p.field) for p in report.problems] == [(1, "metadata.score")]
    assert not PagePair.objects.filter(project=project).exists()


# Region vocabularies


def test_new_projects_start_with_their_studys_region_table(coordinator, bar_deu, project):
    other = factories.project(coordinator, slug="arz-arb", local_language="arz", standard_language="arb")

    assert bar_deu.region_vocabulary["South Tyrol"] == "local"
    assert bar_deu.region_vocabulary["majority-area"] == "standard"
    assert project.region_vocabulary == region_vocabulary_seed("yue")
    assert {project.region_vocabulary[name] for name in ("Guangdong", "Hong Kong", "Hongkong", "Macau")} == {"local"}
    assert (project.region_vocabulary["China"], project.region_vocabulary["Taiwan"]) == ("standard", "standard")
    assert other.region_vocabulary == {"Other": "other", "General": "other"}


def nan_release() -> dict[str, bytes]:
    """A Min Nan–Mandarin study whose regions no seeded table knows."""
    rows = {f"茶餐厅{n}": study_row(n, slots={1: qa("问？", "茶餐廳", "茶餐廳", "茶餐厅")}) for n in (1, 2, 3, 4)}
    regions = {"茶餐厅1": "Fujian", "茶餐厅2": "Fujian", "茶餐厅3": "Taiwan", "茶餐厅4": "General"}
    quality = {key: quality_of(row, region=regions[key], checked={1: ("问？", "茶餐厅")}) for key, row in rows.items()}
    return {"zh.zh-min-nan-TH.json": encode(rows), "zh.zh-min-nan-TH_QualityMeta-KL.json": encode(quality)}


@pytest.fixture
def nan_project(coordinator):
    return factories.project(coordinator, slug="nan-cmn", local_language="nan", standard_language="cmn")


def test_a_dry_run_lists_the_regions_it_does_not_know_with_their_counts(nan_project):
    report = pairs_import(project=nan_project, paths=sources(nan_release()), dry_run=True)

    assert not report.ok and report.unknown_regions == {"Fujian": 2, "Taiwan": 1}
    assert [(p.record, p.field) for p in report.problems] == [
        ("茶餐厅1", "Article_Region"),
        ("茶餐厅3", "Article_Region"),
    ]
    assert "unknown region 'Fujian' (2 records)" in report.problems[0].message


def test_regions_mapped_through_the_api_import_with_the_fine_value_kept(
    nan_project, coordinator, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    release = nan_release()
    client = api_as(coordinator)
    url = f"/api/projects/{nan_project.slug}/imports/"
    files = [SimpleUploadedFile(name, data) for name, data in release.items()]
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(url, {"files": files, "dry_run": "true"}, format="multipart")
    dry = client.get(f"{url}{created.data['id']}/").data
    assert dry["report"]["unknown_regions"] == {"Fujian": 2, "Taiwan": 1} and dry["rerunnable"] is True

    bad = client.post(f"{url}{dry['id']}/rerun/", {"region_map": {"Fujian": "nearby"}}, format="json")
    assert bad.status_code == 400 and "must map to one of the project's regions" in bad.data["detail"]
    with django_capture_on_commit_callbacks(execute=True):
        again = client.post(
            f"{url}{dry['id']}/rerun/", {"region_map": {"Fujian": "local", "Taiwan": "standard"}}, format="json"
        )

    assert again.status_code == 202
    job = client.get(f"{url}{again.data['id']}/").data
    assert (job["status"], job["dry_run"], job["report"]["created"]) == ("done", False, 4), job["report"]
    nan_project.refresh_from_db()
    assert (nan_project.region_vocabulary["Fujian"], nan_project.region_vocabulary["Taiwan"]) == ("local", "standard")
    pair = PagePair.objects.get(project=nan_project, standard_title="茶餐厅1")
    assert pair.metadata["wilova"]["labels"]["region_detail"] == "Fujian"
    assert pair.metadata["wilova"]["labels"]["region"] == "local"
    assert written_back(nan_project) == release
    assert client.post(f"{url}{dry['id']}/rerun/", {}, format="json").status_code == 409  # its files went with it


def test_changing_the_vocabulary_after_an_import_does_not_change_the_write_back(nan_project):
    release = nan_release()
    project_region_vocabulary_map(project=nan_project, mapping={"Fujian": "local", "Taiwan": "standard"})
    pairs_import(project=nan_project, paths=sources(release))

    project_region_vocabulary_map(project=nan_project, mapping={"Taiwan": "local"})

    assert written_back(nan_project) == release


def test_the_region_vocabulary_is_edited_on_the_settings_page_and_a_bad_line_keeps_the_input(
    client, project, coordinator
):
    client.force_login(coordinator)
    url = reverse("project_settings", args=[project.slug])
    page = client.get(url).content.decode()
    assert "Hongkong = local" in page
    base = {
        "name": project.name,
        "lead_qa_min": 2,
        "lead_qa_max": 3,
        "reviewers_per_item": 1,
        "claim_minutes": 30,
        "version": project.version,
    }

    refused = client.post(url, base | {"region_vocabulary": "Hong Kong = local\nShenzhen nearby"})
    wrong = client.post(url, base | {"region_vocabulary": "Shenzhen = nearby"})
    saved = client.post(url, base | {"region_vocabulary": "Shenzhen = local\nTaiwan = standard"})

    assert refused.status_code == 200 and "Shenzhen nearby" in refused.content.decode()
    assert "needs the form: fine region = region" in refused.content.decode()
    assert "must map to one of the project&#x27;s regions" in wrong.content.decode()
    assert saved.status_code == 302
    project.refresh_from_db()
    assert project.region_vocabulary == {"Shenzhen": "local", "Taiwan": "standard"}


def test_the_region_vocabulary_through_the_project_api(project, coordinator):
    client = api_as(coordinator)
    url = f"/api/projects/{project.slug}/"

    refused = client.patch(url, {"region_vocabulary": {"Macau": "elsewhere"}}, format="json")
    saved = client.patch(url, {"region_vocabulary": {"Macau": "local", " Other ": "other"}}, format="json")

    assert refused.status_code == 400 and refused.data["field"] == "region_vocabulary"
    assert saved.status_code == 200 and saved.data["region_vocabulary"] == {"Macau": "local", "Other": "other"}


# A review file after its base; review slots; limits


def test_a_review_file_imported_after_its_base_applies_its_outcomes(project, yue_release):
    base = pairs_import(project=project, paths=sources(yue_release, YUE_BASE))
    assert base.counts["item_statuses"] == {"submitted": 5}
    assert ReviewSlot.objects.filter(item__project=project, status="open").count() == 5

    report = pairs_import(project=project, paths=sources(yue_release, YUE_QUALITY))

    assert report.ok, [str(p) for p in report.problems]
    assert (report.created, report.already_present) == (0, 5)
    assert report.counts["review_outcomes"] == {"accepted": 4, "rejected": 1}
    statuses = sorted(QAItem.objects.filter(project=project).values_list("status", flat=True))
    assert statuses == ["accepted", "accepted", "accepted", "accepted", "rejected"]
    rewritten = QAItem.objects.get(project=project, pair__standard_title="茶餐厅1", metadata__wilova__slot=2)
    assert rewritten.question == "茶餐厅在哪里最有名？"
    assert list(rewritten.revisions.values_list("reason", flat=True)) == ["imported", "reviewer_rewrite"]
    assert not ReviewSlot.objects.filter(item__project=project, status="open").exists()
    pair = PagePair.objects.get(project=project, standard_title="茶餐厅1")
    assert pair.metadata["wilova"]["labels"]["region_detail"] == "Hongkong"
    assert written_back(project) == yue_release


def test_a_review_file_does_not_overwrite_what_was_reviewed_in_localqa_meanwhile(project, yue_release):
    pairs_import(project=project, paths=sources(yue_release, YUE_BASE))
    item = QAItem.objects.get(project=project, pair__standard_title="茶餐厅5")
    QAItem.objects.filter(pk=item.pk).update(status="accepted", version=2)

    report = pairs_import(project=project, paths=sources(yue_release, YUE_QUALITY))

    assert report.ok
    assert report.counts["review_outcomes"] == {"accepted": 4}
    # The review file alone repeats the base row's residue, so it warns of it too.
    assert warnings(report) == [
        (YUE_QUALITY, "茶餐厅2", "Answer4"),
        (YUE_QUALITY, "茶餐厅5", "Question1_qualitychecked"),
    ]
    assert "changed in localqa since its base import" in report.warnings[1].message
    assert QAItem.objects.get(pk=item.pk).status == "accepted"


def test_the_bavarian_review_file_after_its_base_gives_what_importing_both_gives(bar_deu, wilova_sources):
    base, quality = wilova_sources
    pairs_import(project=bar_deu, paths=[base])

    report = pairs_import(project=bar_deu, paths=[quality])

    assert report.ok and report.already_present == 497
    items = QAItem.objects.filter(project=bar_deu)
    assert (items.filter(status="rejected").count(), items.filter(status="accepted").count()) == (1, 223)
    assert sum(item.revisions.count() == 2 for item in items) == 13
    assert written_back(bar_deu) == {base.name: base.data, quality.name: quality.data}


def test_items_imported_in_review_can_be_reviewed(project, reviewer, yue_release):
    pairs_import(project=project, paths=sources(yue_release, YUE_BASE))

    response = api_as(reviewer).post(f"/api/projects/{project.slug}/review/next/")

    assert response.status_code == 200, response.content
    assert QAItem.objects.get(pk=response.data["item"]["id"]).status == "submitted"


def test_a_lead_over_the_limit_is_refused_naming_the_record(project, settings):
    settings.IMPORT_MAX_LEAD_CHARS = 20
    data = encode({"茶餐厅1": study_row(1)})

    report = pairs_import(project=project, paths=[ImportSource(name=YUE_BASE, data=data)])

    assert [(p.record, p.field) for p in report.problems] == [("茶餐厅1", "dialect_summary")]
    assert "IMPORT_MAX_LEAD_CHARS" in report.problems[0].message


def test_texts_and_spans_over_the_limits_are_refused_in_jsonl(project, tmp_path, settings):
    settings.IMPORT_MAX_TEXT_CHARS = 10
    settings.IMPORT_MAX_SPANS_PER_ITEM = 3
    record = {
        "local_title": "唐樓",
        "standard_title": "唐楼",
        "local_url": "https://zh-yue.wikipedia.org/wiki/T",
        "standard_url": "https://zh.wikipedia.org/wiki/T",
        "local_lead": "唐樓係舊式樓宇。",
        "standard_lead": "唐楼。",
        "local_text": "唐樓" * 6,
        "items": [{"question": "？", "spans": [{"text": "唐樓", "start": 0, "end": 2}] * 4}],
    }
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")

    report = pairs_import(project=project, paths=[path])

    assert [(p.line, p.field) for p in report.problems] == [(1, "local_text"), (1, "items[0].spans")]
    assert "IMPORT_MAX_TEXT_CHARS" in report.problems[0].message
    assert "at most 3 (IMPORT_MAX_SPANS_PER_ITEM)" in report.problems[1].message


def test_the_command_names_unknown_regions_and_maps_them_when_asked(nan_project, tmp_path):
    from io import StringIO

    from django.core.management import CommandError, call_command

    paths = []
    for name, data in nan_release().items():
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))

    with pytest.raises(CommandError, match="--map-region FINE=REGION") as refused:
        call_command("pairs_import", nan_project.slug, *paths)
    out = StringIO()
    call_command(
        "pairs_import",
        nan_project.slug,
        *paths,
        "--map-region",
        "Fujian=local",
        "--map-region",
        "Taiwan=standard",
        stdout=out,
    )

    assert "unknown region 'Fujian' (2 records)" in str(refused.value)
    assert "4 pairs created" in out.getvalue()
    nan_project.refresh_from_db()
    assert nan_project.region_vocabulary["Fujian"] == "local"


def test_the_command_prints_the_residue_it_kept(project, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    path = tmp_path / YUE_BASE
    path.write_bytes(cantonese_release()[YUE_BASE])
    out = StringIO()

    call_command("pairs_import", project.slug, str(path), stdout=out)

    assert "warning: zh.zh-yue-YM.json, record '茶餐厅2', field Answer4: has text, but slot 4 has no question" in (
        out.getvalue()
    )


def test_the_import_page_refuses_a_rerun_without_a_mapping_and_keeps_the_choices_made(
    client, nan_project, coordinator, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(coordinator)
    files = [SimpleUploadedFile(name, data) for name, data in nan_release().items()]
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(reverse("import_start", args=[nan_project.slug]), {"files": files, "dry_run": "1"})
    job_id = int(started["Location"].rstrip("/").rsplit("/", 1)[1])
    url = reverse("import_rerun", args=[nan_project.slug, job_id])

    empty = client.post(url, {"region_name": ["Fujian", "Taiwan"], "region_value": ["", ""]})
    wrong = client.post(url, {"region_name": ["Fujian", "Taiwan"], "region_value": ["local", "nearby"]})

    assert empty.status_code == 400 and "Map the regions this project does not know yet" in empty.content.decode()
    page = wrong.content.decode()
    assert wrong.status_code == 400 and "must map to one of the project&#x27;s regions" in page
    assert '<option value="local" selected>' in page  # Fujian's choice is still there
    nan_project.refresh_from_db()
    assert "Fujian" not in nan_project.region_vocabulary
    assert not PagePair.objects.filter(project=nan_project).exists()
