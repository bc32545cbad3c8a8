# ItemEvent is recorded by annotation.lifecycle, below review: the model moves there, its table and rows stay.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0003_agreement_reports_are_jobs"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ItemEvent")],
            database_operations=[],
        ),
    ]
