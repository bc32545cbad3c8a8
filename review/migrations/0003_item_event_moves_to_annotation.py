# ItemEvent is recorded by annotation.lifecycle, below review: the model moves there, its table and rows stay.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0002_agreement_reports"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ItemEvent")],
            database_operations=[],
        ),
    ]
