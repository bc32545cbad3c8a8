from django.db import migrations


class Migration(migrations.Migration):
    """Collection, CollectionTitle and WikiPage now live in the `wikiqa` app: they leave this app's state only.

    Their tables stay where they are, under their old names; wikiqa/migrations/0001_initial.py takes them into its
    state with `db_table` set to those names. No table is renamed, dropped or copied.
    """

    dependencies = [
        ("annotation", "0024_gold_flagged_event_and_revision"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="CollectionTitle"),
                migrations.DeleteModel(name="Collection"),
                migrations.DeleteModel(name="WikiPage"),
            ],
            database_operations=[],
        ),
    ]
