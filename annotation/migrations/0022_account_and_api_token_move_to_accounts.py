from django.db import migrations


class Migration(migrations.Migration):
    """Account and ApiToken now live in the `accounts` app: they leave this app's state only.

    Their tables stay where they are, under their old names; accounts/migrations/0001_initial.py takes them
    into its state with `db_table` set to those names. No table is renamed, dropped or copied.
    """

    dependencies = [
        ("annotation", "0021_account_created_in_project"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="Account"),
                migrations.DeleteModel(name="ApiToken"),
            ],
            database_operations=[],
        ),
    ]
