"""The management commands: project_create, pairs_import and demo_setup."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import Count

from annotation.models import Membership, PagePair, Project, QAItem
from exports.models import Release
from multichoice.models import TriviaItem
from review.models import Judgment
from tests import factories


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def write_pairs(tmp_path, *rows, name="pairs.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def pair_row(title: str, **fields) -> dict:
    return {
        "local_title": title,
        "standard_title": title + " (de)",
        "local_url": "https://bar.wikipedia.org/wiki/X",
        "standard_url": "https://de.wikipedia.org/wiki/X",
        "local_lead": "Da Maibaam is a hoha Baamstamm.",
        "standard_lead": "Der Maibaum.",
        **fields,
    }


# project_create


def test_project_create_prints_the_project_url_and_makes_the_coordinator(coordinator):
    output = run("project_create", "nap-ita", "--name", "Neapolitan–Italian", "--local", "nap", "--standard", "ita",
                 "--coordinator", "coordinator")  # fmt: skip

    project = Project.objects.get(slug="nap-ita")
    assert "http://127.0.0.1:8000/projects/nap-ita/" in output
    assert (project.local_wiki, project.standard_wiki) == ("nap", "it")
    assert project.created_by == coordinator
    assert Membership.objects.get(project=project, user=coordinator).is_coordinator


def test_project_create_takes_wiki_codes_when_given(db):
    run("project_create", "yue-cmn", "--name", "Y", "--local", "yue", "--standard", "cmn",
        "--standard-wiki", "zh-classical")  # fmt: skip

    project = Project.objects.get(slug="yue-cmn")
    assert (project.local_wiki, project.standard_wiki) == ("zh-yue", "zh-classical")


def test_project_create_refuses_an_unknown_language_code(db):
    with pytest.raises(CommandError, match="Unknown language code 'xx'"):
        run("project_create", "xx-deu", "--name", "X", "--local", "xx", "--standard", "deu")

    assert not Project.objects.exists()


def test_project_create_refuses_an_existing_slug(project):
    with pytest.raises(CommandError, match="slug 'yue-cmn' already exists"):
        run("project_create", "yue-cmn", "--name", "Again", "--local", "yue", "--standard", "cmn")

    assert Project.objects.get(slug="yue-cmn").name != "Again"


def test_project_create_refuses_an_unknown_coordinator(db):
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        run("project_create", "bar-deu", "--name", "B", "--local", "bar", "--standard", "deu",
            "--coordinator", "nobody")  # fmt: skip

    assert not Project.objects.exists()


def test_project_create_refuses_a_slug_that_cannot_be_in_a_url(db):
    with pytest.raises(CommandError, match="not a slug"):
        run("project_create", "bar deu/1", "--name", "B", "--local", "bar", "--standard", "deu")


# pairs_import


def test_pairs_import_stores_texts_byte_for_byte(project, tmp_path):
    lead = "𠮶間\t舖頭\n喺 深水埗  \r\n𨋢 "
    path = write_pairs(tmp_path, pair_row("Maibaam", local_lead=lead), pair_row("Kirta"))

    output = run("pairs_import", "yue-cmn", str(path))

    assert "2 pairs created, 0 already present" in output
    assert PagePair.objects.get(project=project, local_title="Maibaam").local_lead.encode() == lead.encode()


def test_pairs_import_twice_creates_nothing_new(project, tmp_path):
    path = write_pairs(tmp_path, pair_row("Maibaam"), pair_row("Kirta"))
    run("pairs_import", "yue-cmn", str(path))

    output = run("pairs_import", "yue-cmn", str(path))

    assert "0 pairs created, 2 already present" in output
    assert project.pairs.count() == 2


def test_pairs_import_lists_every_problem_and_writes_nothing(project, tmp_path):
    missing = pair_row("Kirta")
    del missing["standard_lead"]
    path = write_pairs(tmp_path, pair_row("Maibaam"), missing, pair_row("Maibaam"))
    with path.open("a", encoding="utf-8") as f:
        f.write('{"local_title": \n')

    with pytest.raises(CommandError) as refused:
        run("pairs_import", "yue-cmn", str(path))

    message = str(refused.value)
    assert "3 problems" in message
    assert "line 2, field standard_lead: is missing" in message
    assert "line 3, field local_title: 'Maibaam' is already on line 1" in message
    assert "line 4: invalid JSON: Expecting value at column 17" in message
    assert not project.pairs.exists()


def test_pairs_import_refuses_an_oversized_file(project, tmp_path, settings):
    settings.IMPORT_MAX_BYTES = 10
    path = write_pairs(tmp_path, pair_row("Maibaam"))

    with pytest.raises(CommandError, match="more than the import limit of 10 bytes"):
        run("pairs_import", "yue-cmn", str(path))

    assert not project.pairs.exists()


def test_pairs_import_refuses_a_non_utf8_file(project, tmp_path):
    path = tmp_path / "cp1252.jsonl"
    path.write_bytes(json.dumps(pair_row("Weißwurscht"), ensure_ascii=False).encode("cp1252") + b"\n")

    with pytest.raises(CommandError, match=r"line 1: not valid UTF-8: byte 0xdf at byte offset 20"):
        run("pairs_import", "yue-cmn", str(path))

    assert not project.pairs.exists()


def test_pairs_import_names_an_unknown_project(db, tmp_path):
    path = write_pairs(tmp_path, pair_row("Maibaam"))

    with pytest.raises(CommandError, match="No project with the slug 'nope'"):
        run("pairs_import", "nope", str(path))


def test_pairs_import_names_a_missing_file(project, tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        run("pairs_import", "yue-cmn", str(tmp_path / "absent.jsonl"))


def test_pairs_import_dry_run_writes_nothing(project, tmp_path):
    path = write_pairs(tmp_path, pair_row("Maibaam"), pair_row("Kirta"))

    output = run("pairs_import", "yue-cmn", str(path), "--dry-run")

    assert "Dry run" in output
    assert "2 pairs would be created" in output
    assert not project.pairs.exists()


# demo_setup


def demo_counts() -> dict[str, int]:
    return {
        "users": get_user_model().objects.count(),
        "projects": Project.objects.count(),
        "memberships": Membership.objects.count(),
        "pairs": PagePair.objects.filter(project__kind=Project.Kind.WIKIPEDIA_QA).count(),
        "items": QAItem.objects.count(),
        "judgments": Judgment.objects.count(),
        "releases": Release.objects.count(),
    }


def test_demo_setup_twice_gives_the_same_data(db):
    first_output = run("demo_setup")
    first = demo_counts()

    second_output = run("demo_setup")

    assert demo_counts() == first
    kinds = sorted(Project.objects.values_list("kind", flat=True))
    assert kinds == ["entity_qa", "trivia", "validation", "wikipedia_qa", "wikipedia_qa", "wikipedia_qa"]
    assert 15 <= first["pairs"] <= 18
    # two coordinators, two annotators, the reviewer and the researcher in each project
    assert first["memberships"] == 6 * 6
    assert (
        "localqa-demo" in first_output
        and "annotator1" in first_output
        and "coordinator2" in first_output
        and "researcher" in first_output
    )
    assert "http://127.0.0.1:8000/accounts/login/" in first_output
    for url in ("/projects/yue-cmn/", "/projects/doha-val/validation/", "/projects/bavaria-trivia/trivia/",
                "/projects/bavaria-companies/entities/"):  # fmt: skip
        assert f"http://127.0.0.1:8000{url}" in first_output
    assert "0 pairs created" in second_output
    assert "doha-val: exists; left as it is." in second_output


def test_demo_projects_have_work_in_every_state(db):
    run("demo_setup")

    def statuses(slug: str) -> dict[str, int]:
        items = QAItem.objects.filter(project__slug=slug)
        return dict(items.values_list("status").annotate(n=Count("id")).order_by())

    assert statuses("yue-cmn") == {"accepted": 1, "needs_rewrite": 1, "draft": 1}
    assert set(PagePair.objects.filter(project__slug="yue-cmn").values_list("status", flat=True)) == {
        "new", "annotating", "submitted"
    }  # fmt: skip
    assert statuses("bar-deu") == {"submitted": 2}
    assert statuses("doha-val") == {"accepted": 2, "submitted": 4}
    assert statuses("bavaria-trivia") == {"accepted": 3, "needs_rewrite": 1, "submitted": 2}
    assert TriviaItem.objects.filter(translation_status="done").count() == 1
    entity = statuses("bavaria-companies")
    assert (entity["accepted"], entity["rejected"]) == (1, 1) and entity["submitted"] > 0
    published = set(Release.objects.filter(status=Release.Status.DONE).values_list("project__slug", flat=True))
    assert published == {"yue-cmn", "doha-val", "bavaria-trivia", "bavaria-companies"}
    # the flagged item carries the reviewer's comment, which its author sees on the project page
    flagged = Judgment.objects.get(item__project__slug="yue-cmn", verdict="flag")
    assert flagged.item.author.username == "annotator1" and "stands on its own" in flagged.comment


def test_demo_setup_refuses_a_demo_slug_taken_by_another_kind(db, coordinator):
    factories.project(coordinator, slug="doha-val")

    with pytest.raises(CommandError, match="'doha-val' exists of another kind"):
        run("demo_setup")


def test_demo_setup_creates_usable_logins_with_the_right_roles(db, client):
    run("demo_setup")

    coordinator = get_user_model().objects.get(username="coordinator")
    assert coordinator.has_perm("annotation.add_project")
    assert get_user_model().objects.get(username="admin").is_superuser
    assert client.login(username="annotator1", password="localqa-demo")
    roles = {(m.project.slug, m.user.username): m.roles for m in Membership.objects.select_related("project", "user")}
    assert roles[("bar-deu", "reviewer")] == ["reviewer"]
    assert roles[("arz-arb", "annotator2")] == ["annotator"]
    assert roles[("yue-cmn", "coordinator")] == ["coordinator"]
    assert {roles[(slug, "researcher")][0] for slug in ("yue-cmn", "bar-deu", "arz-arb")} == {"researcher"}
    assert client.login(username="researcher", password="localqa-demo")


def test_demo_setup_leaves_an_existing_password_alone(db):
    get_user_model().objects.create_user("admin", password="my-own-secret-1")

    run("demo_setup")

    admin = get_user_model().objects.get(username="admin")
    assert admin.check_password("my-own-secret-1")
    assert not admin.is_superuser


def test_demo_projects_are_local_heavy_in_three_scripts(db):
    run("demo_setup")

    pairs = list(PagePair.objects.filter(project__kind=Project.Kind.WIKIPEDIA_QA).select_related("project"))
    assert all(p.local_lead_length > p.standard_lead_length for p in pairs)
    assert all(p.source == PagePair.Source.DEMO for p in pairs)
    cantonese = [p.local_lead for p in pairs if p.project.slug == "yue-cmn"]
    assert any(any(ord(ch) > 0xFFFF for ch in lead) for lead in cantonese)
    assert "𨋢" in "".join(cantonese)
    assert Project.objects.get(slug="arz-arb").local.direction == "rtl"
    assert any(p.local_text for p in pairs if p.project.slug == "bar-deu")
    assert "lead QA" in Project.objects.get(slug="yue-cmn").guidelines
