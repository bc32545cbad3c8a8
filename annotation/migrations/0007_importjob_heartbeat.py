from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_project_kind_trivia_entity_revision_content"),
    ]

    operations = [
        migrations.AddField(
            model_name="importjob",
            name="heartbeat_at",
            field=models.DateTimeField(blank=True, help_text="Last sign of life from the worker.", null=True),
        ),
    ]
