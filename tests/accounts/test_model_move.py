"""Account and ApiToken moved from `annotation` to `accounts` by state-only migrations: a database migrated before
the move keeps every row, on the same tables, and the models' content types follow them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone

from accounts.models import Account, ApiToken
from tests import factories

# The moves run no SQL of their own (state-only operations; the content types follow by the ORM), so the
# engine makes no difference: run on the embedded default only (each run migrates back and forth, ~25 s).
pytestmark = pytest.mark.one_engine

BEFORE_THE_MOVE = ("annotation", "0021_account_created_in_project")


@pytest.mark.django_db(transaction=True)
def test_a_database_migrated_before_the_move_keeps_every_account_and_token():
    call_command("migrate", *BEFORE_THE_MOVE, verbosity=0)  # unapplies accounts 0001 and annotation 0022 only
    old = MigrationLoader(connection).project_state(BEFORE_THE_MOVE).apps
    person, coordinator = factories.user("moved"), factories.user("made-it")
    project = factories.project(coordinator, slug="before-the-move")
    chosen = timezone.now() - timedelta(days=3)
    old.get_model("annotation", "Account").objects.create(
        user_id=person.pk,
        must_change_password=True,
        invited_by_id=coordinator.pk,
        created_in_id=project.pk,
        password_set_at=chosen,
    )
    token = old.get_model("annotation", "ApiToken").objects.create(
        user_id=person.pk, digest="d" * 64, prefix="dddddddd", name="laptop", via="page"
    )
    content_type = ContentType.objects.get_by_natural_key("annotation", "apitoken")

    call_command("migrate", verbosity=0)

    account = Account.objects.get(user=person)
    assert (account.must_change_password, account.invited_by_id, account.created_in_id) == (
        True,
        coordinator.pk,
        project.pk,
    )
    assert account.password_set_at == chosen
    assert person.account == account  # the reverse accessor the services use
    moved = ApiToken.objects.get(pk=token.pk)
    assert (moved.user_id, moved.digest, moved.name, moved.via) == (person.pk, "d" * 64, "laptop", "page")
    assert list(person.api_tokens.all()) == [moved]
    # The content type row itself moved (same id), so permissions and admin log entries still point at it.
    assert ContentType.objects.get_for_model(ApiToken).pk == content_type.pk
    assert not ContentType.objects.filter(app_label="annotation", model__in=["account", "apitoken"]).exists()


def test_the_models_keep_the_tables_they_had_in_annotation():
    assert Account._meta.db_table == "annotation_account"
    assert ApiToken._meta.db_table == "annotation_apitoken"
