"""Collection, CollectionTitle and WikiPage moved from `annotation` to `wikiqa` by state-only migrations: a database
migrated before the move keeps every row, on the same tables, and the models' content types follow them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone

from tests import factories
from wikiqa.models import Collection, CollectionTitle, WikiPage

# The moves run no SQL of their own (state-only operations; the content types follow by the ORM), so the
# engine makes no difference: run on the embedded default only (each run migrates back and forth, ~25 s).
pytestmark = pytest.mark.one_engine

BEFORE_THE_MOVE = ("annotation", "0024_gold_flagged_event_and_revision")


@pytest.mark.django_db(transaction=True)
def test_a_database_migrated_before_the_move_keeps_every_collection_title_and_page():
    call_command("migrate", *BEFORE_THE_MOVE, verbosity=0)  # unapplies wikiqa 0001 and annotation 0025 only
    old = MigrationLoader(connection).project_state(BEFORE_THE_MOVE).apps
    coordinator = factories.user("collector")
    project = factories.project(coordinator, slug="before-the-collections-moved")
    pair = factories.pair(project)
    started = timezone.now() - timedelta(hours=2)
    collection = old.get_model("annotation", "Collection").objects.create(
        project_id=project.pk,
        created_by_id=coordinator.pk,
        status="done",
        attempts=1,
        progress_done=2,
        progress_total=2,
        source="category",
        category="Kategorie:Minga",
        local_wiki="bar",
        standard_wiki="de",
        standard_variant="",
        local_heavy_only=False,
        kept=1,
        created_pairs=1,
        started_at=started,
    )
    kept = old.get_model("annotation", "CollectionTitle").objects.create(
        collection_id=collection.pk,
        position=0,
        title="Minga",
        outcome="kept",
        local_title="Minga",
        standard_title="München",
        local_revision=11,
        standard_revision=22,
        pair_id=pair.pk,
        pair_created=True,
        processed_at=started,
    )
    old.get_model("annotation", "CollectionTitle").objects.create(
        collection_id=collection.pk, position=1, title="Xyz", outcome="page_missing", error="no such page"
    )
    page = old.get_model("annotation", "WikiPage").objects.create(
        wiki="bar", variant="", title="Minga", revision=11, pageid=5, url="https://bar.wikipedia.org/wiki/Minga"
    )
    content_type = ContentType.objects.get_by_natural_key("annotation", "collection")

    call_command("migrate", verbosity=0)

    moved = Collection.objects.get(pk=collection.pk)
    assert (moved.project_id, moved.created_by_id, moved.status, moved.source, moved.category) == (
        project.pk,
        coordinator.pk,
        "done",
        "category",
        "Kategorie:Minga",
    )
    assert (moved.progress_done, moved.kept, moved.created_pairs, moved.dropped) == (2, 1, 1, 1)
    assert moved.started_at == started
    assert list(project.collections.all()) == [moved]  # the reverse accessor the pages use
    titles = list(moved.titles.all())  # ordered by position
    assert [(t.pk, t.title, t.outcome, t.pair_id) for t in titles] == [
        (kept.pk, "Minga", CollectionTitle.Outcome.KEPT, pair.pk),
        (titles[1].pk, "Xyz", CollectionTitle.Outcome.PAGE_MISSING, None),
    ]
    assert (titles[0].standard_title, titles[0].standard_revision, titles[1].error) == ("München", 22, "no such page")
    cached = WikiPage.objects.get(pk=page.pk)
    assert (cached.wiki, cached.title, cached.revision, cached.pageid) == ("bar", "Minga", 11, 5)
    # The content type rows themselves moved (same id), so permissions and admin log entries still point at them.
    assert ContentType.objects.get_for_model(Collection).pk == content_type.pk
    assert not ContentType.objects.filter(
        app_label="annotation", model__in=["collection", "collectiontitle", "wikipage"]
    ).exists()


def test_the_models_keep_the_tables_they_had_in_annotation():
    assert Collection._meta.db_table == "annotation_collection"
    assert CollectionTitle._meta.db_table == "annotation_collectiontitle"
    assert WikiPage._meta.db_table == "annotation_wikipage"
    assert (Collection._meta.app_label, Collection._meta.label) == ("wikiqa", "wikiqa.Collection")
