"""Every validation judgment, suggestion and use of a suggestion now names its project: required, and indexed by
project."""

import django.db.models.deletion
from django.db import migrations, models


def _project(db_index: bool = True) -> models.ForeignKey:
    return models.ForeignKey(
        db_index=db_index, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotation.project"
    )


class Migration(migrations.Migration):

    dependencies = [
        ("validation", "0008_judgments_and_suggestions_carry_their_project"),
    ]

    operations = [
        migrations.AlterField(model_name="validationjudgment", name="project", field=_project(db_index=False)),
        migrations.AlterField(model_name="suggestion", name="project", field=_project(db_index=False)),
        migrations.AlterField(model_name="suggestionuse", name="project", field=_project()),
        migrations.AddIndex(
            model_name="validationjudgment",
            index=models.Index(fields=["project", "id"], name="vjudgment_project_idx"),
        ),
        migrations.AddIndex(
            model_name="suggestion",
            index=models.Index(fields=["project", "id"], name="suggestion_project_idx"),
        ),
    ]
