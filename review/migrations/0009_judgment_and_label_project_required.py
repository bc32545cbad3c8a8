"""Every judgment, article label and final label now names its project: required, and indexed by project."""

import django.db.models.deletion
from django.db import migrations, models


def _project(db_index: bool = True) -> models.ForeignKey:
    return models.ForeignKey(
        db_index=db_index, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="annotation.project"
    )


class Migration(migrations.Migration):

    dependencies = [
        ("review", "0008_judgments_and_labels_carry_their_project"),
    ]

    operations = [
        migrations.AlterField(model_name="judgment", name="project", field=_project(db_index=False)),
        migrations.AlterField(model_name="articlelabel", name="project", field=_project(db_index=False)),
        migrations.AlterField(model_name="finallabel", name="project", field=_project()),
        migrations.AddIndex(
            model_name="judgment", index=models.Index(fields=["project", "id"], name="judgment_project_idx")
        ),
        migrations.AddIndex(
            model_name="articlelabel", index=models.Index(fields=["project", "created_at"], name="label_project_idx")
        ),
    ]
