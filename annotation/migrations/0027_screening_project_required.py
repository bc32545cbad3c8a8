"""Every screening decision now names its project: required, and indexed by project, person and time."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("annotation", "0026_screening_carries_its_project"),
    ]

    operations = [
        migrations.AlterField(
            model_name="screening",
            name="project",
            field=models.ForeignKey(
                db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotation.project"
            ),
        ),
        migrations.AddIndex(
            model_name="screening",
            index=models.Index(fields=["project", "annotator", "created_at"], name="screening_project_idx"),
        ),
    ]
