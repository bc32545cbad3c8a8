"""The wikipedia_collect command, offline against recorded replies."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import PagePair
from tests import factories
from tests.wikiqa.wiki_replay import Replay
from wikiqa import wikipedia
from wikiqa.models import Collection


@pytest.fixture
def bar_project(coordinator):
    return factories.project(coordinator, slug="bar-de", local_language="bar", standard_language="deu")


@pytest.fixture
def replay(monkeypatch, settings):
    settings.WIKIPEDIA_REQUEST_INTERVAL = 0
    settings.WIKIPEDIA_RETRY_WAIT = 0
    replay = Replay("bar_to_de", "bar_redirect", "bar_no_interlanguage_link", "bar_disambiguation")
    original = wikipedia.WikiSession.__init__

    def offline(self, **kwargs):
        original(self, **{**kwargs, "transport": replay.transport})

    monkeypatch.setattr(wikipedia.WikiSession, "__init__", offline)
    return replay


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_command_collects_titles_with_a_progress_bar_and_prints_the_outcomes(bar_project, replay, tmp_path):
    titles = tmp_path / "titles.txt"
    titles.write_text("Weißwurscht\nMünchn\n\nKirtahutschn\nWurz\n", encoding="utf-8")

    out, err = run("wikipedia_collect", bar_project.slug, "--titles", str(titles))

    assert "4/4" in err and "█" in err
    assert "Kept" in out and "Dropped: no standard page" in out and "Dropped: disambiguation page" in out
    assert "new pairs                              2" in out
    assert PagePair.objects.filter(project=bar_project).count() == 2
    assert Collection.objects.get(project=bar_project).status == "done"


def test_running_the_command_twice_creates_no_duplicate_pairs(bar_project, replay, tmp_path):
    titles = tmp_path / "titles.txt"
    titles.write_text("Weißwurscht\n", encoding="utf-8")
    run("wikipedia_collect", bar_project.slug, "--titles", str(titles))

    out, _ = run("wikipedia_collect", bar_project.slug, "--titles", str(titles))

    assert "new pairs                              0" in out
    assert PagePair.objects.filter(project=bar_project).count() == 1


def test_a_cancelled_collection_is_resumed_by_the_command(bar_project, replay):
    collection = Collection.objects.create(
        project=bar_project, local_wiki="bar", standard_wiki="de", status="cancelled", progress_total=1
    )
    collection.titles.create(position=0, title="Weißwurscht")

    out, _ = run("wikipedia_collect", bar_project.slug, "--resume", str(collection.pk))

    assert f"Collection {collection.pk}: done." in out
    assert PagePair.objects.filter(project=bar_project).count() == 1


def test_the_command_names_a_missing_titles_file(bar_project, tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        run("wikipedia_collect", bar_project.slug, "--titles", str(tmp_path / "absent.txt"))


def test_the_command_names_an_unknown_project(db, tmp_path):
    with pytest.raises(CommandError, match="No project with the slug 'nope'"):
        run("wikipedia_collect", "nope", "--titles", str(tmp_path / "t.txt"))
